#ifndef MENTAT_BENCH_SUITE_MIXED_POOL_H_
#define MENTAT_BENCH_SUITE_MIXED_POOL_H_

// The issues the `mixed` scenario's writer changes, and what it changed.
//
// The writer swaps the states and priorities of these issues in ways that
// keep every aggregate check exact (see MixedWriter). So that the other
// checks stay exact too, the pool holds only issues that no check reads one
// by one: none assigned to a probe user (q2, as_of q2), none with a history
// change (as_of and since), and pull skips them. Their writes persist in the
// database, so their state and priority, and whether their state changed
// after t_since (since(t_since) then counts them), persist across runs in
// DATA/mixed-<db>.state; `mentat-bench load` removes it.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "workload.h"

namespace mentat::bench {

class MixedPool {
 public:
  struct Member {
    int64_t idx = 0;  // issue index
    int64_t id = 0;   // its entity id
    int state = 0;    // index into kStates
    int64_t priority = 1;
    bool changed_after_since = false;  // its state was written after t_since
  };

  // The pool of `scale` (the same issues every time), in the state
  // DATA/mixed-<database>.state recorded, or as generated when there is
  // none. FailedPrecondition if an earlier mixed run did not finish (the
  // database may hold writes the file does not know): load again.
  [[nodiscard]] static absl::StatusOr<MixedPool> Open(
      const std::string& data, const std::string& database,
      const WorkloadScale& scale, const std::vector<int64_t>& probes,
      const std::vector<int64_t>& issue_ids);

  // Removes DATA/mixed-<database>.state (a fresh load).
  static void Forget(const std::string& data, const std::string& database);

  // Writes the state file. `unfinished` marks writes in progress (or of
  // unknown outcome): a later Open refuses the file.
  [[nodiscard]] absl::Status Save(bool unfinished) const;

  // True if issue `idx` is in the pool (pull skips it).
  bool Contains(int64_t idx) const {
    return idx >= 0 && idx < static_cast<int64_t>(member_of_.size()) &&
           member_of_[static_cast<size_t>(idx)];
  }

  // Members whose state changed after t_since: what since(t_since) finds
  // beyond the dataset's truth.
  int64_t ChangedAfterSince() const;

  std::vector<Member>& members() { return members_; }
  const std::vector<Member>& members() const { return members_; }

 private:
  std::string path_;
  std::vector<Member> members_;
  std::vector<bool> member_of_;  // by issue index
};

}  // namespace mentat::bench

#endif  // MENTAT_BENCH_SUITE_MIXED_POOL_H_
