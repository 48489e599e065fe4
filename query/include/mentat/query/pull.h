#ifndef MENTAT_QUERY_PULL_H_
#define MENTAT_QUERY_PULL_H_

#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "mentat/edn/edn_value.h"
#include "mentat/query/pull_pattern.h"
#include "mentat/query/query_engine.h"
#include "mentat/storage/db.h"

namespace mentat::query {

// Checks a pull pattern against a schema: every attribute exists (reverse
// refs must name ref attributes), options fit (limit on cardinality-many or
// reverse only is allowed anywhere, as Datomic). InvalidArgument names the
// attribute and its position.
[[nodiscard]] absl::Status ValidatePullPattern(const PullPattern& pattern,
                                               const storage::Schema& schema);

// Pulls `pattern` from entity `e` at `view` (any basis, as_of included).
// The result is an EDN map keyed by attribute keywords (or :as keys);
// cardinality-many and reverse attributes give vectors; refs give
// {:db/id N} maps (nested patterns and components give nested maps); an
// entity with nothing matching gives {} (Datomic gives nil for a missing
// entity in find specs; the caller decides). Errors: InvalidArgument for
// unknown attributes and a history view, FailedPrecondition for an as_of
// before the history retention horizon (PullExecutor::Create),
// DataLoss/Unavailable from storage.
//
// Details, following Datomic's pull:
//  - `*` gives :db/id (when the entity has any datom at the basis) and every
//    attribute of the entity, cardinality-many ones as vectors without a
//    limit; component refs are pulled whole, recursively; other refs are
//    {:db/id N}. An explicit spec next to `*` replaces the wildcard's
//    default for its attribute.
//  - A ref to an entity that has a :db/ident (an enum value) gives
//    {:db/id N :db/ident :the/ident}, a convenience beyond Datomic's
//    {:db/id N}.
//  - A reverse ref (:ns/_attr) gives a vector of the referring entities,
//    or for a component attribute the one owner as a single map.
//  - Recursion `{:a ...}` / `{:a n}` applies the enclosing pattern again to
//    the referenced entities. An entity already on the path from the root
//    comes back as {:db/id N} (no cycles), as Datomic stops `...` at
//    cycles: each entity is expanded at most once per path, but once on
//    every path that reaches it (a DAG's shared entities appear under each
//    parent, so a dense DAG has exponentially many; the limits below stop
//    it). With a depth n, the attribute is left out n levels down. Results
//    nest at most 256 entities deep; deeper entities come back as
//    {:db/id N}.
//  - Cardinality-many values and reverse refs come in index order (by
//    value, by referring entity id), :limit (default 1000) cutting there.
//  - Any basis but history: kHistory is InvalidArgument ("pull is not
//    defined on a history database").
//
// Limits, from `limits` (QueryOptions' deadline, cancelled,
// memory_budget_bytes, max_rows_scanned, max_pull_bytes; batch_rows,
// profile and use_statistics mean nothing here): DeadlineExceeded,
// Cancelled, or ResourceExhausted (memory budget, scan limit, size cap)
// with a message saying which, checked while the result is built.
[[nodiscard]] absl::StatusOr<edn::EdnValue> Pull(
    const storage::DbView& view, const PullPattern& pattern,
    storage::EntityId e, const QueryOptions& limits = {});

// Pull for many entities, in order (one map per entity). The limits cover
// the whole call: the size cap and the memory budget count all the results
// together.
[[nodiscard]] absl::StatusOr<std::vector<edn::EdnValue>> PullMany(
    const storage::DbView& view, const PullPattern& pattern,
    const std::vector<storage::EntityId>& entities,
    const QueryOptions& limits = {});

namespace pull_internal {
class PullRunner;
}
namespace execution {
class ExecContext;
}

// A pull pattern resolved against one view, for pulling many entities one
// at a time (the query engine's `(pull ?e pattern)` per row): attribute ids
// are looked up once, and the cursors are reused from entity to entity.
// Pull() and PullMany() above are one-shot wrappers around it.
//
// An executor serves one response: `limits` apply to all its pulls
// together (the deadline and scan limit to their work, the size cap and
// memory budget to every result it returned, as a PullMany response holds
// them all). Make a new one per response.
//
// Not thread-safe: use one executor per thread. The view (and so its Db)
// is kept alive by the executor.
class PullExecutor {
 public:
  // InvalidArgument for a history view ("pull is not defined on a history
  // database") and for everything ValidatePullPattern rejects;
  // FailedPrecondition for an as_of before the history retention horizon
  // (Db::CheckBasis). `limits.cancelled`, if set, must outlive the
  // executor.
  [[nodiscard]] static absl::StatusOr<PullExecutor> Create(
      const storage::DbView& view, const PullPattern& pattern,
      const QueryOptions& limits = {});

  PullExecutor(PullExecutor&&) noexcept;
  PullExecutor& operator=(PullExecutor&&) noexcept;
  ~PullExecutor();

  // The map for entity `e`, as Pull() describes. DataLoss/Unavailable from
  // storage; DeadlineExceeded, Cancelled or ResourceExhausted from the
  // limits. After an error the executor should not be used again.
  [[nodiscard]] absl::StatusOr<edn::EdnValue> Pull(storage::EntityId e);

  // Datoms read and entities expanded so far (what the scan limit counts).
  uint64_t rows_scanned() const;

 private:
  PullExecutor(std::unique_ptr<execution::ExecContext> ctx,
               std::unique_ptr<pull_internal::PullRunner> runner);
  std::unique_ptr<execution::ExecContext> ctx_;
  std::unique_ptr<pull_internal::PullRunner> runner_;
  size_t returned_bytes_ = 0;
};

// Converts between storage values and EDN: refs and longs become integers,
// keywords keywords, instants #inst, uuids #uuid, bigints N, bigdecs M,
// bytes a #bytes tagged base64 string.
edn::EdnValue ValueToEdn(const storage::Value& v);

}  // namespace mentat::query

#endif  // MENTAT_QUERY_PULL_H_
