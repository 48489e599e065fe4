#ifndef MENTAT_QUERY_PLANNER_QUERY_PLANNER_H_
#define MENTAT_QUERY_PLANNER_QUERY_PLANNER_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "mentat/query/ast.h"
#include "mentat/storage/schema.h"
#include "mentat/storage/statistics.h"
#include "planner/plan.h"

namespace mentat::query::planner {

// Plans a parsed and validated query against a schema and statistics.
// `query` and `rules` are only read while planning (the plan keeps no
// pointer into them). The query must have passed ParseQuery and
// ValidateQuery against the same schema and rules: the planner does not
// repeat their checks (names and arities of functions, aggregates and
// rules, attribute constants, pull patterns, :order, :limit, :keys), and
// an unvalidated query is a caller's bug. Errors are InvalidArgument, for
// what only planning finds: insufficient binding, sources other than $,
// variables bound by two inputs, constants that name no value of their
// attribute, non-constant attributes of get-else, get-some and missing?,
// fulltext of an attribute that is not :db/fulltext, recursion through
// not.
[[nodiscard]] absl::StatusOr<std::unique_ptr<QueryPlan>> PlanQuery(
    const ParsedQuery& query, const std::vector<Rule>& rules,
    const std::shared_ptr<const storage::Schema>& schema,
    const storage::Statistics& stats, const PlannerOptions& options = {});

// True if rows of `scope` projected onto `projected` can hold duplicates
// (the projection drops a variable or a blank that the projected ones do
// not determine), on a basis other than history.
bool ProjectionMayDuplicate(const ScopePlan& scope,
                            const std::vector<Slot>& projected);

}  // namespace mentat::query::planner

#endif  // MENTAT_QUERY_PLANNER_QUERY_PLANNER_H_
