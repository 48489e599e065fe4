#ifndef MENTAT_QUERY_EXECUTION_EXEC_CONTEXT_H_
#define MENTAT_QUERY_EXECUTION_EXEC_CONTEXT_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "mentat/query/query_engine.h"
#include "mentat/storage/db.h"

namespace mentat::query::execution {

// Rows and time of one step, when profiling.
struct StepStats {
  uint64_t rows = 0;
  int64_t nanos = 0;  // inclusive: the steps after it are in it too
  // How the step ran when the executor chose otherwise than the plan
  // (column probes); empty when it ran as planned.
  std::string ran_as;
};

// The state one execution shares between its operators: the view, the
// limits (deadline, cancel flag, memory budget), and the early stop once
// the result has all the rows it needs. One per execution, used by one
// thread.
class ExecContext {
 public:
  // `subject` names what runs in error messages ("query", "pull").
  ExecContext(const storage::DbView& view, const QueryOptions& options,
              std::string_view subject = "query");

  const storage::DbView& view() const { return view_; }
  const storage::Schema& schema() const { return view_.schema(); }
  bool history() const {
    return view_.basis().kind == storage::BasisKind::kHistory;
  }
  const QueryOptions& options() const { return options_; }

  // DeadlineExceeded or Cancelled when the query must stop;
  // ResourceExhausted once it stepped through more than
  // QueryOptions::max_rows_scanned datoms and rows.
  [[nodiscard]] absl::Status Check();
  // For loops, once per datom or row stepped through (what
  // max_rows_scanned counts): checks every 1024th call.
  [[nodiscard]] absl::Status Tick() {
    if ((++ticks_ & 1023) != 0) return absl::OkStatus();
    return Check();
  }
  // Tick for `n` datoms stepped over at once (a run counted by a search).
  [[nodiscard]] absl::Status Tick(uint64_t n) {
    const uint64_t before = ticks_;
    ticks_ += n;
    if ((before >> 10) == (ticks_ >> 10)) return absl::OkStatus();
    return Check();
  }
  // Datoms and rows stepped through so far (Tick calls).
  uint64_t rows_scanned() const { return ticks_; }

  // Memory held by intermediate results. `what` names the step for the
  // error: ResourceExhausted once the total passes the budget.
  [[nodiscard]] absl::Status Charge(size_t bytes, std::string_view what);
  void Release(size_t bytes) { held_ -= bytes < held_ ? bytes : held_; }
  size_t held() const { return held_; }

  // Set once the result has all the rows it wants (:limit, a scalar
  // find): operators stop reading.
  bool stopped() const { return stopped_; }
  void Stop() { stopped_ = true; }

 private:
  storage::DbView view_;
  QueryOptions options_;
  std::string subject_;
  uint64_t ticks_ = 0;
  size_t held_ = 0;
  bool stopped_ = false;
};

// Keeps the memory charge of one structure up to date: call Update with
// its current size; the charge is released on destruction.
class MemoryHold {
 public:
  MemoryHold(ExecContext* ctx, std::string what)
      : ctx_(ctx), what_(std::move(what)) {}
  ~MemoryHold() { ctx_->Release(bytes_); }
  MemoryHold(const MemoryHold&) = delete;
  MemoryHold& operator=(const MemoryHold&) = delete;

  [[nodiscard]] absl::Status Update(size_t bytes) {
    if (bytes <= bytes_) {
      ctx_->Release(bytes_ - bytes);
      bytes_ = bytes;
      return absl::OkStatus();
    }
    const size_t more = bytes - bytes_;
    bytes_ = bytes;
    return ctx_->Charge(more, what_);
  }

 private:
  ExecContext* ctx_;
  std::string what_;
  size_t bytes_ = 0;
};

}  // namespace mentat::query::execution

#endif  // MENTAT_QUERY_EXECUTION_EXEC_CONTEXT_H_
