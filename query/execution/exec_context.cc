#include "execution/exec_context.h"

#include "mentat/base/str_cat.h"

namespace mentat::query::execution {

ExecContext::ExecContext(const storage::DbView& view,
                         const QueryOptions& options, std::string_view subject)
    : view_(view), options_(options), subject_(subject) {}

absl::Status ExecContext::Check() {
  if (options_.cancelled != nullptr &&
      options_.cancelled->load(std::memory_order_relaxed)) {
    return absl::CancelledError(StrCat(subject_, " cancelled"));
  }
  if (options_.deadline != std::chrono::steady_clock::time_point::max() &&
      std::chrono::steady_clock::now() >= options_.deadline) {
    return absl::DeadlineExceededError(StrCat(subject_, " deadline exceeded"));
  }
  if (options_.max_rows_scanned != 0 && ticks_ > options_.max_rows_scanned) {
    return absl::ResourceExhaustedError(StrCat(
        subject_, " stepped through more than ", options_.max_rows_scanned,
        " datoms and rows, its scan limit; narrow the ", subject_,
        ", or raise the limit (--query-scan-limit)"));
  }
  return absl::OkStatus();
}

absl::Status ExecContext::Charge(size_t bytes, std::string_view what) {
  held_ += bytes;
  if (held_ <= options_.memory_budget_bytes) return absl::OkStatus();
  return absl::ResourceExhaustedError(
      StrCat(subject_, " exceeded its memory budget of ",
             options_.memory_budget_bytes, " bytes: it held ", held_,
             " bytes when ", what, " grew past it; narrow the ", subject_,
             ", or raise the budget (--query-memory)"));
}

}  // namespace mentat::query::execution
