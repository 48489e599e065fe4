// The request-id ledger is the server's own: tx-data can neither bind a
// request id to its transaction (and so hijack a later request's id), nor
// change or retract the ledger's attributes.

#include <doctest/doctest.h>

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

// `edn` must be refused with INVALID_ARGUMENT naming `what`.
void CheckRefused(TestServer& t, const std::string& edn,
                  const std::string& what) {
  grpc::Status s = TransactStatus(t, edn);
  CHECK_MESSAGE(s.error_code() == grpc::StatusCode::INVALID_ARGUMENT,
                edn << " -> " << StatusText(s));
  CHECK_MESSAGE(s.error_message().find(what) != std::string::npos,
                edn << " -> " << StatusText(s));
}

TEST_CASE("server: tx-data cannot write the request-id ledger") {
  TestServer t;
  Transact(t, kPeopleSchema);
  const std::string kId = ":mentat.tx/request-id";
  const std::string kDigest = ":mentat.tx/request-digest";

  // A writer claiming someone else's id for its own transaction.
  CheckRefused(
      t, R"([[:db/add "datomic.tx" :mentat.tx/request-id "victim-1"]])", kId);
  CheckRefused(t, R"([{:db/id "datomic.tx" :mentat.tx/request-id "victim-1"}])",
               kId);
  CheckRefused(t, R"([[:db/add "datomic.tx" :mentat.tx/request-digest 7]])",
               kDigest);
  CheckRefused(t, R"([{:person/age 9 :mentat.tx/request-id "victim-1"}])", kId);

  // The victim's transaction commits; it is not a replay of another.
  pb::TransactResponse victim, replay;
  const pb::TransactRequest req = WithId("[{:person/age 1}]", "victim-1");
  REQUIRE(Send(t, req, &victim).ok());
  CHECK_FALSE(victim.replayed());
  CHECK(CountPeople(t) == 1);

  // Its record cannot be undone or rewritten by tx-data ...
  const std::string tx = std::to_string(victim.tx());
  CheckRefused(t, "[[:db/retractEntity " + tx + "]]", kId);
  CheckRefused(t, "[[:db/retract " + tx + " :mentat.tx/request-id]]", kId);
  CheckRefused(t, "[[:db/add " + tx + " :mentat.tx/request-id \"victim-2\"]]",
               kId);
  // ... nor can the ledger's schema change.
  CheckRefused(
      t,
      "[[:db/retract :mentat.tx/request-id :db/ident :mentat.tx/request-id]]",
      kId);
  CheckRefused(t, R"([{:db/id :mentat.tx/request-id :db/doc "mine"}])", kId);
  CheckRefused(t,
               R"([[:db/add :mentat.tx/request-digest :db/ident :x/digest]])",
               kDigest);
  CheckRefused(t, R"([{:db/ident :mentat.tx/note :db/valueType :db.type/string
                       :db/cardinality :db.cardinality/one}])",
               ":mentat.tx/note");

  // Request ids work as before, across a restart too.
  REQUIRE(Send(t, req, &replay).ok());
  CHECK(replay.replayed());
  CHECK(replay.tx() == victim.tx());
  t.Restart();
  REQUIRE(Send(t, req, &replay).ok());
  CHECK(replay.replayed());
  CHECK(replay.tx() == victim.tx());
  pb::TransactResponse second;
  REQUIRE(Send(t, WithId("[{:person/age 2}]", "victim-2"), &second).ok());
  CHECK_FALSE(second.replayed());
  CHECK(CountPeople(t) == 2);

  // Reading the ledger is allowed.
  QueryOutcome q =
      Query(t, "[:find ?tx . :where [?tx :mentat.tx/request-id \"victim-2\"]]");
  REQUIRE_MESSAGE(q.status.ok(), StatusText(q.status));
  REQUIRE(q.rows.size() == 1);
}

}  // namespace
}  // namespace mentat::server::testing
