// The async unary methods (Ping, QueryFirst, Pull; async_unary.h): calls
// from many connections at once each get their own answer, and a call
// still waiting when the server stops is answered and drained, with
// threads that sleep at once and with threads that poll first.

#include <doctest/doctest.h>

#include <thread>
#include <vector>

#include "test_support.h"

namespace mentat::server::testing {
namespace {

constexpr int kPeople = 40;

// A subcase each way the unary threads can wait (--unary-spin-us): threads
// that sleep at once (0) and threads that poll 20 ms before they sleep.
int SpinEachWay() {
  int spin_us = 0;
  SUBCASE("threads that sleep at once") { spin_us = 0; }
  SUBCASE("threads that poll 20 ms before they sleep") { spin_us = 20000; }
  return spin_us;
}

TEST_CASE("server: point reads from many connections each get their answer") {
  // Threads that poll between calls (--unary-spin-us) serve the same
  // answers as threads that sleep at once, and stop as they do.
  const int spin_us = SpinEachWay();
  TestServer t([spin_us](ServerConfig* c) {
    c->unary_threads = 2;
    c->unary_spin_us = spin_us;
  });
  Transact(t, kPeopleSchema);
  Transact(t, People(0, kPeople));

  constexpr int kClients = 6;
  constexpr int kRounds = 60;
  std::vector<std::string> failures(kClients);
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&t, &failures, c] {
      auto stub = OwnStub(t, c);
      auto fail = [&](const std::string& what) {
        if (failures[c].empty()) failures[c] = what;
      };
      for (int r = 0; r < kRounds && failures[c].empty(); ++r) {
        const int i = (c * kRounds + r) % kPeople;
        const std::string name = "person " + std::to_string(i);

        auto ping_ctx = Ctx();
        pb::PingResponse pong;
        grpc::Status s = stub->Ping(ping_ctx.get(), pb::PingRequest(), &pong);
        if (!s.ok()) fail("Ping: " + StatusText(s));

        // The age of person i, by name: a different answer per call, so
        // an answer sent to the wrong call shows.
        pb::QueryRequest q;
        q.set_query(
            "[:find ?age . :in $ ?n :where [?e :person/name ?n] "
            "[?e :person/age ?age]]");
        q.add_inputs()->set_edn("\"" + name + "\"");
        auto q_ctx = Ctx();
        pb::QueryResponse answer;
        s = stub->QueryFirst(q_ctx.get(), q, &answer);
        if (!s.ok()) {
          fail("QueryFirst: " + StatusText(s));
        } else if (answer.rows_size() != 1 ||
                   answer.rows(0).values_size() != 1 ||
                   answer.rows(0).values(0).long_value() != i % 100) {
          fail("QueryFirst for " + name + ": " + answer.ShortDebugString());
        }

        pb::PullRequest p;
        p.set_pattern("[:person/name :person/age]");
        p.mutable_entity()->mutable_lookup()->set_attribute(":person/name");
        p.mutable_entity()->mutable_lookup()->mutable_value()->set_string_value(
            name);
        auto p_ctx = Ctx();
        pb::PullResponse pulled;
        s = stub->Pull(p_ctx.get(), p, &pulled);
        if (!s.ok()) {
          fail("Pull: " + StatusText(s));
          continue;
        }
        std::string got_name;
        int64_t got_age = -1;
        for (const pb::MapEntry& e : pulled.result().map().entries()) {
          if (e.key().keyword() == "person/name") {
            got_name = e.value().string_value();
          }
          if (e.key().keyword() == "person/age") {
            got_age = e.value().long_value();
          }
        }
        if (got_name != name || got_age != i % 100) {
          fail("Pull for " + name + ": " + pulled.ShortDebugString());
        }
      }
    });
  }
  for (std::thread& c : clients) c.join();
  for (int c = 0; c < kClients; ++c)
    CHECK_MESSAGE(failures[c].empty(), failures[c]);

  int status = 0;
  const std::string m = HttpGet(t.server().http_port(), "/metrics", &status);
  CHECK(MetricValue(m,
                    "mentat_rpc_requests_total{method=\"QueryFirst\","
                    "code=\"OK\"}") == kClients * kRounds);
  CHECK(MetricValue(m,
                    "mentat_rpc_requests_total{method=\"Pull\","
                    "code=\"OK\"}") == kClients * kRounds);
}

TEST_CASE("server: a QueryFirst waiting for its basis is answered at stop") {
  const int spin_us = SpinEachWay();
  TestServer t([spin_us](ServerConfig* c) {
    c->max_basis_wait_ms = 600000;
    c->unary_spin_us = spin_us;
  });
  Transact(t, kPeopleSchema);
  grpc::Status waited;
  std::thread waiter([&] {
    pb::QueryRequest q;
    q.set_query("[:find ?e :where [?e :person/name]]");
    // A basis far ahead: the call waits (BasisWaiters) off every thread
    // of async_unary.cc until the server stops.
    q.set_min_basis_tx(1'000'000);
    auto ctx = Ctx(120000);
    pb::QueryResponse answer;
    waited = t.stub().QueryFirst(ctx.get(), q, &answer);
  });
  // The call has reached the server once it waits (a condition, polled:
  // not a sleep).
  int status = 0;
  bool waiting = false;
  const auto give_up =
      std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!waiting && std::chrono::steady_clock::now() < give_up) {
    const std::string m = HttpGet(t.server().http_port(), "/metrics", &status);
    waiting = MetricValue(m, "mentat_basis_waits") == 1;
    if (!waiting) std::this_thread::yield();
  }
  CHECK(waiting);
  t.server().Shutdown();
  waiter.join();
  CHECK(waited.error_code() == grpc::StatusCode::UNAVAILABLE);
}

}  // namespace
}  // namespace mentat::server::testing
