#ifndef MENTAT_QUERY_EXECUTION_PIPELINE_H_
#define MENTAT_QUERY_EXECUTION_PIPELINE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "execution/exec_context.h"
#include "execution/operator.h"
#include "planner/plan.h"

namespace mentat::query::execution {

class FixpointEngine;
class CallSiteOp;

// The operators of one scope's steps, chained in order, the last one
// feeding `terminal`. Inside a rule body `engine` is the fixpoint the body
// belongs to (positive calls become its call sites, listed in `sites`);
// at the top level it is null and calls get engines of their own.
struct Pipeline {
  std::vector<std::unique_ptr<Operator>> ops;
  std::vector<CallSiteOp*> sites;
  Operator* head = nullptr;  // ops[0], or the terminal when empty
};

// `stats`, when not null, gets one entry per step (for profiles).
[[nodiscard]] absl::StatusOr<std::unique_ptr<Pipeline>> BuildPipeline(
    ExecContext* ctx, const std::vector<planner::TablePlan>& tables,
    const planner::ScopePlan& scope, FixpointEngine* engine, Operator* terminal,
    std::vector<StepStats>* stats, const std::string& owner);

}  // namespace mentat::query::execution

#endif  // MENTAT_QUERY_EXECUTION_PIPELINE_H_
