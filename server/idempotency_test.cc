#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <thread>

#include "test_support.h"

namespace mentat::server::testing {
namespace {

pb::TransactRequest Idempotent(const std::string& edn, const std::string& id) {
  pb::TransactRequest req;
  req.set_tx_data(edn);
  req.set_request_id(id);
  return req;
}

grpc::Status Send(TestServer& t, const pb::TransactRequest& req,
                  pb::TransactResponse* resp, int timeout_ms = 20000) {
  auto ctx = Ctx(timeout_ms);
  return t.stub().Transact(ctx.get(), req, resp);
}

std::map<std::string, int64_t> Tempids(const pb::TransactResponse& r) {
  return {r.tempids().begin(), r.tempids().end()};
}

size_t CountPeople(TestServer& t) {
  QueryOutcome q = Query(t, "[:find ?e :where [?e :person/age _]]");
  REQUIRE_MESSAGE(q.status.ok(), StatusText(q.status));
  return q.rows.size();
}

TEST_CASE("server: a retried transact with a request id commits once") {
  TestServer t;
  Transact(t, kPeopleSchema);
  const pb::TransactRequest req = Idempotent(
      R"([{:db/id "a" :person/age 1} {:db/id "b" :person/age 2}])", "req-1");
  pb::TransactResponse first, second;
  REQUIRE(Send(t, req, &first).ok());
  CHECK_FALSE(first.replayed());
  REQUIRE(Send(t, req, &second).ok());
  CHECK(second.replayed());
  CHECK(second.tx() == first.tx());
  CHECK(second.tx_instant_micros() == first.tx_instant_micros());
  CHECK(second.basis_before() == first.basis_before());
  CHECK(second.datom_count() == first.datom_count());
  CHECK(Tempids(second) == Tempids(first));
  CHECK(second.tempids().size() == 2);
  CHECK_FALSE(second.tempids_missing());
  CHECK(CountPeople(t) == 2);

  // With datoms on the replay: read back from the log.
  pb::TransactRequest with_datoms = req;
  with_datoms.set_return_datoms(true);
  pb::TransactResponse third;
  REQUIRE(Send(t, with_datoms, &third).ok());
  CHECK(third.datoms_size() == first.datom_count());

  // Another id transacts again.
  pb::TransactResponse other;
  REQUIRE(Send(t, Idempotent(req.tx_data(), "req-2"), &other).ok());
  CHECK(other.tx() != first.tx());
  CHECK(CountPeople(t) == 4);

  SUBCASE("after a restart, with the tempid map") {
    t.Restart();
    pb::TransactResponse replay;
    REQUIRE(Send(t, req, &replay).ok());
    CHECK(replay.replayed());
    CHECK(replay.tx() == first.tx());
    CHECK(Tempids(replay) == Tempids(first));
    CHECK_FALSE(replay.tempids_missing());
    CHECK(CountPeople(t) == 4);
  }
  SUBCASE("after a crash that lost the tempid note") {
    t.Stop();
    std::filesystem::remove(t.config().data_dir +
                            "/default/mentatd-requests.log");
    t.Start();
    pb::TransactResponse replay;
    REQUIRE(Send(t, req, &replay).ok());
    CHECK(replay.replayed());
    CHECK(replay.tx() == first.tx());
    CHECK(replay.basis_before() == first.basis_before());
    CHECK(replay.datom_count() == first.datom_count());
    CHECK(replay.tempids_missing());
    CHECK(CountPeople(t) == 4);
  }
}

TEST_CASE("server: concurrent and dropped retries of one request id") {
  TestServer t;
  Transact(t, kPeopleSchema);
  const pb::TransactRequest req =
      Idempotent(R"([{:db/id "a" :person/age 1}])", "same");
  std::vector<pb::TransactResponse> responses(8);
  std::vector<grpc::Status> statuses(8);
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] { statuses[i] = Send(t, req, &responses[i]); });
  }
  for (auto& th : threads) th.join();
  int originals = 0;
  for (int i = 0; i < 8; ++i) {
    REQUIRE_MESSAGE(statuses[i].ok(), StatusText(statuses[i]));
    CHECK(responses[i].tx() == responses[0].tx());
    if (!responses[i].replayed()) ++originals;
  }
  CHECK(originals == 1);
  CHECK(CountPeople(t) == 1);

  // A client that gave up before the answer (its connection dropped)
  // retries: one transaction either way.
  const pb::TransactRequest dropped =
      Idempotent(R"([{:db/id "b" :person/age 2}])", "dropped");
  pb::TransactResponse ignored;
  (void)Send(t, dropped, &ignored, /*timeout_ms=*/1);
  pb::TransactResponse retry;
  grpc::Status s;
  for (int i = 0; i < 50; ++i) {
    s = Send(t, dropped, &retry);
    if (s.ok()) break;
  }
  REQUIRE_MESSAGE(s.ok(), StatusText(s));
  CHECK(CountPeople(t) == 2);
}

TEST_CASE("server: request ids expire after the window") {
  TestServer t([](ServerConfig* c) { c->idempotency_window_s = 1; });
  Transact(t, kPeopleSchema);
  const pb::TransactRequest req =
      Idempotent(R"([{:db/id "a" :person/age 1}])", "short-lived");
  pb::TransactResponse first, second;
  REQUIRE(Send(t, req, &first).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  REQUIRE(Send(t, req, &second).ok());
  CHECK_FALSE(second.replayed());
  CHECK(second.tx() != first.tx());
  CHECK(CountPeople(t) == 2);
  // Too long an id.
  pb::TransactResponse r;
  CHECK(Send(t, Idempotent("[]", std::string(300, 'x')), &r).error_code() ==
        grpc::StatusCode::INVALID_ARGUMENT);
}

}  // namespace
}  // namespace mentat::server::testing
