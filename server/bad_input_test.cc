// The bad-input catalogue (docs/bad-input.md): every class of bad input
// sent through the server, with the status it must answer and a word the
// message must hold; the server keeps serving afterwards. Classes tested
// elsewhere (transact_test.cc, admin_test.cc, the conformance suite) are
// named in the catalogue; this file holds the rest. With
// MENTAT_BAD_INPUT_VERBOSE set it prints every answer (the catalogue's
// examples come from that run).

#include <doctest/doctest.h>

#include <cstdlib>
#include <thread>

#include "test_support.h"

namespace mentat::server::testing {
namespace {

bool Verbose() { return std::getenv("MENTAT_BAD_INPUT_VERBOSE") != nullptr; }

void Expect(const std::string& what, const grpc::Status& s,
            grpc::StatusCode code, const std::string& word) {
  CAPTURE(what);
  CHECK_MESSAGE(s.error_code() == code, StatusText(s));
  CHECK_MESSAGE(s.error_message().find(word) != std::string::npos,
                StatusText(s), " lacks \"", word, "\"");
  if (Verbose()) {
    MESSAGE(what, " -> ", StatusText(s).substr(0, 300));
  }
}

grpc::Status QueryStatus(TestServer& t, const std::string& query,
                         const std::vector<std::string>& inputs = {},
                         int64_t timeout_ms = 0) {
  pb::QueryRequest req;
  req.set_query(query);
  for (const std::string& in : inputs) req.add_inputs()->set_edn(in);
  if (timeout_ms > 0) req.set_timeout_ms(timeout_ms);
  return RunQuery(t.stub(), req, 60000).status;
}

// The server answers a small query correctly: it survived what came before.
void StillServes(TestServer& t) {
  QueryOutcome q = Query(t,
                         "[:find ?a . :where [?e :person/name \"Ann\"] "
                         "[?e :person/age ?a]]");
  REQUIRE_MESSAGE(q.status.ok(), StatusText(q.status));
  REQUIRE(q.rows.size() == 1);
  CHECK(q.rows[0].values(0).long_value() == 30);
}

TEST_CASE("bad input: queries") {
  TestServer t;
  Transact(t, kPeopleSchema);
  Transact(t, R"([{:db/id "ann" :person/name "Ann" :person/age 30}
                  {:db/id "ben" :person/name "Ben" :person/age 25
                   :person/friend "ann"}])");
  Transact(t, People(0, 2000));

  Expect("malformed EDN in a query",
         QueryStatus(t, "[:find ?e :where [?e :person/name"),
         grpc::StatusCode::INVALID_ARGUMENT, "line 1");
  Expect("malformed EDN in an input",
         QueryStatus(t, "[:find ?e :in $ ?n :where [?e :person/name ?n]]",
                     {"\"Ann"}),
         grpc::StatusCode::INVALID_ARGUMENT, "input");
  Expect("unknown attribute in a query",
         QueryStatus(t, "[:find ?e :where [?e :no/such _]]"),
         grpc::StatusCode::INVALID_ARGUMENT, "no/such");
  Expect("wrong type of a query constant",
         QueryStatus(t, "[:find ?e :where [?e :person/age \"old\"]]"),
         grpc::StatusCode::INVALID_ARGUMENT, "person/age");
  Expect("invalid UTF-8 in a query",
         QueryStatus(t, "[:find ?e :where [?e :person/name \"\xff\xfe\"]]"),
         grpc::StatusCode::INVALID_ARGUMENT, "UTF-8");

  // Deep nesting: of the EDN, of expressions, of not/or clauses.
  Expect("deeply nested EDN in a query",
         QueryStatus(t, "[:find ?e :where " + std::string(100000, '[')),
         grpc::StatusCode::INVALID_ARGUMENT, "nest");
  {
    std::string expr = "?a";
    for (int i = 0; i < 5000; ++i) expr = "(+ " + expr + " 1)";
    Expect("deeply nested expression",
           QueryStatus(
               t, "[:find ?x :where [?e :person/age ?a] [" + expr + " ?x]]"),
           grpc::StatusCode::INVALID_ARGUMENT, "nest");
  }
  {
    std::string clause = "[?e :person/age 30]";
    for (int i = 0; i < 5000; ++i) clause = "(not " + clause + ")";
    Expect(
        "deeply nested not",
        QueryStatus(t, "[:find ?e :where [?e :person/name _] " + clause + "]"),
        grpc::StatusCode::INVALID_ARGUMENT, "nest");
  }

  // A huge inputs collection: answered (it is only big), or refused by the
  // message size limit; never a crash.
  {
    std::string names = "[";
    for (int i = 0; i < 1000000; ++i) {
      names += "\"person " + std::to_string(i) + "\" ";
    }
    names += "]";
    pb::QueryRequest req;
    req.set_query(
        "[:find (count ?e) . :in $ [?n ...] :where [?e :person/name ?n]]");
    req.add_inputs()->set_edn(names);
    QueryOutcome q = RunQuery(t.stub(), req, 60000);
    REQUIRE_MESSAGE(q.status.ok(), StatusText(q.status));
    REQUIRE(q.rows.size() == 1);
    CHECK(q.rows[0].values(0).long_value() == 2000);
    if (Verbose()) MESSAGE("a 1,000,000-element collection input -> OK");
    pb::QueryRequest over = req;
    over.mutable_inputs(0)->set_edn(std::string(65 << 20, ' '));
    Expect("inputs over the message limit",
           RunQuery(t.stub(), over, 60000).status,
           grpc::StatusCode::RESOURCE_EXHAUSTED, "");
  }

  // Recursive rules without a base case: the fixpoint is empty, not an
  // endless loop.
  {
    pb::QueryRequest req;
    req.set_query("[:find ?a ?b :in $ % :where (reach ?a ?b)]");
    req.add_inputs()->set_edn("[[(reach ?a ?b) (reach ?a ?c) (reach ?c ?b)]]");
    QueryOutcome q = RunQuery(t.stub(), req, 60000);
    CHECK_MESSAGE(q.status.ok(), StatusText(q.status));
    CHECK(q.rows.empty());
    if (Verbose()) {
      MESSAGE("a recursive rule without a base case -> ", StatusText(q.status),
              ", ", q.rows.size(), " rows");
    }
    // Recursion that only grows (a fresh value per step) ends at the
    // query's deadline or memory budget.
    pb::QueryRequest grow;
    grow.set_query("[:find ?n :in $ % :where (count-up 0 ?n)]");
    grow.add_inputs()->set_edn(
        "[[(count-up ?a ?n) [(+ ?a 0) ?n]] "
        "[(count-up ?a ?n) [(+ ?a 1) ?b] (count-up ?b ?n)]]");
    grow.set_timeout_ms(2000);
    grpc::Status s = RunQuery(t.stub(), grow, 60000).status;
    CHECK_MESSAGE((s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED ||
                   s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED ||
                   s.error_code() == grpc::StatusCode::INVALID_ARGUMENT),
                  StatusText(s));
    if (Verbose()) MESSAGE("an unbounded recursive rule -> ", StatusText(s));
  }

  // A pathological join (a 2000^3 cartesian product) ends at its deadline.
  Expect("a pathological join",
         QueryStatus(t,
                     "[:find (count ?a) . :where [?a :person/age _] "
                     "[?b :person/age _] [?c :person/age _]]",
                     {}, 1000),
         grpc::StatusCode::DEADLINE_EXCEEDED, "deadline");

  // Bad lookup refs.
  Expect("a lookup ref on a non-unique attribute (query)",
         QueryStatus(t,
                     "[:find ?f :where [[:person/age 30] :person/friend "
                     "?f]]"),
         grpc::StatusCode::INVALID_ARGUMENT, "person/age");
  {
    pb::PullRequest req;
    req.set_pattern("[*]");
    auto* lookup = req.mutable_entity()->mutable_lookup();
    lookup->set_attribute("person/name");
    lookup->mutable_value()->set_string_value("nobody");
    pb::PullResponse resp;
    auto ctx = Ctx();
    grpc::Status s = t.stub().Pull(ctx.get(), req, &resp);
    if (Verbose())
      MESSAGE("pull of a lookup ref that resolves to nothing -> ",
              StatusText(s));
    CHECK((s.error_code() == grpc::StatusCode::NOT_FOUND || s.ok()));
    lookup->set_attribute("person/age");
    lookup->mutable_value()->set_long_value(30);
    auto ctx2 = Ctx();
    Expect("pull of a lookup ref on a non-unique attribute",
           t.stub().Pull(ctx2.get(), req, &resp),
           grpc::StatusCode::INVALID_ARGUMENT, "person/age");
  }
  StillServes(t);
}

TEST_CASE("bad input: fulltext") {
  TestServer t;
  Transact(t, R"([{:db/ident :doc/title :db/valueType :db.type/string
                   :db/cardinality :db.cardinality/one :db/fulltext true}
                  {:db/ident :doc/note :db/valueType :db.type/string
                   :db/cardinality :db.cardinality/one}])");
  Transact(t, R"([{:doc/title "The server crashes" :doc/note "n"}])");
  const std::string q =
      "[:find ?v ?s :in $ ?q :where [(fulltext $ :doc/title ?q) "
      "[[_ ?v _ ?s]]]]";
  // Found through the server, stemmed (crashes -> crash).
  QueryOutcome found = Query(t, q, {"\"crash\""});
  REQUIRE_MESSAGE(found.status.ok(), StatusText(found.status));
  REQUIRE(found.rows.size() == 1);
  CHECK(found.rows[0].values(0).string_value() == "The server crashes");
  CHECK(found.rows[0].values(1).double_value() == 1.0);

  Expect("fulltext of an attribute that is not :db/fulltext",
         QueryStatus(t,
                     "[:find ?e :where [(fulltext $ :doc/note \"n\") "
                     "[[?e]]]]"),
         grpc::StatusCode::INVALID_ARGUMENT, "is not :db/fulltext");
  Expect("an empty fulltext search", QueryStatus(t, q, {"\"\""}),
         grpc::StatusCode::INVALID_ARGUMENT, "the search has no words");
  Expect("an unclosed fulltext phrase", QueryStatus(t, q, {"\"\\\"crash\""}),
         grpc::StatusCode::INVALID_ARGUMENT, "has no closing");
  Expect("a fulltext search that is not a string", QueryStatus(t, q, {"42"}),
         grpc::StatusCode::INVALID_ARGUMENT, "must be a string");
  QueryOutcome again = Query(t, q, {"\"server\""});
  CHECK(again.status.ok());
  CHECK(again.rows.size() == 1);
}

TEST_CASE("bad input: composite tuples") {
  TestServer t;
  Transact(t, R"([{:db/ident :reg/course :db/valueType :db.type/string
                   :db/cardinality :db.cardinality/one}
                  {:db/ident :reg/student :db/valueType :db.type/string
                   :db/cardinality :db.cardinality/one}
                  {:db/ident :reg/tags :db/valueType :db.type/string
                   :db/cardinality :db.cardinality/many}
                  {:db/ident :reg/course+student :db/valueType :db.type/tuple
                   :db/tupleAttrs [:reg/course :reg/student]
                   :db/cardinality :db.cardinality/one
                   :db/unique :db.unique/identity}])");
  Transact(t, R"([{:reg/course "math" :reg/student "ann"}])");
  const std::string q =
      "[:find ?t . :where [?e :reg/student \"ann\"] "
      "[?e :reg/course+student ?t]]";
  // The transactor made the composite; it arrives as a list.
  auto composite_is = [&](const std::string& course) {
    QueryOutcome found = Query(t, q);
    REQUIRE_MESSAGE(found.status.ok(), StatusText(found.status));
    REQUIRE(found.rows.size() == 1);
    const pb::ValueList& list = found.rows[0].values(0).list();
    REQUIRE(list.values_size() == 2);
    CHECK(list.values(0).string_value() == course);
    CHECK(list.values(1).string_value() == "ann");
  };
  composite_is("math");

  Expect("a composite value its members do not make",
         TransactStatus(t,
                        "[[:db/add [:reg/course+student [\"math\" \"ann\"]] "
                        ":reg/course+student [\"art\" \"ann\"]]]"),
         grpc::StatusCode::INVALID_ARGUMENT, "the transactor maintains");
  Expect("a retraction of a composite",
         TransactStatus(t,
                        "[[:db/retract [:reg/course+student [\"math\" "
                        "\"ann\"]] :reg/course+student [\"math\" \"ann\"]]]"),
         grpc::StatusCode::INVALID_ARGUMENT, "cannot retract it");
  Expect("a second entity making a unique composite",
         TransactStatus(t, R"([{:reg/course "math" :reg/student "ann"}])"),
         grpc::StatusCode::FAILED_PRECONDITION, ":reg/course+student");
  Expect("a composite over a cardinality-many member",
         TransactStatus(t, R"([{:db/ident :reg/course+tags
                                :db/valueType :db.type/tuple
                                :db/tupleAttrs [:reg/course :reg/tags]
                                :db/cardinality :db.cardinality/one}])"),
         grpc::StatusCode::INVALID_ARGUMENT, ":reg/tags, of cardinality many");
  // Nothing refused was committed; a member's change goes through.
  composite_is("math");
  Transact(t,
           R"([[:db/add [:reg/course+student ["math" "ann"]] :reg/course
                "art"]])");
  composite_is("art");
}

TEST_CASE("bad input: entity specs and attribute predicates") {
  TestServer t;
  Transact(t, R"([{:db/ident :acct/name :db/valueType :db.type/string
                   :db/cardinality :db.cardinality/one
                   :db/unique :db.unique/identity}
                  {:db/ident :acct/balance :db/valueType :db.type/long
                   :db/cardinality :db.cardinality/one
                   :db.attr/preds clojure.core/pos?}
                  {:db/ident :acct/guard
                   :db.entity/attrs [:acct/name :acct/balance]}])");
  Transact(t, R"([{:acct/name "Ann" :acct/balance 5 :db/ensure :acct/guard}])");
  const std::string q =
      "[:find ?n ?b :where [?e :acct/name ?n] "
      "[?e :acct/balance ?b]]";
  auto only_ann = [&] {
    QueryOutcome found = Query(t, q);
    REQUIRE_MESSAGE(found.status.ok(), StatusText(found.status));
    REQUIRE(found.rows.size() == 1);
    CHECK(found.rows[0].values(0).string_value() == "Ann");
    CHECK(found.rows[0].values(1).long_value() == 5);
  };
  only_ann();

  Expect("an entity that lacks a spec's required attribute",
         TransactStatus(t, R"([{:acct/name "Ben" :db/ensure :acct/guard}])"),
         grpc::StatusCode::FAILED_PRECONDITION,
         "does not satisfy entity spec :acct/guard: it lacks :acct/balance");
  Expect("a value that fails its attribute's predicate",
         TransactStatus(t, R"([[:db/add [:acct/name "Ann"] :acct/balance 0]])"),
         grpc::StatusCode::INVALID_ARGUMENT, "value 0 of :acct/balance");
  Expect("a predicate mentatd does not have",
         TransactStatus(t, R"([[:db/add :acct/name :db.attr/preds
                                my.app/valid-name?]])"),
         grpc::StatusCode::INVALID_ARGUMENT,
         ":db.attr/preds names my.app/valid-name?");
  Expect("a predicate that does not take the attribute's type",
         TransactStatus(t, R"([[:db/add :acct/name :db.attr/preds pos?]])"),
         grpc::StatusCode::INVALID_ARGUMENT, "does not take :db.type/string");
  Expect("an entity predicate",
         TransactStatus(t, R"([[:db/add :acct/guard :db.entity/preds
                                my.app/ok?]])"),
         grpc::StatusCode::INVALID_ARGUMENT,
         ":db.entity/preds is not supported");
  Expect("a :db/ensure naming no spec",
         TransactStatus(t, R"([{:acct/name "Cy" :acct/balance 1
                                :db/ensure :acct/name}])"),
         grpc::StatusCode::INVALID_ARGUMENT, "is not an entity spec");

  // A dry run answers what the commit would.
  pb::TransactRequest dry;
  dry.set_tx_data(R"([{:acct/name "Ben" :db/ensure :acct/guard}])");
  dry.set_dry_run(true);
  pb::TransactResponse resp;
  auto ctx = Ctx();
  Expect("a dry run of an entity that lacks a required attribute",
         t.stub().Transact(ctx.get(), dry, &resp),
         grpc::StatusCode::FAILED_PRECONDITION, "it lacks :acct/balance");
  // Nothing refused was committed.
  only_ann();
}

TEST_CASE("bad input: transactions") {
  TestServer t;
  Transact(t, kPeopleSchema);
  Transact(t, R"([{:db/id "ann" :person/name "Ann" :person/age 30}])");

  Expect("malformed EDN in tx-data",
         TransactStatus(t, "[[:db/add \"x\" :person/name]\n  {:a"),
         grpc::StatusCode::INVALID_ARGUMENT, "line 2");
  Expect("unknown attribute in tx-data",
         TransactStatus(t, "[[:db/add \"x\" :no/such 1]]"),
         grpc::StatusCode::INVALID_ARGUMENT, "no/such");
  Expect("a value of the wrong type",
         TransactStatus(t, "[[:db/add \"x\" :person/age \"old\"]]"),
         grpc::StatusCode::INVALID_ARGUMENT, "person/age");
  Expect("invalid UTF-8 in tx-data",
         TransactStatus(t, "[[:db/add \"x\" :person/name \"\xff\xfe\"]]"),
         grpc::StatusCode::INVALID_ARGUMENT, "UTF-8");
  Expect("a unique value asserted by two entities",
         TransactStatus(t,
                        "[{:person/email \"a@x\"} {:person/email "
                        "\"a@x\" :person/name \"Zed\"}]"),
         grpc::StatusCode::FAILED_PRECONDITION, "");

  Expect("a giant string over the message limit",
         TransactStatus(
             t, "[{:person/name \"" + std::string(70 << 20, 'x') + "\"}]"),
         grpc::StatusCode::RESOURCE_EXHAUSTED, "");
  {
    // A big string within the limit is stored and read back whole.
    const std::string big(8 << 20, 'y');
    Transact(t, "[{:person/name \"" + big + "\" :person/age 1}]");
    // (gRPC clients take 4 MiB messages by default; this one more.)
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(64 << 20);
    auto stub = pb::Mentat::NewStub(grpc::CreateCustomChannel(
        t.Address(), grpc::InsecureChannelCredentials(), args));
    pb::QueryRequest req;
    req.set_query(
        "[:find ?n . :where [?e :person/age 1] [?e :person/name ?n]]");
    QueryOutcome q = RunQuery(*stub, req);
    REQUIRE_MESSAGE(q.status.ok(), StatusText(q.status));
    CHECK(q.rows.at(0).values(0).string_value() == big);
    if (Verbose()) MESSAGE("an 8 MiB string value -> OK, read back whole");
  }
  Expect("a lookup ref that resolves to nothing",
         TransactStatus(t,
                        "[[:db/add [:person/name \"nobody\"] :person/age "
                        "3]]"),
         grpc::StatusCode::INVALID_ARGUMENT, "does not resolve");
  Expect("a lookup ref on a non-unique attribute",
         TransactStatus(t, "[[:db/add [:person/age 30] :person/age 3]]"),
         grpc::StatusCode::INVALID_ARGUMENT, "person/age");
  Expect("a lookup ref of the wrong shape",
         TransactStatus(t, "[[:db/add [:person/name] :person/age 3]]"),
         grpc::StatusCode::INVALID_ARGUMENT, "");
  Expect("a cas conflict",
         TransactStatus(t,
                        "[[:db/cas [:person/name \"Ann\"] :person/age 29 "
                        "31]]"),
         grpc::StatusCode::FAILED_PRECONDITION, "compare-and-swap");
  Expect("a cas with a value of the wrong type",
         TransactStatus(t,
                        "[[:db/cas [:person/name \"Ann\"] :person/age "
                        "\"30\" 31]]"),
         grpc::StatusCode::INVALID_ARGUMENT, "person/age");
  {
    std::string nested = "[{:person/name \"n\" :person/friend ";
    for (int i = 0; i < 20000; ++i) nested += "{:person/friend ";
    Expect("deeply nested entity maps", TransactStatus(t, nested),
           grpc::StatusCode::INVALID_ARGUMENT, "");
  }
  Expect("a tx-data that is not a vector",
         TransactStatus(t, "{:person/name \"x\"}"),
         grpc::StatusCode::INVALID_ARGUMENT, "");
  StillServes(t);
}

TEST_CASE("bad input: deleted databases and bad auth") {
  {
    TestServer t;
    CreateDatabase(t, "sales");
    Transact(t, kPeopleSchema, "sales");
    pb::DeleteDatabaseRequest del;
    del.set_name("sales");
    pb::DeleteDatabaseResponse deleted;
    auto ctx2 = Ctx();
    REQUIRE(t.stub().DeleteDatabase(ctx2.get(), del, &deleted).ok());
    Expect("a write to a deleted database",
           TransactStatus(t, People(0, 1), "sales"),
           grpc::StatusCode::NOT_FOUND, "sales");
    pb::QueryRequest q;
    q.set_database("sales");
    q.set_query("[:find ?e :where [?e :person/name _]]");
    Expect("a read of a deleted database", RunQuery(t.stub(), q).status,
           grpc::StatusCode::NOT_FOUND, "sales");
  }
  {
    TestServer t([](ServerConfig* c) { c->auth_token = "s3cret"; });
    Expect("no token", TransactStatus(t, kPeopleSchema),
           grpc::StatusCode::UNAUTHENTICATED, "");
    pb::TransactRequest req;
    req.set_tx_data(kPeopleSchema);
    pb::TransactResponse resp;
    grpc::ClientContext wrong;
    wrong.AddMetadata("authorization", "Bearer nope");
    Expect("a wrong token", t.stub().Transact(&wrong, req, &resp),
           grpc::StatusCode::UNAUTHENTICATED, "");
    grpc::ClientContext malformed;
    malformed.AddMetadata("authorization", "s3cret");
    Expect("a token without Bearer", t.stub().Transact(&malformed, req, &resp),
           grpc::StatusCode::UNAUTHENTICATED, "");
  }
}

}  // namespace
}  // namespace mentat::server::testing
