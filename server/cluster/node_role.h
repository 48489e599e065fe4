#ifndef MENTAT_SERVER_CLUSTER_NODE_ROLE_H_
#define MENTAT_SERVER_CLUSTER_NODE_ROLE_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"

namespace mentat::server::cluster {

// A cluster node's role as the election (ClusterNode) last set it, and the
// gate every write passes (CheckWritable). Thread-safe: the election
// thread sets it, RPC handlers read it.
class NodeRole {
 public:
  enum class Kind {
    // No leader known yet (starting, or an election in progress).
    kCandidate,
    // Holds the leader key: takes writes until its lease deadline.
    kPrimary,
    // Follows the primary the leader key names.
    kReplica,
  };
  struct View {
    Kind kind = Kind::kCandidate;
    int64_t term = 0;
    // The primary's gRPC address (this node's own when primary).
    std::string primary;
    // Why a candidate has no primary yet (for the refusal).
    std::string why;
  };

  explicit NodeRole(std::string cluster) : cluster_(std::move(cluster)) {}

  // OK while this node is primary and its lease deadline has not passed;
  // else why `what` ("Transact") is refused: FailedPrecondition naming
  // the primary at a replica, Unavailable while there is none or this
  // primary's lease may have lapsed (a client retries, after the
  // election, at the primary).
  [[nodiscard]] absl::Status CheckWritable(std::string_view what) const;

  // Primary of `term`, taking writes until `deadline`.
  void SetPrimary(int64_t term, std::string self,
                  std::chrono::steady_clock::time_point deadline);
  // The lease was renewed: writes go on until `deadline` (primaries only).
  void ExtendDeadline(std::chrono::steady_clock::time_point deadline);
  void SetReplica(int64_t term, std::string primary);
  void SetCandidate(std::string why);

  View Get() const;
  const std::string& cluster() const { return cluster_; }

 private:
  const std::string cluster_;
  mutable absl::Mutex mu_;
  View view_ ABSL_GUARDED_BY(mu_);
  // steady_clock ticks; read without the lock on every write.
  std::atomic<int64_t> deadline_{0};
};

const char* KindName(NodeRole::Kind kind);

}  // namespace mentat::server::cluster

#endif  // MENTAT_SERVER_CLUSTER_NODE_ROLE_H_
