#ifndef MENTAT_QUERY_EXECUTION_FUNCTION_OP_H_
#define MENTAT_QUERY_EXECUTION_FUNCTION_OP_H_

#include <memory>
#include <string>
#include <vector>

#include "execution/filter_eval.h"
#include "execution/fulltext_search.h"
#include "execution/operator.h"
#include "execution/term_ref.h"
#include "mentat/storage/datom_cursor.h"
#include "planner/plan.h"

namespace mentat::query::execution {

// A function clause: calls the function once per row and binds its result
// (scalar, tuple, collection or relation binding; an output variable bound
// already is compared instead). Built-ins from the builtins table, plus
// the database functions: ground, get-else, get-some, tuple, untuple,
// the log's tx-ids and tx-data (the log of the view's Db up to its
// basis tx, not filtered by an as_of, since or history basis), and
// fulltext (exact at the view's basis).
class FunctionOp : public Operator {
 public:
  FunctionOp(ExecContext* ctx, const planner::ScopePlan& scope,
             const planner::Step& step);

  [[nodiscard]] absl::Status Init();
  [[nodiscard]] absl::Status Push(Batch& in) override;
  [[nodiscard]] absl::Status Finish() override {
    absl::Status s = Emit(out_);
    if (!s.ok()) return s;
    return Operator::Finish();
  }

 private:
  [[nodiscard]] absl::Status Apply(const storage::Value* row);
  // Emits `row` extended with one result of `n` values (n == outputs).
  [[nodiscard]] absl::Status EmitResult(const storage::Value* row,
                                        const storage::Value* values, size_t n);
  // Emits the row once per element (collection) or per group of
  // `width` (relation).
  [[nodiscard]] absl::Status EmitMany(const storage::Value* row,
                                      const std::vector<storage::Value>& values,
                                      size_t width);
  // Result for a scalar, tuple, collection or relation binding of one
  // value that may be an encoded tuple.
  [[nodiscard]] absl::Status EmitValue(const storage::Value* row,
                                       const storage::Value& value,
                                       bool is_tuple);
  [[nodiscard]] absl::StatusOr<bool> FirstValue(storage::EntityId e,
                                                storage::EntityId a,
                                                storage::Value* out);
  // The log functions (function_op_log.cc): the transaction log of the
  // view's Db, read through storage's tx_log.h.
  [[nodiscard]] absl::Status TxIds(const storage::Value* row);
  [[nodiscard]] absl::Status TxData(const storage::Value* row);
  // fulltext (function_op_fulltext.cc): the postings' candidates, checked
  // against their datoms at the view's basis.
  [[nodiscard]] absl::Status Fulltext(const storage::Value* row);
  // The entities, sorted, in the postings of `term` of attribute `a`.
  [[nodiscard]] absl::StatusOr<std::vector<storage::EntityId>> TermEntities(
      storage::EntityId a, const FulltextTerm& term);

  const planner::ScopePlan& scope_;
  const planner::Step& step_;
  const planner::FunctionSpec& f_;
  std::vector<TermRef> args_;
  std::vector<TermRef> outputs_;
  OwnedValues owned_;
  std::vector<storage::Value> scratch_;
  std::vector<storage::Value> ground_;  // deduplicated ground values
  FilterEval filters_;
  std::unique_ptr<storage::DatomCursor> eavt_;
  std::string key_;
  // fulltext: the search last parsed, and its text.
  std::unique_ptr<FulltextSearch> fulltext_;
  std::string fulltext_text_;
  Batch out_;
};

}  // namespace mentat::query::execution

#endif  // MENTAT_QUERY_EXECUTION_FUNCTION_OP_H_
