#ifndef MENTAT_QUERY_EXECUTION_RESULT_EMITTER_H_
#define MENTAT_QUERY_EXECUTION_RESULT_EMITTER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "execution/exec_context.h"
#include "mentat/query/pull.h"
#include "mentat/query/query_engine.h"
#include "planner/plan.h"
#include "pull/pull_runner.h"

namespace mentat::query::execution {

// The last stage of a query: orders the result rows (:order), skips
// :offset, stops at :limit (or after one row for tuple and scalar finds),
// turns values into EDN (pulls included, :keys maps), and hands batches of
// QueryOptions::batch_rows rows (or batch_bytes) to the sink. Pulls run
// under the query's limits (ExecContext); each pulled value is capped at
// QueryOptions::max_pull_bytes, and the pulled values of a batch count
// against the memory budget until the sink has taken it.
class ResultEmitter {
 public:
  ResultEmitter(ExecContext* ctx, const planner::QueryPlan& plan,
                RowSink* sink);

  // Creates the pull executors. InvalidArgument for a pull on history.
  [[nodiscard]] absl::Status Init();

  // One result row: a value per :find element; for aggregate elements,
  // `aggregates` (indexed by element) holds the result instead; it may be
  // moved from, left empty. Calls
  // ctx->Stop() once no more rows are wanted.
  [[nodiscard]] absl::Status Add(const storage::Value* values,
                                 std::vector<edn::EdnValue>* aggregates);
  // One result row of a plan without aggregates, read from a row of the
  // :where scope (the :find elements' slots), without copying it first.
  [[nodiscard]] absl::Status AddRow(const storage::Value* row);
  // Sorts (with :order) and flushes.
  [[nodiscard]] absl::Status Finish();

  uint64_t rows_emitted() const { return emitted_; }

 private:
  // `columns`: a value per :find element.
  [[nodiscard]] absl::Status Output(const storage::Value* const* columns,
                                    std::vector<edn::EdnValue>* aggregates);
  // Output of a value per :find element, side by side.
  [[nodiscard]] absl::Status OutputValues(
      const storage::Value* values, std::vector<edn::EdnValue>* aggregates);
  // Output's row through RowSink::OnValueRow when the sink takes values,
  // each column is a plain value or an aggregate and each aggregate's
  // result is a number (counts, sums, averages): false when the row must
  // go as EDN.
  [[nodiscard]] bool ValuesRow(const storage::Value* const* columns,
                               std::vector<edn::EdnValue>* aggregates,
                               absl::Status* sent);
  // Keeps a row for Finish's sort (:order).
  [[nodiscard]] absl::Status Keep(std::vector<edn::EdnValue>* aggregates);
  [[nodiscard]] absl::StatusOr<edn::EdnValue> Convert(size_t column,
                                                      const storage::Value& v);

  ExecContext* ctx_;
  const planner::QueryPlan& plan_;
  RowSink* sink_;
  size_t width_;
  std::optional<int64_t> limit_;
  int64_t skipped_ = 0;
  uint64_t emitted_ = 0;
  // Hands the pending batch to the sink.
  [[nodiscard]] absl::Status Flush();

  // By column; null for columns that are not pulls.
  std::vector<std::unique_ptr<pull_internal::PullRunner>> pulls_;
  // The pulled values of the pending batch, charged to the budget.
  std::unique_ptr<MemoryHold> pulled_memory_;
  size_t pulled_bytes_ = 0;
  // By column: a plain value (not a pull, tuple or aggregate), converted
  // without Convert's checks and status.
  std::vector<bool> plain_;
  // Every column plain, with no :keys, :order, :offset or limit: AddRow
  // converts a row's values straight into the pending batch (PlainRow).
  bool all_plain_ = false;
  // all_plain_ and the sink encodes storage values itself: PlainRow hands
  // it each row (RowSink::OnValueRow).
  bool takes_values_ = false;
  // The sink takes values, no :keys, and every column plain or an
  // aggregate: Output tries ValuesRow first.
  bool values_rows_ = false;
  std::vector<storage::Value> aggregate_values_;  // scratch for ValuesRow
  std::vector<const storage::Value*> row_cells_;  // scratch for ValuesRow
  std::vector<int32_t> find_slots_;  // by column: its slot in a :where row
  size_t batch_rows_ = 1;
  // AddRow's path when all_plain_: a large result (since() answers
  // thousands of rows) spends most of its time here.
  [[nodiscard]] absl::Status PlainRow(const storage::Value* row);
  std::vector<Row> pending_;
  size_t pending_bytes_ = 0;  // texts of pending_'s plain values
  std::vector<const storage::Value*> columns_;  // scratch for Output
  // With :order, every row waits here until Finish.
  std::vector<storage::Value> sorted_values_;
  std::vector<std::vector<edn::EdnValue>> sorted_aggregates_;
  std::unique_ptr<MemoryHold> memory_;
  size_t bytes_ = 0;
};

}  // namespace mentat::query::execution

#endif  // MENTAT_QUERY_EXECUTION_RESULT_EMITTER_H_
