#ifndef MENTAT_QUERY_EXECUTION_PLAN_RUNNER_H_
#define MENTAT_QUERY_EXECUTION_PLAN_RUNNER_H_

#include <vector>

#include "absl/status/status.h"
#include "mentat/edn/edn_value.h"
#include "mentat/query/query_engine.h"
#include "mentat/storage/db.h"
#include "planner/explain.h"
#include "planner/plan.h"

namespace mentat::query::execution {

// Runs a planned query on `view` and streams its rows to `sink`: binds the
// inputs, answers from the statistics when the plan allows it and the
// basis is current, else runs the :where pipeline into the projection.
// Everything it makes lives on this call's stack; the plan is only read,
// so any number of threads may run the same plan at once. With `profile`,
// fills in rows and times per step.
[[nodiscard]] absl::Status RunPlan(const planner::QueryPlan& plan,
                                   const storage::DbView& view,
                                   const std::vector<edn::EdnValue>& inputs,
                                   const QueryOptions& options, RowSink* sink,
                                   planner::PlanProfile* profile);

}  // namespace mentat::query::execution

#endif  // MENTAT_QUERY_EXECUTION_PLAN_RUNNER_H_
