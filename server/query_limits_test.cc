// The time limit of a query or pull: the call's own deadline or
// timeout_ms, else --query-timeout-ms, never past --query-timeout-max-ms;
// and what the client is told when it passes. End to end: a cartesian
// product without a deadline stops at the server's limit, and at the scan
// limit.

#include "query_limits.h"

#include <doctest/doctest.h>

#include "test_support.h"

namespace mentat::server::testing {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr Clock::time_point kNone = Clock::time_point::max();

ServerConfig Limits(int64_t timeout_ms, int64_t max_ms) {
  ServerConfig c;
  c.query_timeout_ms = timeout_ms;
  c.query_timeout_max_ms = max_ms;
  return c;
}

TEST_CASE("query limits: flags and defaults") {
  auto cl = ParseCommandLine({}, {});
  REQUIRE(cl.ok());
  CHECK(cl->config.query_timeout_ms == 60000);
  CHECK(cl->config.query_timeout_max_ms == 3600000);
  CHECK(cl->config.query_scan_limit == 1000000000);
  CHECK(cl->config.pull_max_bytes == size_t{256} << 20);
  cl =
      ParseCommandLine({"--query-timeout-ms", "500", "--query-timeout-max-ms=0",
                        "--query-scan-limit", "10", "--pull-max-bytes", "4M"},
                       {});
  REQUIRE_MESSAGE(cl.ok(), cl.status().ToString());
  CHECK(cl->config.query_timeout_ms == 500);
  CHECK(cl->config.query_timeout_max_ms == 0);
  CHECK(cl->config.query_scan_limit == 10);
  CHECK(cl->config.pull_max_bytes == size_t{4} << 20);
  CHECK(UsageText().find("--query-timeout-max-ms") != std::string::npos);
  CHECK_FALSE(ParseCommandLine({"--query-timeout-ms", "-1"}, {}).ok());
}

TEST_CASE("query limits: which time limit a call gets") {
  const Clock::time_point start = Clock::now();
  const ServerConfig config = Limits(60000, 3600000);
  // No deadline, no timeout_ms: the server's default.
  CHECK(QueryLimits(config, start, kNone, 0, nullptr, "query").deadline() ==
        start + milliseconds(60000));
  // The call's own, shorter or longer than the default.
  CHECK(
      QueryLimits(config, start, start + milliseconds(500), 0, nullptr, "query")
          .deadline() == start + milliseconds(500));
  CHECK(
      QueryLimits(config, start, kNone, 120000, nullptr, "query").deadline() ==
      start + milliseconds(120000));
  // The earlier of the gRPC deadline and timeout_ms.
  CHECK(QueryLimits(config, start, start + milliseconds(900), 700, nullptr,
                    "query")
            .deadline() == start + milliseconds(700));
  // Never past the ceiling.
  CHECK(
      QueryLimits(config, start, kNone, 7200000, nullptr, "query").deadline() ==
      start + milliseconds(3600000));
  CHECK(QueryLimits(Limits(9000000, 3600000), start, kNone, 0, nullptr, "query")
            .deadline() == start + milliseconds(3600000));
  // 0 turns each off.
  CHECK(
      QueryLimits(Limits(0, 0), start, kNone, 0, nullptr, "query").deadline() ==
      kNone);
  CHECK(QueryLimits(Limits(0, 5000), start, kNone, 0, nullptr, "query")
            .deadline() == start + milliseconds(5000));
  CHECK(QueryLimits(Limits(100, 0), start, kNone, 7200000, nullptr, "query")
            .deadline() == start + milliseconds(7200000));
  // The other limits come from the flags.
  ServerConfig other = config;
  other.query_memory_bytes = 1234;
  other.query_scan_limit = 5678;
  other.pull_max_bytes = 910;
  const QueryLimits l(other, start, kNone, 0, nullptr, "pull");
  CHECK(l.options().memory_budget_bytes == 1234);
  CHECK(l.options().max_rows_scanned == 5678);
  CHECK(l.options().max_pull_bytes == 910);
}

TEST_CASE("query limits: the message names the limit that stopped a call") {
  const Clock::time_point past = Clock::now() - milliseconds(10);
  const absl::Status engine =
      absl::DeadlineExceededError("query deadline exceeded");
  absl::Status s =
      QueryLimits(Limits(60000, 3600000), past - milliseconds(60000), kNone, 0,
                  nullptr, "query")
          .Outcome(engine);
  CHECK(s.code() == absl::StatusCode::kDeadlineExceeded);
  CHECK(s.message() ==
        "the query ran past the server's time limit of 60000 ms for calls "
        "without a deadline (--query-timeout-ms); set a deadline or "
        "timeout_ms on the call to allow it longer, up to 3600000 ms "
        "(--query-timeout-max-ms)");
  s = QueryLimits(Limits(60000, 3600000), past - milliseconds(3600000), kNone,
                  7200000, nullptr, "pull")
          .Outcome(engine);
  CHECK(s.message() ==
        "the pull ran past 3600000 ms, the longest time limit the server "
        "allows a call (--query-timeout-max-ms)");
  // The call's own deadline: the engine's message stands.
  s = QueryLimits(Limits(60000, 3600000), past, past, 0, nullptr, "query")
          .Outcome(engine);
  CHECK(s == engine);
  // A sink that saw the stream end after the deadline, and a client cancel.
  std::atomic<bool> cancelled{false};
  const QueryLimits own(Limits(60000, 3600000), past, past, 0, &cancelled,
                        "query");
  s = own.Outcome(absl::CancelledError("the client went away"));
  CHECK(s.code() == absl::StatusCode::kDeadlineExceeded);
  cancelled = true;
  s = own.Outcome(absl::CancelledError("the client went away"));
  CHECK(s.code() == absl::StatusCode::kCancelled);
  // Others pass through.
  CHECK(own.Outcome(absl::OkStatus()).ok());
  CHECK(own.Outcome(absl::ResourceExhaustedError("x")).code() ==
        absl::StatusCode::kResourceExhausted);
}

// A count over a 2000^3 cartesian product: runs for hours unless stopped.
constexpr char kProduct[] =
    "[:find (count ?a) . :where [?a :person/age _] [?b :person/age _] "
    "[?c :person/age _]]";

TEST_CASE("server: a query without a deadline stops at the server's limits") {
  TestServer t([](ServerConfig* c) {
    c->query_timeout_ms = 300;
    c->query_timeout_max_ms = 2000;
  });
  Transact(t, kPeopleSchema);
  Transact(t, People(0, 1000));
  Transact(t, People(1000, 1000));

  SUBCASE("the default time limit") {
    pb::QueryRequest req;
    req.set_query(kProduct);
    grpc::ClientContext ctx;  // no deadline
    auto reader = t.stub().Query(&ctx, req);
    pb::QueryResponse msg;
    while (reader->Read(&msg)) {
    }
    grpc::Status s = reader->Finish();
    CHECK_MESSAGE(s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED,
                  StatusText(s));
    CHECK_MESSAGE(
        s.error_message().find("(--query-timeout-ms)") != std::string::npos,
        StatusText(s));
  }
  SUBCASE("a longer timeout_ms is granted, up to the ceiling") {
    pb::QueryRequest req;
    req.set_query(kProduct);
    req.set_timeout_ms(1000);
    const Clock::time_point start = Clock::now();
    QueryOutcome q = RunQuery(t.stub(), req, 60000);
    CHECK_MESSAGE(q.status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED,
                  StatusText(q.status));
    // It ran its full second, past the 300 ms default.
    CHECK(Clock::now() - start >= milliseconds(1000));
    CHECK(q.status.error_message().find("--query-timeout") ==
          std::string::npos);
    req.set_timeout_ms(600000);
    q = RunQuery(t.stub(), req, 60000);
    CHECK_MESSAGE(q.status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED,
                  StatusText(q.status));
    CHECK_MESSAGE(q.status.error_message().find("(--query-timeout-max-ms)") !=
                      std::string::npos,
                  StatusText(q.status));
  }
  SUBCASE("a profiled Explain without a deadline") {
    pb::ExplainRequest req;
    req.set_query(kProduct);
    req.set_profile(true);
    pb::ExplainResponse resp;
    grpc::ClientContext ctx;
    grpc::Status s = t.stub().Explain(&ctx, req, &resp);
    CHECK_MESSAGE(s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED,
                  StatusText(s));
    CHECK_MESSAGE(
        s.error_message().find("(--query-timeout-ms)") != std::string::npos,
        StatusText(s));
  }
  // Nothing is stuck: a small query answers.
  QueryOutcome after =
      Query(t, "[:find (count ?e) . :where [?e :person/age 7]]");
  CHECK_MESSAGE(after.status.ok(), StatusText(after.status));
}

TEST_CASE("server: the scan limit stops a query with RESOURCE_EXHAUSTED") {
  TestServer t([](ServerConfig* c) { c->query_scan_limit = 1000000; });
  Transact(t, kPeopleSchema);
  Transact(t, People(0, 1000));
  Transact(t, People(1000, 1000));
  pb::QueryRequest req;
  req.set_query(kProduct);
  QueryOutcome q = RunQuery(t.stub(), req, 60000);
  CHECK_MESSAGE(q.status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED,
                StatusText(q.status));
  CHECK_MESSAGE(q.status.error_message() ==
                    "query stepped through more than 1000000 datoms and "
                    "rows, its scan limit; narrow the query, or raise the "
                    "limit (--query-scan-limit)",
                StatusText(q.status));
  // Small queries stay well inside it.
  QueryOutcome after =
      Query(t, "[:find (count ?e) . :where [?e :person/age 7]]");
  CHECK_MESSAGE(after.status.ok(), StatusText(after.status));
}

}  // namespace
}  // namespace mentat::server::testing
