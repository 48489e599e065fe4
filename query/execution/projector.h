#ifndef MENTAT_QUERY_EXECUTION_PROJECTOR_H_
#define MENTAT_QUERY_EXECUTION_PROJECTOR_H_

#include <memory>
#include <vector>

#include "execution/operator.h"
#include "execution/result_emitter.h"
#include "execution/row_set.h"
#include "mentat/query/functions.h"
#include "planner/plan.h"

namespace mentat::query::execution {

// The end of the :where pipeline. Projects rows onto the :find (and
// :with) variables, drops duplicates when the plan says they can occur,
// and either streams the rows to the emitter or, with aggregates, groups
// them by the non-aggregate :find elements and aggregates (the bag is the
// set of find + with tuples, as in Datomic).
class Projector : public Operator {
 public:
  Projector(ExecContext* ctx, const planner::QueryPlan& plan, bool dedupe,
            ResultEmitter* emitter);

  [[nodiscard]] absl::Status Push(Batch& in) override;
  [[nodiscard]] absl::Status Finish() override;

 private:
  [[nodiscard]] absl::Status Aggregate(const storage::Value* row);
  [[nodiscard]] absl::Status UpdateMemory();

  const planner::QueryPlan& plan_;
  ResultEmitter* emitter_;
  std::vector<planner::Slot> key_slots_;  // find slots, then :with
  std::vector<storage::Value> key_;
  std::unique_ptr<RowSet> seen_;  // when deduplicating
  // Aggregation: groups by the non-aggregate columns.
  std::vector<size_t> group_columns_;
  std::vector<size_t> aggregate_columns_;
  std::vector<storage::Value> group_key_;
  std::unique_ptr<RowSet> groups_;
  std::vector<std::unique_ptr<query::Aggregate>> states_;  // group-major
  std::vector<std::unique_ptr<RowSet>> distinct_;  // per aggregate column
  std::vector<bool> wants_distinct_;
  std::vector<storage::Value> values_;  // scratch, one per :find element
  MemoryHold memory_;
  uint64_t rows_ = 0;
};

}  // namespace mentat::query::execution

#endif  // MENTAT_QUERY_EXECUTION_PROJECTOR_H_
