#ifndef MENTAT_QUERY_EXECUTION_COUNT_SCAN_H_
#define MENTAT_QUERY_EXECUTION_COUNT_SCAN_H_

#include "absl/status/statusor.h"
#include "execution/exec_context.h"
#include "execution/result_emitter.h"
#include "planner/plan.h"

namespace mentat::query::execution {

// Answers the counts of a StatsShortcut (`[:find ?v (count ?e) :where
// [?e :a ?v]]` and friends) by one pass over the attribute's AVET keys,
// when the statistics cannot (a basis other than current, values not
// tracked, statistics turned off). Runs of equal value bytes are counted
// without decoding the datoms or binding rows. Returns false if the plan
// has no such shortcut or the basis is history (whose datoms come twice);
// the caller then runs the plan. Errors: the cursor's, DeadlineExceeded,
// Cancelled, or what the emitter returns.
[[nodiscard]] absl::StatusOr<bool> CountByScan(const planner::QueryPlan& plan,
                                               ExecContext* ctx,
                                               ResultEmitter* emitter);

}  // namespace mentat::query::execution

#endif  // MENTAT_QUERY_EXECUTION_COUNT_SCAN_H_
