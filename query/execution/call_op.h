#ifndef MENTAT_QUERY_EXECUTION_CALL_OP_H_
#define MENTAT_QUERY_EXECUTION_CALL_OP_H_

#include <memory>
#include <string>
#include <vector>

#include "execution/filter_eval.h"
#include "execution/fixpoint.h"
#include "execution/operator.h"
#include "execution/term_ref.h"
#include "planner/plan.h"

namespace mentat::query::execution {

// A rule call (or an or/or-join) at the top level of a query, or a
// not/not-join anywhere: for each batch, adds the rows' bound arguments as
// demand to an engine of its own, solves it, and then joins each row with
// the table's answers (positive), or keeps the rows without one (anti).
// The engine lives as long as the operator, so later batches reuse what
// earlier ones derived.
class CallOp : public Operator {
 public:
  CallOp(ExecContext* ctx, const std::vector<planner::TablePlan>& tables,
         const planner::ScopePlan& scope, const planner::Step& step);

  [[nodiscard]] absl::Status Init();
  [[nodiscard]] absl::Status Push(Batch& in) override;
  [[nodiscard]] absl::Status Finish() override {
    absl::Status s = Emit(out_);
    if (!s.ok()) return s;
    return Operator::Finish();
  }

 private:
  [[nodiscard]] absl::Status EmitJoined(const storage::Value* row,
                                        const storage::Value* answer);
  [[nodiscard]] absl::Status EmitRow(const storage::Value* row);

  const std::vector<planner::TablePlan>& tables_;
  const planner::Step& step_;
  std::vector<TermRef> args_;
  OwnedValues owned_;
  std::vector<int> key_pos_;
  std::vector<storage::Value> keys_;  // per row of the batch
  std::vector<uint32_t> found_;       // scratch: answers of one key
  FilterEval filters_;
  std::unique_ptr<FixpointEngine> engine_;
  Batch out_;
};

// Rows that pass the step's predicates (a scope whose first predicates
// need only its inputs).
class FilterOp : public Operator {
 public:
  FilterOp(ExecContext* ctx, const planner::Step& step)
      : Operator(ctx), step_(step), filters_(ctx) {}
  [[nodiscard]] absl::Status Init() { return filters_.Init(step_.filters); }
  [[nodiscard]] absl::Status Push(Batch& in) override;

 private:
  const planner::Step& step_;
  FilterEval filters_;
};

}  // namespace mentat::query::execution

#endif  // MENTAT_QUERY_EXECUTION_CALL_OP_H_
