#include "execution/plan_runner.h"

#include <chrono>

#include "execution/count_scan.h"
#include "execution/exec_context.h"
#include "execution/input_binder.h"
#include "execution/pipeline.h"
#include "execution/projector.h"
#include "execution/result_emitter.h"

namespace mentat::query::execution {
namespace {

using storage::Value;

// Answers a count from the statistics. False: it cannot (values not
// tracked), run the query instead.
[[nodiscard]] absl::StatusOr<bool> AnswerFromStatistics(
    const planner::QueryPlan& plan, const storage::DbView& view,
    const QueryOptions& options, ResultEmitter* emitter) {
  const planner::StatsShortcut& sc = plan.shortcut;
  if (!options.use_statistics ||
      sc.kind == planner::StatsShortcut::Kind::kNone ||
      view.basis().kind != storage::BasisKind::kCurrent) {
    return false;
  }
  const storage::AttributeStats* st = view.db().stats().Find(sc.attr);
  std::vector<Value> values(plan.find.size());
  std::vector<edn::EdnValue> aggs(plan.find.size());
  switch (sc.kind) {
    case planner::StatsShortcut::Kind::kCountByValue: {
      if (st != nullptr && !st->values_tracked) return false;
      if (st == nullptr) return true;
      const size_t count_col = sc.count_first ? 0 : 1;
      const size_t value_col = 1 - count_col;
      for (const auto& [v, n] : st->value_counts) {
        if (n <= 0) continue;
        values[value_col] = v;
        aggs.resize(plan.find.size());  // the emitter may take it whole
        aggs[count_col] = edn::EdnValue::Int(n);
        absl::Status s = emitter->Add(values.data(), &aggs);
        if (!s.ok()) return s;
      }
      return true;
    }
    case planner::StatsShortcut::Kind::kCountAll:
    case planner::StatsShortcut::Kind::kCountValues: {
      const int64_t n = st == nullptr ? 0
                        : sc.kind == planner::StatsShortcut::Kind::kCountAll
                            ? st->datoms
                            : st->distinct_values;
      if (n <= 0) return true;  // no rows, as a count over nothing gives
      aggs[0] = edn::EdnValue::Int(n);
      absl::Status s = emitter->Add(values.data(), &aggs);
      if (!s.ok()) return s;
      return true;
    }
    case planner::StatsShortcut::Kind::kNone:
      break;
  }
  return false;
}

}  // namespace

absl::Status RunPlan(const planner::QueryPlan& plan,
                     const storage::DbView& view,
                     const std::vector<edn::EdnValue>& inputs,
                     const QueryOptions& options, RowSink* sink,
                     planner::PlanProfile* profile) {
  const auto start = std::chrono::steady_clock::now();
  ExecContext ctx(view, options);
  absl::Status s = ctx.Check();
  if (!s.ok()) return s;
  s = sink->OnColumns(plan.columns);
  if (!s.ok()) return s;
  ResultEmitter emitter(&ctx, plan, sink);
  s = emitter.Init();
  if (!s.ok()) return s;
  auto finish_profile = [&] {
    if (profile == nullptr) return;
    profile->result_rows = emitter.rows_emitted();
    profile->total_nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(
                               std::chrono::steady_clock::now() - start)
                               .count();
  };

  absl::StatusOr<bool> answered =
      AnswerFromStatistics(plan, view, options, &emitter);
  if (!answered.ok()) return answered.status();
  if (*answered) {
    if (profile != nullptr) profile->used_statistics = true;
    s = emitter.Finish();
    finish_profile();
    return s;
  }
  answered = CountByScan(plan, &ctx, &emitter);
  if (!answered.ok()) return answered.status();
  if (*answered) {
    if (profile != nullptr) profile->counted_by_scan = true;
    s = emitter.Finish();
    finish_profile();
    return s;
  }

  Batch rows(plan.where.width());
  s = BindInputs(&ctx, plan, inputs, &rows);
  if (!s.ok()) return s;

  const bool dedupe = plan.dedupe || ctx.history();
  Projector projector(&ctx, plan, dedupe, &emitter);
  std::vector<StepStats> stats;
  StepStats projector_stats;
  if (profile != nullptr) projector.set_stats(&projector_stats);
  absl::StatusOr<std::unique_ptr<Pipeline>> pipeline =
      BuildPipeline(&ctx, plan.tables, plan.where, nullptr, &projector,
                    profile != nullptr ? &stats : nullptr, "query");
  if (!pipeline.ok()) return pipeline.status();
  Operator* head = (*pipeline)->head;
  if (!rows.empty()) {
    s = head->Run(rows);
    if (!s.ok()) return s;
  }
  s = head->RunFinish();
  if (!s.ok()) return s;
  if (profile != nullptr) {
    for (const StepStats& st : stats) {
      profile->steps.push_back({st.rows, st.nanos, st.ran_as});
    }
    profile->steps.push_back(
        {emitter.rows_emitted(), projector_stats.nanos, std::string()});
  }
  finish_profile();
  return absl::OkStatus();
}

}  // namespace mentat::query::execution
