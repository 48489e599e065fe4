#include <doctest/doctest.h>

#include "test_support.h"

namespace mentat::server::testing {
namespace {

TEST_CASE("server: transact returns tx, tempids, datoms") {
  TestServer t;
  pb::TransactResponse schema = Transact(t, kPeopleSchema);
  CHECK(schema.tx() > 0);
  CHECK(schema.basis_after() == schema.tx());
  CHECK(schema.basis_before() < schema.tx());

  pb::TransactRequest req;
  req.set_tx_data(
      R"([{:db/id "ann" :person/name "Ann" :person/age 31}
          [:db/add "bob" :person/name "Bob"]
          [:db/add "ann" :person/friend "bob"]])");
  req.set_return_datoms(true);
  pb::TransactResponse resp;
  auto ctx = Ctx();
  grpc::Status s = t.stub().Transact(ctx.get(), req, &resp);
  REQUIRE_MESSAGE(s.ok(), StatusText(s));
  CHECK(resp.basis_before() == schema.tx());
  CHECK(resp.tempids().size() == 2);
  CHECK(resp.tempids().count("ann") == 1);
  CHECK(resp.tempids().count("datomic.tx") == 0);
  // ann name+age+friend, bob name, tx instant.
  CHECK(resp.datom_count() == 5);
  CHECK(resp.datoms_size() == 5);
  CHECK(resp.tx_instant_micros() > 0);
  CHECK_FALSE(resp.replayed());
  bool saw_ref = false;
  for (const pb::Datom& d : resp.datoms()) {
    CHECK(d.tx() == resp.tx());
    if (d.v().has_ref()) {
      saw_ref = true;
      CHECK(d.v().ref() == resp.tempids().at("bob"));
    }
  }
  CHECK(saw_ref);
}

TEST_CASE("server: transact errors carry the right status") {
  TestServer t;
  Transact(t, kPeopleSchema);
  Transact(t, R"([{:person/name "Ann" :person/email "a@x"}])");

  // A syntax error names line and column.
  grpc::Status s = TransactStatus(t, "[[:db/add \"x\" :person/name]\n  {:a");
  CHECK(s.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(s.error_message().find("line 2") != std::string::npos);

  s = TransactStatus(t, R"([[:db/add "x" :no/such 1]])");
  CHECK(s.error_code() == grpc::StatusCode::INVALID_ARGUMENT);

  s = TransactStatus(t, R"([[:db/add "x" :person/age "old"]])");
  CHECK(s.error_code() == grpc::StatusCode::INVALID_ARGUMENT);

  s = TransactStatus(t, R"([{:person/name "Zed" :person/email "a@x"}])");
  CHECK(s.error_code() == grpc::StatusCode::FAILED_PRECONDITION);

  s = TransactStatus(t, "[]", "nope");
  CHECK(s.error_code() == grpc::StatusCode::NOT_FOUND);

  s = TransactStatus(t, "[]", "../etc");
  CHECK(s.error_code() == grpc::StatusCode::INVALID_ARGUMENT);

  s = TransactStatus(t, std::string(100000, '['));
  CHECK(s.error_code() == grpc::StatusCode::INVALID_ARGUMENT);

  // Invalid UTF-8 in a string field: gRPC's own parser would say INTERNAL.
  s = TransactStatus(t, "[[:db/add \"x\" :person/name \"\xff\xfe\"]]");
  CHECK(s.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(s.error_message().find("UTF-8") != std::string::npos);

  // A message over the server's limit.
  s = TransactStatus(t, std::string(65 << 20, ' '));
  CHECK(s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED);

  // Nothing of the above was written.
  QueryOutcome q = Query(t, "[:find ?n :where [_ :person/name ?n]]");
  REQUIRE(q.status.ok());
  CHECK(q.rows.size() == 1);
}

}  // namespace
}  // namespace mentat::server::testing
