// Explain with `profile` runs the query, so it obeys Query's limits: the
// per-query memory budget, the call's deadline, cancellation, and the
// --max-concurrent-queries slots.

#include <doctest/doctest.h>

#include <thread>

#include "test_support.h"

namespace mentat::server::testing {
namespace {

void LoadPeople(TestServer& t, int n) {
  Transact(t, kPeopleSchema);
  for (int i = 0; i < n; i += 1000) Transact(t, People(i, 1000));
}

// 90K joined rows made distinct: memory grows with them.
constexpr char kBig[] =
    "[:find (count ?b) :where [?a :person/age ?w] [?b :person/age ?w]]";
// 81M combinations through a few thousand distinct rows: runs for tens of
// seconds unless stopped, in little memory (2.7M ran in under 200 ms on a
// quiet machine, which made the deadline case race).
constexpr char kSlow[] =
    "[:find (count ?a) :where [?a :person/age ?w] [?b :person/age ?w] "
    "[?c :person/age ?w] [?d :person/age ?w]]";

grpc::Status Explain(TestServer& t, const std::string& query, bool profile,
                     int timeout_ms = 20000,
                     pb::ExplainResponse* out = nullptr) {
  pb::ExplainRequest req;
  req.set_query(query);
  req.set_profile(profile);
  pb::ExplainResponse resp;
  auto ctx = Ctx(timeout_ms);
  return t.stub().Explain(ctx.get(), req, out != nullptr ? out : &resp);
}

double Running(TestServer& t) {
  return MetricValue(HttpGet(t.server().http_port(), "/metrics"),
                     "mentat_running_queries");
}

// Polls until mentat_running_queries is `want` (up to ~20 s: on a busy
// machine a query can take seconds to start or to stop).
bool WaitRunning(TestServer& t, double want) {
  for (int i = 0; i < 4000; ++i) {
    if (Running(t) == want) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

TEST_CASE("server: a profiled Explain obeys the per-query memory budget") {
  TestServer t([](ServerConfig* c) { c->query_memory_bytes = 64 << 10; });
  LoadPeople(t, 3000);
  grpc::Status s = Explain(t, kBig, /*profile=*/true);
  CHECK(s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED);
  CHECK_MESSAGE(s.error_message().find("budget") != std::string::npos,
                s.error_message());
  // As Query does.
  CHECK(Query(t, kBig).status.error_code() ==
        grpc::StatusCode::RESOURCE_EXHAUSTED);
  // The plan alone runs nothing.
  pb::ExplainResponse plan;
  REQUIRE(Explain(t, kBig, /*profile=*/false, 20000, &plan).ok());
  CHECK_FALSE(plan.plan().empty());
  CHECK(Running(t) == 0);
}

TEST_CASE("server: a profiled Explain stops at its deadline and on cancel") {
  TestServer t([](ServerConfig* c) { c->max_concurrent_queries = 1; });
  LoadPeople(t, 3000);

  SUBCASE("deadline") {
    grpc::Status s = Explain(t, kSlow, /*profile=*/true, /*timeout_ms=*/200);
    CHECK(s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED);
    // The server stopped it too: its slot is free again at once.
    CHECK(WaitRunning(t, 0));
  }
  SUBCASE("cancellation") {
    pb::ExplainRequest req;
    req.set_query(kSlow);
    req.set_profile(true);
    grpc::ClientContext ctx;
    grpc::Status s;
    std::thread call([&] {
      pb::ExplainResponse resp;
      s = t.stub().Explain(&ctx, req, &resp);
    });
    REQUIRE(WaitRunning(t, 1));
    // It holds the only query slot meanwhile.
    CHECK(
        Query(t, "[:find ?e :where [?e :person/age 3]]").status.error_code() ==
        grpc::StatusCode::RESOURCE_EXHAUSTED);
    ctx.TryCancel();
    call.join();
    CHECK(s.error_code() == grpc::StatusCode::CANCELLED);
    CHECK(WaitRunning(t, 0));
  }
  QueryOutcome after = Query(t, "[:find ?e :where [?e :person/age 3]]");
  CHECK_MESSAGE(after.status.ok(), StatusText(after.status));
  CHECK(after.rows.size() == 30);
}

TEST_CASE("server: a profiled Explain takes a concurrent-query slot") {
  TestServer t([](ServerConfig* c) { c->max_concurrent_queries = 1; });
  LoadPeople(t, 3000);
  // A query that runs for tens of seconds holds the only slot. (A stream
  // of rows the client does not read held it only until its rows fit in
  // the transport's buffers: on a busy machine they sometimes did.)
  pb::QueryRequest req;
  req.set_query(kSlow);
  grpc::ClientContext ctx;
  auto reader = t.stub().Query(&ctx, req);
  REQUIRE(WaitRunning(t, 1));

  grpc::Status s = Explain(t, kBig, /*profile=*/true);
  CHECK(s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED);
  CHECK_MESSAGE(s.error_message().find("concurrent") != std::string::npos,
                s.error_message());
  // A plan without a run needs no slot.
  CHECK(Explain(t, kBig, /*profile=*/false).ok());

  ctx.TryCancel();
  reader->Finish().IgnoreError();
  REQUIRE(WaitRunning(t, 0));
  pb::ExplainResponse profiled;
  REQUIRE(Explain(t, kBig, /*profile=*/true, 20000, &profiled).ok());
  CHECK_FALSE(profiled.plan().empty());
  CHECK(Running(t) == 0);
}

}  // namespace
}  // namespace mentat::server::testing
