// A request id reused with other tx-data is refused (FAILED_PRECONDITION
// naming the id), in memory, after a restart, and when only the database
// remembers the id (the side file lost).

#include <doctest/doctest.h>

#include <filesystem>

#include "test_support.h"

namespace mentat::server::testing {
namespace {

pb::TransactRequest WithId(const std::string& edn, const std::string& id) {
  pb::TransactRequest req;
  req.set_tx_data(edn);
  req.set_request_id(id);
  return req;
}

grpc::Status Send(TestServer& t, const pb::TransactRequest& req,
                  pb::TransactResponse* resp) {
  auto ctx = Ctx();
  return t.stub().Transact(ctx.get(), req, resp);
}

size_t CountPeople(TestServer& t) {
  QueryOutcome q = Query(t, "[:find ?e :where [?e :person/age _]]");
  REQUIRE_MESSAGE(q.status.ok(), StatusText(q.status));
  return q.rows.size();
}

// Sends `other` (same id, other tx-data) and checks the refusal.
void CheckRefused(TestServer& t, const pb::TransactRequest& other,
                  int64_t original_tx) {
  pb::TransactResponse resp;
  grpc::Status s = Send(t, other, &resp);
  CHECK(s.error_code() == grpc::StatusCode::FAILED_PRECONDITION);
  CHECK_MESSAGE(s.error_message().find("\"" + other.request_id() + "\"") !=
                    std::string::npos,
                s.error_message());
  CHECK_MESSAGE(
      s.error_message().find(std::to_string(original_tx)) != std::string::npos,
      s.error_message());
}

TEST_CASE("server: a request id reused with other tx-data is refused") {
  TestServer t;
  Transact(t, kPeopleSchema);
  const pb::TransactRequest first =
      WithId(R"([{:db/id "a" :person/age 1}])", "order-17");
  const pb::TransactRequest other =
      WithId(R"([{:db/id "a" :person/age 2}])", "order-17");
  pb::TransactResponse original, replay;
  REQUIRE(Send(t, first, &original).ok());
  CheckRefused(t, other, original.tx());
  // The same tx-data still replays; nothing was transacted twice.
  REQUIRE(Send(t, first, &replay).ok());
  CHECK(replay.replayed());
  CHECK(replay.tx() == original.tx());
  CHECK(CountPeople(t) == 1);
  // Nor does the refusal spoil the id: return_datoms is not part of it.
  pb::TransactRequest with_datoms = first;
  with_datoms.set_return_datoms(true);
  REQUIRE(Send(t, with_datoms, &replay).ok());
  CHECK(replay.replayed());

  SUBCASE("after a restart") {
    t.Restart();
    CheckRefused(t, other, original.tx());
    REQUIRE(Send(t, first, &replay).ok());
    CHECK(replay.replayed());
  }
  SUBCASE("when only the database remembers the id") {
    t.Stop();
    std::filesystem::remove(t.config().data_dir +
                            "/default/mentatd-requests.log");
    t.Start();
    CheckRefused(t, other, original.tx());
    REQUIRE(Send(t, first, &replay).ok());
    CHECK(replay.replayed());
    CHECK(replay.tempids_missing());
  }
  CHECK(CountPeople(t) == 1);
}

TEST_CASE("server: the tx-data digest is stored with the transaction") {
  TestServer t;
  Transact(t, kPeopleSchema);
  pb::TransactResponse resp;
  REQUIRE(Send(t, WithId("[{:person/age 5}]", "digest-1"), &resp).ok());
  QueryOutcome q = Query(t,
                         "[:find ?d . :in $ ?id :where "
                         "[?tx :mentat.tx/request-id ?id] "
                         "[?tx :mentat.tx/request-digest ?d]]",
                         {"\"digest-1\""});
  REQUIRE_MESSAGE(q.status.ok(), StatusText(q.status));
  REQUIRE(q.rows.size() == 1);
  CHECK(q.rows[0].values(0).kind_case() == pb::Value::kLongValue);
  // A transaction without an id carries neither attribute.
  pb::TransactResponse plain = Transact(t, "[{:person/age 6}]");
  CHECK(plain.datom_count() == resp.datom_count() - 2);
}

}  // namespace
}  // namespace mentat::server::testing
