#include "execution/pipeline.h"

#include "execution/call_op.h"
#include "execution/fetch_op.h"
#include "execution/fixpoint.h"
#include "execution/function_op.h"
#include "execution/pattern_op.h"
#include "mentat/base/str_cat.h"

namespace mentat::query::execution {

absl::StatusOr<std::unique_ptr<Pipeline>> BuildPipeline(
    ExecContext* ctx, const std::vector<planner::TablePlan>& tables,
    const planner::ScopePlan& scope, FixpointEngine* engine, Operator* terminal,
    std::vector<StepStats>* stats, const std::string& owner) {
  auto p = std::make_unique<Pipeline>();
  std::vector<planner::Slot> live = scope.entry_slots;
  if (stats != nullptr) stats->assign(scope.steps.size(), StepStats{});
  for (size_t i = 0; i < scope.steps.size(); ++i) {
    const planner::Step& step = scope.steps[i];
    StepLabel label{owner, i + 1, step.text};
    std::unique_ptr<Operator> op;
    absl::Status s;
    switch (step.kind) {
      case planner::Step::Kind::kPattern: {
        auto o = std::make_unique<PatternOp>(ctx, scope, step, live,
                                             std::move(label));
        s = o->Init();
        op = std::move(o);
        break;
      }
      case planner::Step::Kind::kFetch: {
        auto o = std::make_unique<FetchOp>(ctx, scope, step, live);
        s = o->Init();
        op = std::move(o);
        break;
      }
      case planner::Step::Kind::kFilter: {
        auto o = std::make_unique<FilterOp>(ctx, step);
        s = o->Init();
        op = std::move(o);
        break;
      }
      case planner::Step::Kind::kFunction: {
        auto o = std::make_unique<FunctionOp>(ctx, scope, step);
        s = o->Init();
        op = std::move(o);
        break;
      }
      case planner::Step::Kind::kCall:
        if (engine != nullptr && !step.call.anti) {
          auto o = std::make_unique<CallSiteOp>(ctx, engine, scope, step, live,
                                                label);
          s = o->Init();
          p->sites.push_back(o.get());
          op = std::move(o);
        } else {
          auto o = std::make_unique<CallOp>(ctx, tables, scope, step);
          s = o->Init();
          op = std::move(o);
        }
        break;
    }
    if (!s.ok()) return s;
    if (stats != nullptr) op->set_stats(&(*stats)[i]);
    live.insert(live.end(), step.binds.begin(), step.binds.end());
    p->ops.push_back(std::move(op));
  }
  for (size_t i = 0; i < p->ops.size(); ++i) {
    p->ops[i]->set_next(i + 1 < p->ops.size() ? p->ops[i + 1].get() : terminal);
  }
  p->head = p->ops.empty() ? terminal : p->ops[0].get();
  return p;
}

}  // namespace mentat::query::execution
