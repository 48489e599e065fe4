#include "query_limits.h"

#include <algorithm>

#include "mentat/base/str_cat.h"

namespace mentat::server {

namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

QueryLimits::QueryLimits(const ServerConfig& config, Clock::time_point start,
                         Clock::time_point call_deadline, int64_t timeout_ms,
                         const std::atomic<bool>* cancelled,
                         std::string_view what)
    : config_(config), what_(what) {
  Clock::time_point own = call_deadline;
  if (timeout_ms > 0) {
    own = std::min(own, start + std::chrono::milliseconds(timeout_ms));
  }
  const Clock::time_point ceiling =
      config.query_timeout_max_ms > 0
          ? start + std::chrono::milliseconds(config.query_timeout_max_ms)
          : Clock::time_point::max();
  // A call that asks for a time limit gets it, shorter or longer than the
  // default, up to the ceiling; a call that asks for none gets the default.
  if (own != Clock::time_point::max()) {
    options_.deadline = own;
    source_ = Source::kCall;
  } else if (config.query_timeout_ms > 0) {
    options_.deadline =
        start + std::chrono::milliseconds(config.query_timeout_ms);
    source_ = Source::kServerDefault;
  }
  if (ceiling < options_.deadline) {
    options_.deadline = ceiling;
    source_ = Source::kServerCeiling;
  }
  options_.cancelled = cancelled;
  options_.memory_budget_bytes = config.query_memory_bytes;
  options_.max_rows_scanned = config.query_scan_limit;
  options_.max_pull_bytes = config.pull_max_bytes;
}

absl::Status QueryLimits::Outcome(const absl::Status& status) const {
  const bool past_deadline = options_.deadline != Clock::time_point::max() &&
                             Clock::now() >= options_.deadline;
  const bool client_cancelled =
      options_.cancelled != nullptr &&
      options_.cancelled->load(std::memory_order_acquire);
  const bool timed_out = status.code() == absl::StatusCode::kDeadlineExceeded ||
                         (status.code() == absl::StatusCode::kCancelled &&
                          past_deadline && !client_cancelled);
  if (!timed_out) return status;
  switch (source_) {
    case Source::kServerDefault:
      return absl::DeadlineExceededError(
          StrCat("the ", what_, " ran past the server's time limit of ",
                 config_.query_timeout_ms,
                 " ms for calls without a deadline (--query-timeout-ms); set a "
                 "deadline or timeout_ms on the call to allow it longer",
                 config_.query_timeout_max_ms > 0
                     ? StrCat(", up to ", config_.query_timeout_max_ms,
                              " ms (--query-timeout-max-ms)")
                     : std::string()));
    case Source::kServerCeiling:
      return absl::DeadlineExceededError(
          StrCat("the ", what_, " ran past ", config_.query_timeout_max_ms,
                 " ms, the longest time limit the server allows a call "
                 "(--query-timeout-max-ms)"));
    case Source::kCall:
    case Source::kNone:
      break;
  }
  if (status.code() == absl::StatusCode::kDeadlineExceeded) return status;
  return absl::DeadlineExceededError(
      StrCat("the ", what_, "'s deadline passed"));
}

[[nodiscard]] absl::Status TakeQuerySlot(const ServerConfig& config,
                                         Metrics& metrics) {
  const int64_t running =
      metrics.running_queries.fetch_add(1, std::memory_order_relaxed);
  if (running < config.max_concurrent_queries) return absl::OkStatus();
  metrics.running_queries.fetch_sub(1, std::memory_order_relaxed);
  return absl::ResourceExhaustedError(
      StrCat("the server runs its maximum of ", config.max_concurrent_queries,
             " concurrent queries; retry later"));
}

void ReleaseQuerySlot(Metrics& metrics) {
  metrics.running_queries.fetch_sub(1, std::memory_order_relaxed);
}

}  // namespace mentat::server
