#ifndef MENTAT_QUERY_PULL_PULL_RUNNER_H_
#define MENTAT_QUERY_PULL_PULL_RUNNER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "execution/exec_context.h"
#include "mentat/edn/edn_value.h"
#include "mentat/storage/datom_cursor.h"
#include "mentat/storage/db.h"
#include "pull/pull_plan.h"

namespace mentat::query::pull_internal {

// Pulls entities through one compiled plan at one DbView, keeping its
// cursors (one EAVT, one VAET, made on first use) between entities.
//
// A pull reads the entity's EAVT range once, in attribute order, walking
// the pattern's forward specs in step (skipping to the next wanted
// attribute when the gap is long), then reads each reverse spec's VAET
// range. Nested entities are pulled only after their parent's reads are
// done, so the same two cursors serve every level.
//
// Limits: every datom read and every entity expanded ticks `ctx`
// (deadline, cancel flag, QueryOptions::max_rows_scanned), and the result
// is charged to `ctx`'s memory budget while it is built and checked
// against QueryOptions::max_pull_bytes, so a pull that explodes (recursion
// over a dense graph: each entity is expanded once per path, and a DAG has
// exponentially many) stops promptly, holding at most about the cap.
//
// Not thread-safe: one runner per thread.
class PullRunner {
 public:
  // `ctx` is not owned and must outlive the runner.
  PullRunner(storage::DbView view, std::unique_ptr<PullPlan> plan,
             execution::ExecContext* ctx);

  // Checks the view and compiles `pattern` (see PullExecutor::Create for
  // the errors), for a runner pulling under `ctx`.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<PullRunner>> Create(
      const storage::DbView& view, const PullPattern& pattern,
      execution::ExecContext* ctx);

  // The map for entity `e` (see Pull in pull.h), and in `*bytes` its size
  // as max_pull_bytes counts it. The result's charge to the memory budget
  // is released when Pull returns: a caller that keeps results charges
  // them itself. DataLoss/Unavailable from storage; DeadlineExceeded,
  // Cancelled, ResourceExhausted (memory budget, scan limit, size cap)
  // from the limits.
  [[nodiscard]] absl::StatusOr<edn::EdnValue> Pull(storage::EntityId e,
                                                   size_t* bytes);

  // Bytes already returned that count against max_pull_bytes together
  // with the next results (PullMany's earlier results). Default 0.
  void set_bytes_before(size_t bytes) { bytes_before_ = bytes; }

 private:
  // Where a value of a nested entity goes once it is pulled.
  struct Deferred {
    int slot;  // >= 0: index of the spec; < 0: -1 - index into kv
    int item;  // index in the vector value, or -1 for a single value
    storage::EntityId target;
    const PlanAttr* spec;  // null: a component under the wildcard
  };

  // The result of one entity while it is being built.
  struct EntityState {
    std::vector<edn::EdnValue> values;  // per spec
    std::vector<int64_t> counts;        // values per spec
    std::vector<edn::EdnValue> kv;      // wildcard entries, key/value
    std::vector<Deferred> deferred;
    bool found = false;  // the entity has a datom at this basis
  };

  [[nodiscard]] absl::StatusOr<edn::EdnValue> PullEntity(storage::EntityId e,
                                                         const PlanPattern& p);
  // Counts `v` into the result's size (settled by the next Step).
  void Grow(const edn::EdnValue& v) {
    grown_ += sizeof(edn::EdnValue) + v.text().size();
  }
  // Once per datom read or entity expanded: ticks the context, and settles
  // what Grow counted against the memory budget and the size cap.
  [[nodiscard]] absl::Status Step();
  [[nodiscard]] absl::Status ScanForward(storage::EntityId e,
                                         const PlanPattern& p, EntityState* st);
  [[nodiscard]] absl::Status ScanReverse(storage::EntityId e,
                                         const PlanPattern& p, EntityState* st);
  // Moves `c` to the first datom of entity `e` whose attribute is >=
  // `a_min`: a few Next() calls, then a seek.
  void SkipTo(storage::DatomCursor& c, storage::EntityId e,
              storage::EntityId a_min);
  void AddSlotValue(const storage::Value& v, const PlanAttr& a, int slot,
                    EntityState* st);
  void AddWildcardValue(const storage::Value& v, const storage::Attribute& attr,
                        size_t index, EntityState* st);
  // The nested map of a deferred ref.
  [[nodiscard]] absl::StatusOr<edn::EdnValue> Expand(storage::EntityId target,
                                                     const PlanAttr* spec);
  // {:db/id N}, with :db/ident when the entity has one.
  edn::EdnValue RefMap(storage::EntityId target);
  bool Active(const PlanAttr& a) const {
    return !a.recursive || a.max_depth < 0 ||
           depth_[a.recursion_slot] < a.max_depth;
  }
  bool OnPath(storage::EntityId e) const;
  storage::DatomCursor& Eavt();
  storage::DatomCursor& Vaet();

  storage::DbView view_;
  std::unique_ptr<PullPlan> plan_;
  execution::ExecContext* ctx_;
  size_t bytes_before_ = 0;
  // Of the pull running now: bytes charged to ctx_, bytes counted but not
  // yet charged, and entities expanded (for the size cap's message).
  size_t charged_ = 0;
  size_t grown_ = 0;
  uint64_t entities_ = 0;
  std::unique_ptr<storage::DatomCursor> eavt_;
  std::unique_ptr<storage::DatomCursor> vaet_;
  std::vector<storage::EntityId> path_;  // entities being pulled, outermost
                                         // first
  std::vector<int64_t> depth_;           // per recursive spec
  std::string key_;                      // scratch for seek keys
  const edn::EdnValue db_id_key_;
  const edn::EdnValue db_ident_key_;
};

}  // namespace mentat::query::pull_internal

#endif  // MENTAT_QUERY_PULL_PULL_RUNNER_H_
