// Speculative transactions through the server: Transact's dry_run, and
// with_tx_data on Query, Pull and PullMany.

#include <doctest/doctest.h>

#include "test_support.h"
#include "with_tx_data.h"

namespace mentat::server::testing {
namespace {

constexpr char kAnnAndBob[] =
    R"([{:db/id "ann" :person/name "Ann" :person/age 31}
        {:db/id "bob" :person/name "Bob" :person/age 40}])";

pb::TransactResponse DryRun(TestServer& t, const std::string& edn,
                            const std::string& request_id = "") {
  pb::TransactRequest req;
  req.set_tx_data(edn);
  req.set_dry_run(true);
  req.set_return_datoms(true);
  req.set_request_id(request_id);
  pb::TransactResponse resp;
  auto ctx = Ctx();
  grpc::Status s = t.stub().Transact(ctx.get(), req, &resp);
  REQUIRE_MESSAGE(s.ok(), StatusText(s));
  return resp;
}

int64_t LatestBasis(TestServer& t) {
  QueryOutcome q = Query(t, "[:find ?e :where [?e :db/ident :db/ident]]");
  REQUIRE_MESSAGE(q.status.ok(), StatusText(q.status));
  return q.basis_tx;
}

QueryOutcome QueryWith(TestServer& t, const std::string& query,
                       const std::vector<std::string>& with,
                       uint32_t batch_rows = 0) {
  pb::QueryRequest req;
  req.set_query(query);
  req.set_batch_rows(batch_rows);
  for (const std::string& tx : with) req.add_with_tx_data(tx);
  return RunQuery(t.stub(), req);
}

TEST_CASE(
    "server: a dry run answers as the commit would, and commits nothing") {
  TestServer t;
  Transact(t, kPeopleSchema);
  const pb::TransactResponse people = Transact(t, kAnnAndBob);
  const int64_t basis = LatestBasis(t);
  CHECK(basis == people.tx());

  const std::string tx_data =
      R"([{:db/id "a" :person/name "Ann" :person/age 32}
          {:db/id "cy" :person/name "Cy"}])";
  pb::TransactResponse dry = DryRun(t, tx_data, "dry-1");
  CHECK(dry.dry_run());
  CHECK(dry.basis_before() == basis);
  CHECK(dry.basis_after() == dry.tx());
  CHECK(dry.tempids().at("a") == people.tempids().at("ann"));
  // Ann's age replaced (retraction and assertion), Cy's name, the instant.
  CHECK(dry.datom_count() == 4);
  CHECK(dry.datoms_size() == 4);

  // Nothing moved: the basis, the log, the data.
  CHECK(LatestBasis(t) == basis);
  QueryOutcome cy = Query(t, R"([:find ?e :where [?e :person/name "Cy"]])");
  CHECK(cy.rows.empty());
  pb::TxRangeRequest range;
  range.set_from_tx(basis + 1);
  auto ctx = Ctx();
  auto log = t.stub().TxRange(ctx.get(), range);
  pb::TxRangeResponse msg;
  int transactions = 0;
  while (log->Read(&msg)) transactions += msg.transactions_size();
  CHECK(log->Finish().ok());
  CHECK(transactions == 0);

  // The commit gets the same ids; the dry run's request id was not
  // recorded (the commit is not a replay).
  pb::TransactRequest req;
  req.set_tx_data(tx_data);
  req.set_request_id("dry-1");
  pb::TransactResponse real;
  auto real_ctx = Ctx();
  grpc::Status s = t.stub().Transact(real_ctx.get(), req, &real);
  REQUIRE_MESSAGE(s.ok(), StatusText(s));
  CHECK_FALSE(real.replayed());
  CHECK_FALSE(real.dry_run());
  CHECK(real.tx() == dry.tx());
  CHECK(real.tempids().at("cy") == dry.tempids().at("cy"));
}

TEST_CASE("server: a dry run that fails fails as the commit would") {
  TestServer t;
  Transact(t, kPeopleSchema);
  Transact(t, R"([{:person/name "Ann" :person/email "a@x"}])");
  auto dry_status = [&](const std::string& edn) {
    pb::TransactRequest req;
    req.set_tx_data(edn);
    req.set_dry_run(true);
    pb::TransactResponse resp;
    auto ctx = Ctx();
    return t.stub().Transact(ctx.get(), req, &resp);
  };
  grpc::Status s = dry_status(R"([{:person/name "Zed" :person/email "a@x"}])");
  CHECK(s.error_code() == grpc::StatusCode::FAILED_PRECONDITION);
  CHECK(s.error_message().find("unique") != std::string::npos);
  s = dry_status("[[:db/add \"x\" :person/name]\n  {:a");
  CHECK(s.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(s.error_message().find("line 2") != std::string::npos);
  s = dry_status(R"([[:db/add "x" :no/such 1]])");
  CHECK(s.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(s.error_message().find(":no/such") != std::string::npos);
}

TEST_CASE("server: queries and pulls read with_tx_data, chained") {
  TestServer t;
  Transact(t, kPeopleSchema);
  const pb::TransactResponse people = Transact(t, kAnnAndBob);
  const int64_t basis = people.tx();
  const std::vector<std::string> with = {
      R"([{:db/id "cy" :person/name "Cy" :person/age 7}])",
      R"([[:db/add [:person/name "Cy"] :person/friend [:person/name "Ann"]]
          [:db/retract [:person/name "Bob"] :person/age 40]])"};

  QueryOutcome q = QueryWith(
      t, "[:find ?n ?a :where [?e :person/name ?n] [?e :person/age ?a]]", with);
  REQUIRE_MESSAGE(q.status.ok(), StatusText(q.status));
  CHECK(q.basis_tx == basis);  // the committed value's
  CHECK(q.rows.size() == 2);   // Ann 31, Cy 7 (Bob's age retracted)
  q = QueryWith(t,
                "[:find ?n . :where [?e :person/friend ?f] "
                "[?f :person/name \"Ann\"] [?e :person/name ?n]]",
                with);
  REQUIRE_MESSAGE(q.status.ok(), StatusText(q.status));
  REQUIRE(q.rows.size() == 1);
  CHECK(q.rows[0].values(0).string_value() == "Cy");

  // Pull and PullMany.
  pb::PullRequest pull;
  pull.set_pattern("[:person/age {:person/friend [:person/name]}]");
  pull.mutable_entity()->mutable_lookup()->set_attribute(":person/name");
  pull.mutable_entity()->mutable_lookup()->mutable_value()->set_string_value(
      "Cy");
  for (const std::string& tx : with) pull.add_with_tx_data(tx);
  pb::PullResponse pulled;
  auto ctx = Ctx();
  grpc::Status s = t.stub().Pull(ctx.get(), pull, &pulled);
  REQUIRE_MESSAGE(s.ok(), StatusText(s));
  CHECK(pulled.basis_tx() == basis);
  CHECK(pulled.result().DebugString().find("Ann") != std::string::npos);
  pb::PullManyRequest many;
  many.set_pattern("[:person/age]");
  *many.add_entities() = pull.entity();
  for (const std::string& tx : with) many.add_with_tx_data(tx);
  pb::PullManyResponse pulled_many;
  auto many_ctx = Ctx();
  s = t.stub().PullMany(many_ctx.get(), many, &pulled_many);
  REQUIRE_MESSAGE(s.ok(), StatusText(s));
  REQUIRE(pulled_many.results_size() == 1);
  CHECK(pulled_many.results(0).DebugString().find("7") != std::string::npos);

  // Nothing was committed.
  CHECK(LatestBasis(t) == basis);
  CHECK(Query(t, R"([:find ?e :where [?e :person/name "Cy"]])").rows.empty());
}

TEST_CASE("server: a query with with_tx_data resumes on the same value") {
  TestServer t;
  Transact(t, kPeopleSchema);
  Transact(t, People(0, 10));
  const std::vector<std::string> with = {People(10, 10)};
  const std::string query = "[:find ?n :where [_ :person/name ?n]]";
  QueryOutcome all = QueryWith(t, query, with, 4);
  REQUIRE_MESSAGE(all.status.ok(), StatusText(all.status));
  REQUIRE(all.rows.size() == 20);
  REQUIRE(all.messages.size() > 2);

  pb::QueryRequest resumed;
  resumed.set_query(query);
  resumed.set_batch_rows(4);
  for (const std::string& tx : with) resumed.add_with_tx_data(tx);
  resumed.set_resume_token(all.messages[0].resume_token());
  QueryOutcome rest = RunQuery(t.stub(), resumed);
  REQUIRE_MESSAGE(rest.status.ok(), StatusText(rest.status));
  CHECK(rest.rows.size() == 16);
  // Another with_tx_data is another request.
  resumed.set_with_tx_data(0, People(10, 9));
  QueryOutcome other = RunQuery(t.stub(), resumed);
  CHECK(other.status.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
}

std::vector<pb::Datom> ReadDatoms(TestServer& t, const pb::DatomsRequest& req,
                                  grpc::Status* status,
                                  std::vector<std::string>* tokens = nullptr) {
  std::vector<pb::Datom> out;
  auto ctx = Ctx();
  auto reader = t.stub().Datoms(ctx.get(), req);
  pb::DatomsResponse msg;
  while (reader->Read(&msg)) {
    for (const pb::Datom& d : msg.datoms()) out.push_back(d);
    if (tokens != nullptr) tokens->push_back(msg.resume_token());
  }
  *status = reader->Finish();
  return out;
}

TEST_CASE("server: datoms read with_tx_data, and resume on the same value") {
  TestServer t;
  Transact(t, kPeopleSchema);
  Transact(t, People(0, 10));
  const int64_t basis = LatestBasis(t);
  pb::DatomsRequest req;
  req.set_index(pb::AEVT);
  req.add_components()->set_keyword(":person/name");
  req.set_batch_size(4);
  grpc::Status s;
  CHECK(ReadDatoms(t, req, &s).size() == 10);
  REQUIRE_MESSAGE(s.ok(), StatusText(s));

  req.add_with_tx_data(People(10, 10));
  req.add_with_tx_data(R"([[:db/retract [:person/name "person 0"]
                            :person/name "person 0"]])");
  std::vector<std::string> tokens;
  std::vector<pb::Datom> all = ReadDatoms(t, req, &s, &tokens);
  REQUIRE_MESSAGE(s.ok(), StatusText(s));
  CHECK(all.size() == 19);  // 10 committed and 10 speculative, 1 retracted
  for (const pb::Datom& d : all) {
    CHECK(d.v().string_value() != "person 0");
  }
  REQUIRE(tokens.size() > 2);
  pb::DatomsRequest resumed = req;
  resumed.set_resume_token(tokens[1]);
  std::vector<pb::Datom> rest = ReadDatoms(t, resumed, &s);
  REQUIRE_MESSAGE(s.ok(), StatusText(s));
  REQUIRE(rest.size() == 19 - 8);
  CHECK(rest.front().e() == all[8].e());
  // Another with_tx_data is another request.
  resumed.set_with_tx_data(0, People(10, 9));
  ReadDatoms(t, resumed, &s);
  CHECK(s.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(s.error_message().find("with_tx_data") != std::string::npos);

  pb::DatomsRequest bad = req;
  bad.set_with_tx_data(1, "[[:db/add");
  ReadDatoms(t, bad, &s);
  CHECK(s.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(s.error_message().find("with_tx_data[1]: line 1") != std::string::npos);
  CHECK(LatestBasis(t) == basis);
}

TEST_CASE("server: explain plans against with_tx_data") {
  TestServer t;
  Transact(t, kPeopleSchema);
  Transact(t, kAnnAndBob);
  const int64_t basis = LatestBasis(t);
  // :pet/name exists only in the speculative value.
  pb::ExplainRequest req;
  req.set_query("[:find ?n :where [?p :pet/name ?n]]");
  req.set_profile(true);
  pb::ExplainResponse plan;
  auto ctx = Ctx();
  grpc::Status s = t.stub().Explain(ctx.get(), req, &plan);
  CHECK(s.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(s.error_message().find(":pet/name") != std::string::npos);

  req.add_with_tx_data(R"([{:db/ident :pet/name :db/valueType :db.type/string
                            :db/cardinality :db.cardinality/one}])");
  req.add_with_tx_data(R"([{:pet/name "Rex"}])");
  ctx = Ctx();
  s = t.stub().Explain(ctx.get(), req, &plan);
  REQUIRE_MESSAGE(s.ok(), StatusText(s));
  CHECK(plan.basis_tx() == basis);  // the committed value's
  CHECK(plan.plan().find(":pet/name") != std::string::npos);

  req.set_with_tx_data(1, R"([{:pet/name 5}])");
  ctx = Ctx();
  s = t.stub().Explain(ctx.get(), req, &plan);
  CHECK(s.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(s.error_message().find("with_tx_data[1]") != std::string::npos);
  CHECK(LatestBasis(t) == basis);
}

TEST_CASE("server: with_tx_data that fails names its entry") {
  TestServer t;
  Transact(t, kPeopleSchema);
  Transact(t, kAnnAndBob);
  const int64_t basis = LatestBasis(t);
  const std::string query = "[:find ?n :where [_ :person/name ?n]]";
  QueryOutcome q =
      QueryWith(t, query, {R"([{:person/name "Cy"}])", "[[:db/add"});
  CHECK(q.status.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(q.status.error_message().find("with_tx_data[1]: line 1") !=
        std::string::npos);
  q = QueryWith(t, query, {R"([[:db/add "x" :no/such 1]])"});
  CHECK(q.status.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(q.status.error_message().find("with_tx_data[0]") != std::string::npos);
  CHECK(q.status.error_message().find(":no/such") != std::string::npos);
  q = QueryWith(t, query,
                {R"([[:db/add [:person/name "Bob"] :person/name "Ann"]])"});
  CHECK(q.status.error_code() == grpc::StatusCode::FAILED_PRECONDITION);
  CHECK(q.status.error_message().find("unique conflict") != std::string::npos);

  // Each entry is a layer every read merges: their number is bounded.
  q = QueryWith(t, query, std::vector<std::string>(kMaxWithTxData + 1, "[]"));
  CHECK(q.status.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(q.status.error_message().find("at most 256") != std::string::npos);
  q = QueryWith(t, query, std::vector<std::string>(kMaxWithTxData, "[]"));
  CHECK_MESSAGE(q.status.ok(), StatusText(q.status));
  CHECK(q.rows.size() == 2);

  pb::PullRequest pull;
  pull.set_pattern("[*]");
  pull.mutable_entity()->set_id(1);
  pull.add_with_tx_data("[[:db/add");
  pb::PullResponse pulled;
  auto ctx = Ctx();
  grpc::Status s = t.stub().Pull(ctx.get(), pull, &pulled);
  CHECK(s.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(s.error_message().find("with_tx_data[0]") != std::string::npos);
  CHECK(LatestBasis(t) == basis);
}

}  // namespace
}  // namespace mentat::server::testing
