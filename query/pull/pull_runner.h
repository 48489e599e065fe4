#ifndef MENTAT_QUERY_PULL_PULL_RUNNER_H_
#define MENTAT_QUERY_PULL_PULL_RUNNER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "mentat/query/edn/edn_value.h"
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
// Not thread-safe: one runner per thread.
class PullRunner {
 public:
  PullRunner(storage::DbView view, std::unique_ptr<PullPlan> plan);

  // The map for entity `e` (see Pull in pull.h). DataLoss/Unavailable
  // from storage.
  absl::StatusOr<edn::EdnValue> Pull(storage::EntityId e);

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

  absl::StatusOr<edn::EdnValue> PullEntity(storage::EntityId e,
                                           const PlanPattern& p);
  absl::Status ScanForward(storage::EntityId e, const PlanPattern& p,
                           EntityState* st);
  absl::Status ScanReverse(storage::EntityId e, const PlanPattern& p,
                           EntityState* st);
  // Moves `c` to the first datom of entity `e` whose attribute is >=
  // `a_min`: a few Next() calls, then a seek.
  void SkipTo(storage::DatomCursor& c, storage::EntityId e,
              storage::EntityId a_min);
  void AddSlotValue(const storage::Value& v, const PlanAttr& a, int slot,
                    EntityState* st);
  void AddWildcardValue(const storage::Value& v, const storage::Attribute& attr,
                        size_t index, EntityState* st);
  // The nested map of a deferred ref.
  absl::StatusOr<edn::EdnValue> Expand(storage::EntityId target,
                                       const PlanAttr* spec);
  // {:db/id N}, with :db/ident when the entity has one.
  edn::EdnValue RefMap(storage::EntityId target) const;
  bool Active(const PlanAttr& a) const {
    return !a.recursive || a.max_depth < 0 ||
           depth_[a.recursion_slot] < a.max_depth;
  }
  bool OnPath(storage::EntityId e) const;
  storage::DatomCursor& Eavt();
  storage::DatomCursor& Vaet();

  storage::DbView view_;
  std::unique_ptr<PullPlan> plan_;
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
