#ifndef MENTAT_SERVER_QUERY_LIMITS_H_
#define MENTAT_SERVER_QUERY_LIMITS_H_

// The limits mentatd puts on every Query, Pull, PullMany and profiled
// Explain, as the engine's QueryOptions: the time limit (the call's own
// deadline or timeout_ms, else --query-timeout-ms, never past
// --query-timeout-max-ms), the cancel flag, the memory budget
// (--query-memory), the scan limit (--query-scan-limit) and the pull size
// cap (--pull-max-bytes).

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "mentat/query/query_engine.h"
#include "mentat/server/config.h"
#include "metrics.h"

namespace mentat::server {

class QueryLimits {
 public:
  // `start`: when the call began; `call_deadline`: its gRPC deadline on the
  // steady clock (time_point::max() for none); `timeout_ms`: the request's
  // own time limit (0: none); `cancelled`: set when the client cancels
  // (not owned; outlives the call's work). `what` names the call in
  // messages ("query", "pull").
  QueryLimits(const ServerConfig& config,
              std::chrono::steady_clock::time_point start,
              std::chrono::steady_clock::time_point call_deadline,
              int64_t timeout_ms, const std::atomic<bool>* cancelled,
              std::string_view what);

  const query::QueryOptions& options() const { return options_; }
  query::QueryOptions& mutable_options() { return options_; }
  std::chrono::steady_clock::time_point deadline() const {
    return options_.deadline;
  }

  // What to tell the client of a call that ended with `status` from the
  // engine or a sink: a Cancelled after the deadline passed, when the
  // client did not cancel, is DeadlineExceeded; a DeadlineExceeded of the
  // server's own time limit names the flag to change. Other statuses are
  // returned as they are.
  [[nodiscard]] absl::Status Outcome(const absl::Status& status) const;

 private:
  // Who set the deadline.
  enum class Source { kNone, kCall, kServerDefault, kServerCeiling };

  const ServerConfig& config_;
  query::QueryOptions options_;
  Source source_ = Source::kNone;
  std::string what_;
};

// Admission to --max-concurrent-queries, for every call that runs a query
// (Query, profiled Explain): takes one slot, or returns ResourceExhausted
// when all are taken. A taken slot is given back with ReleaseQuerySlot when
// the query ends. Any thread.
[[nodiscard]] absl::Status TakeQuerySlot(const ServerConfig& config,
                                         Metrics& metrics);
void ReleaseQuerySlot(Metrics& metrics);

}  // namespace mentat::server

#endif  // MENTAT_SERVER_QUERY_LIMITS_H_
