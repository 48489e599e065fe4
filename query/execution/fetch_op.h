#ifndef MENTAT_QUERY_EXECUTION_FETCH_OP_H_
#define MENTAT_QUERY_EXECUTION_FETCH_OP_H_

#include <memory>
#include <string>
#include <vector>

#include "execution/filter_eval.h"
#include "execution/operator.h"
#include "mentat/storage/datom_cursor.h"
#include "planner/plan.h"

namespace mentat::query::execution {

// A kFetch step: for each row, seeks the bound entity once in EAVT and
// walks its datoms in attribute order, taking the value of each wanted
// attribute (a few Next calls, or a SeekWithin when the next wanted
// attribute is far). A row with no value for one of them is dropped; in
// history, where an attribute can have several datoms, the row is repeated
// for each combination.
class FetchOp : public Operator {
 public:
  // `live`: the slots bound in the rows it is given (the only ones it
  // copies into its own rows: the others hold junk).
  FetchOp(ExecContext* ctx, const planner::ScopePlan& scope,
          const planner::Step& step, std::vector<planner::Slot> live);

  [[nodiscard]] absl::Status Init();
  [[nodiscard]] absl::Status Push(Batch& in) override;
  [[nodiscard]] absl::Status Finish() override {
    absl::Status s = Emit(out_);
    if (!s.ok()) return s;
    return Operator::Finish();
  }

 private:
  [[nodiscard]] absl::Status Fetch(const storage::Value* row);
  [[nodiscard]] absl::Status EmitCombinations(std::vector<storage::Value>& row,
                                              size_t attr);

  const planner::Step& step_;
  planner::Slot entity_slot_;
  std::vector<storage::EntityId> attrs_;
  std::vector<planner::Slot> out_slots_;     // kNoSlot for a blank value
  std::vector<planner::Slot> live_;          // sorted, unique
  std::vector<planner::Slot> live_and_out_;  // history's combinations
  std::vector<std::vector<storage::Value>> values_;  // per attribute
  FilterEval filters_;
  std::unique_ptr<storage::DatomCursor> cursor_;
  std::string prefix_;
  std::string hint_prefix_;
  std::string target_;
  Batch out_;
};

}  // namespace mentat::query::execution

#endif  // MENTAT_QUERY_EXECUTION_FETCH_OP_H_
