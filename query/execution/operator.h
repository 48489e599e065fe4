#ifndef MENTAT_QUERY_EXECUTION_OPERATOR_H_
#define MENTAT_QUERY_EXECUTION_OPERATOR_H_

#include <chrono>
#include <string>

#include "absl/status/status.h"
#include "execution/batch.h"
#include "execution/exec_context.h"
#include "mentat/base/str_cat.h"

namespace mentat::query::execution {

// Names a step in messages ("query step 2 [?e :a ?v]"). Its text is made
// only when a message needs it: a point query's pipeline is built for
// every call, and most steps never name themselves.
struct StepLabel {
  std::string owner;      // "query", "rule <name>"
  size_t index = 0;       // from 1
  std::string_view text;  // the step's clause, the plan's (which outlives it)

  std::string ToString() const {
    return StrCat(owner, " step ", index, " ", text);
  }
};

// One step of a pipeline. Batches are pushed in from the step before;
// the operator pushes the rows it makes to the next one. Finish() says no
// more input will come: blocking operators emit then, and every operator
// passes Finish on.
//
// Push may change or move from the batch it is given (the caller clears
// it afterwards). Not thread-safe; an operator belongs to one execution.
class Operator {
 public:
  explicit Operator(ExecContext* ctx) : ctx_(ctx) {}
  virtual ~Operator() = default;
  Operator(const Operator&) = delete;
  Operator& operator=(const Operator&) = delete;

  void set_next(Operator* next) { next_ = next; }
  void set_stats(StepStats* stats) { stats_ = stats; }

  // Push with the profile's timing around it.
  [[nodiscard]] absl::Status Run(Batch& in) {
    if (stats_ == nullptr) return Push(in);
    const auto t0 = std::chrono::steady_clock::now();
    absl::Status s = Push(in);
    stats_->nanos += std::chrono::duration_cast<std::chrono::nanoseconds>(
                         std::chrono::steady_clock::now() - t0)
                         .count();
    return s;
  }
  [[nodiscard]] absl::Status RunFinish() {
    if (stats_ == nullptr) return Finish();
    const auto t0 = std::chrono::steady_clock::now();
    absl::Status s = Finish();
    stats_->nanos += std::chrono::duration_cast<std::chrono::nanoseconds>(
                         std::chrono::steady_clock::now() - t0)
                         .count();
    return s;
  }

  [[nodiscard]] virtual absl::Status Push(Batch& in) = 0;
  [[nodiscard]] virtual absl::Status Finish() {
    return next_ == nullptr ? absl::OkStatus() : next_->RunFinish();
  }

 protected:
  // Hands `out` to the next operator and clears it.
  [[nodiscard]] absl::Status Emit(Batch& out) {
    if (out.empty()) return absl::OkStatus();
    if (stats_ != nullptr) stats_->rows += out.size();
    absl::Status s = next_->Run(out);
    out.Clear();
    return s;
  }
  // Emits `out` when it is full; checks the limits every batch.
  [[nodiscard]] absl::Status EmitIfFull(Batch& out) {
    if (!out.full()) return absl::OkStatus();
    absl::Status s = Emit(out);
    if (!s.ok()) return s;
    return ctx_->Check();
  }

  ExecContext* ctx_;
  Operator* next_ = nullptr;
  StepStats* stats_ = nullptr;
};

}  // namespace mentat::query::execution

#endif  // MENTAT_QUERY_EXECUTION_OPERATOR_H_
