#include "execution/exec_context.h"

#include "mentat/storage/str_cat.h"

namespace mentat::query::execution {

ExecContext::ExecContext(const storage::DbView& view,
                         const QueryOptions& options)
    : view_(view), options_(options) {}

absl::Status ExecContext::Check() {
  if (options_.cancelled != nullptr &&
      options_.cancelled->load(std::memory_order_relaxed)) {
    return absl::CancelledError("query cancelled");
  }
  if (options_.deadline != std::chrono::steady_clock::time_point::max() &&
      std::chrono::steady_clock::now() >= options_.deadline) {
    return absl::DeadlineExceededError("query deadline exceeded");
  }
  return absl::OkStatus();
}

absl::Status ExecContext::Charge(size_t bytes, std::string_view what) {
  held_ += bytes;
  if (held_ <= options_.memory_budget_bytes) return absl::OkStatus();
  return absl::ResourceExhaustedError(StrCat(
      "query exceeded its memory budget of ", options_.memory_budget_bytes,
      " bytes: it held ", held_, " bytes when ", what,
      " grew past it; narrow the query, or raise the budget "
      "(--query-memory)"));
}

}  // namespace mentat::query::execution
