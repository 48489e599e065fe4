#ifndef MENTAT_QUERY_EXECUTION_FILTER_EVAL_H_
#define MENTAT_QUERY_EXECUTION_FILTER_EVAL_H_

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "execution/exec_context.h"
#include "execution/term_ref.h"
#include "mentat/storage/datom_cursor.h"
#include "planner/plan.h"

namespace mentat::query::execution {

// Applies a step's predicates to rows. Built-in predicates are called
// through their resolved function pointers; missing? seeks EAVT.
class FilterEval {
 public:
  explicit FilterEval(ExecContext* ctx) : ctx_(ctx) {}

  [[nodiscard]] absl::Status Init(
      const std::vector<planner::PredicateSpec>& specs);
  bool empty() const { return preds_.empty(); }

  // True if `row` passes every predicate. A storage error makes it false
  // and sets status().
  // (Inline for the common case of no predicates: scans call it per row.)
  bool Pass(const storage::Value* row) {
    return preds_.empty() || PassAll(row);
  }
  const absl::Status& status() const { return status_; }

 private:
  bool PassAll(const storage::Value* row);
  struct Pred {
    planner::PredicateSpec::Kind kind;
    bool (*fn)(std::span<const storage::Value>) = nullptr;
    std::vector<TermRef> args;
  };
  bool Missing(const Pred& p, const storage::Value* row);

  ExecContext* ctx_;
  std::vector<Pred> preds_;
  std::vector<storage::Value> scratch_;
  OwnedValues owned_;
  std::unique_ptr<storage::DatomCursor> eavt_;
  std::string key_;
  absl::Status status_;
};

}  // namespace mentat::query::execution

#endif  // MENTAT_QUERY_EXECUTION_FILTER_EVAL_H_
