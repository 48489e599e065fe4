#ifndef MENTAT_QUERY_PULL_H_
#define MENTAT_QUERY_PULL_H_

#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "mentat/query/edn/edn_value.h"
#include "mentat/query/pull_pattern.h"
#include "mentat/storage/db.h"

namespace mentat::query {

// Checks a pull pattern against a schema: every attribute exists (reverse
// refs must name ref attributes), options fit (limit on cardinality-many or
// reverse only is allowed anywhere, as Datomic). InvalidArgument names the
// attribute and its position.
absl::Status ValidatePullPattern(const PullPattern& pattern,
                                 const storage::Schema& schema);

// Pulls `pattern` from entity `e` at `view` (any basis, as_of included).
// The result is an EDN map keyed by attribute keywords (or :as keys);
// cardinality-many and reverse attributes give vectors; refs give
// {:db/id N} maps (nested patterns and components give nested maps); an
// entity with nothing matching gives {} (Datomic gives nil for a missing
// entity in find specs; the caller decides). Errors: InvalidArgument for
// unknown attributes, DataLoss/Unavailable from storage.
absl::StatusOr<edn::EdnValue> Pull(const storage::DbView& view,
                                   const PullPattern& pattern,
                                   storage::EntityId e);

// Pull for many entities, in order (one map per entity).
absl::StatusOr<std::vector<edn::EdnValue>> PullMany(
    const storage::DbView& view, const PullPattern& pattern,
    const std::vector<storage::EntityId>& entities);

// Converts between storage values and EDN: refs and longs become integers,
// keywords keywords, instants #inst, uuids #uuid, bigints N, bigdecs M,
// bytes a #bytes tagged base64 string.
edn::EdnValue ValueToEdn(const storage::Value& v);

}  // namespace mentat::query

#endif  // MENTAT_QUERY_PULL_H_
