// QueryFirst: a query in one unary call, the whole answer or its first
// message (more = true), continued with Query and the message's token.

#include <doctest/doctest.h>

#include <set>

#include "test_support.h"

namespace mentat::server::testing {
namespace {

void LoadPeople(TestServer& t, int n) {
  Transact(t, kPeopleSchema);
  for (int i = 0; i < n; i += 1000)
    Transact(t, People(i, std::min(1000, n - i)));
}

grpc::Status QueryFirst(TestServer& t, const pb::QueryRequest& req,
                        pb::QueryResponse* resp) {
  auto ctx = Ctx();
  return t.stub().QueryFirst(ctx.get(), req, resp);
}

std::multiset<std::string> Keys(const std::vector<pb::Row>& rows) {
  std::multiset<std::string> keys;
  for (const pb::Row& r : rows) keys.insert(r.SerializeAsString());
  return keys;
}

// The rows of a QueryFirst reply and, when it says more, of the Query that
// continues it.
std::vector<pb::Row> FirstThenRest(TestServer& t, const pb::QueryRequest& req,
                                   pb::QueryResponse* first) {
  grpc::Status s = QueryFirst(t, req, first);
  REQUIRE_MESSAGE(s.ok(), StatusText(s));
  std::vector<pb::Row> rows(first->rows().begin(), first->rows().end());
  if (!first->more()) return rows;
  pb::QueryRequest rest = req;
  rest.set_resume_token(first->resume_token());
  QueryOutcome q = RunQuery(t.stub(), rest);
  REQUIRE_MESSAGE(q.status.ok(), StatusText(q.status));
  for (const pb::QueryResponse& m : q.messages) CHECK_FALSE(m.more());
  rows.insert(rows.end(), q.rows.begin(), q.rows.end());
  return rows;
}

void CheckQueryFirst(TestServer& t) {
  LoadPeople(t, 2500);
  const std::string kAll = "[:find ?e ?n :where [?e :person/name ?n]]";

  SUBCASE("a small answer is whole, with no token") {
    pb::QueryRequest req;
    req.set_query(
        "[:find ?a :where [?e :person/name \"person 7\"] "
        "[?e :person/age ?a]]");
    pb::QueryResponse resp;
    grpc::Status s = QueryFirst(t, req, &resp);
    REQUIRE_MESSAGE(s.ok(), StatusText(s));
    CHECK_FALSE(resp.more());
    CHECK(resp.resume_token().empty());
    CHECK(resp.columns_size() == 1);
    CHECK(resp.columns(0) == "?a");
    CHECK(resp.basis_tx() > 0);
    REQUIRE(resp.rows_size() == 1);
    CHECK(resp.rows(0).values(0).long_value() == 7);
    CHECK(resp.rows_so_far() == 1);
  }

  SUBCASE("a scalar find keeps its kind") {
    pb::QueryRequest req;
    req.set_query("[:find (count ?e) . :where [?e :person/age _]]");
    pb::QueryResponse resp;
    REQUIRE(QueryFirst(t, req, &resp).ok());
    CHECK(resp.find_kind() == pb::FIND_SCALAR);
    REQUIRE(resp.rows_size() == 1);
    CHECK(resp.rows(0).values(0).long_value() == 2500);
  }

  SUBCASE("a big query is left to the stream: nothing sent, no token") {
    pb::QueryRequest req;
    req.set_query(kAll);
    pb::QueryResponse first;
    grpc::Status s = QueryFirst(t, req, &first);
    REQUIRE_MESSAGE(s.ok(), StatusText(s));
    CHECK(first.more());
    CHECK(first.resume_token().empty());
    CHECK(first.rows_size() == 0);
    CHECK(first.columns_size() == 0);
    std::vector<pb::Row> rows = FirstThenRest(t, req, &first);
    CHECK(rows.size() == 2500);
    CHECK(Keys(rows).size() == 2500);
  }

  // Person 7 has 30 tags: a small query whose answer takes three messages
  // of 10 rows.
  std::string tags = "[{:db/id [:person/name \"person 7\"] :person/tag [";
  for (int i = 0; i < 30; ++i) tags += ":t/tag" + std::to_string(i) + " ";
  Transact(t, tags + "]}]");
  pb::QueryRequest small;
  small.set_query(
      "[:find ?t :where [?e :person/name \"person 7\"] [?e :person/tag ?t]]");
  small.set_batch_rows(10);
  QueryOutcome all = RunQuery(t.stub(), small);
  REQUIRE(all.status.ok());
  REQUIRE(all.rows.size() == 30);

  SUBCASE("a small answer longer than a message: the first, then Query") {
    pb::QueryResponse first;
    grpc::Status s = QueryFirst(t, small, &first);
    REQUIRE_MESSAGE(s.ok(), StatusText(s));
    CHECK(first.more());
    CHECK_FALSE(first.resume_token().empty());
    CHECK(first.rows_size() == 10);
    CHECK(first.rows_so_far() == 10);
    CHECK(first.columns_size() == 1);

    // A write after the first message: the rest still reads its basis.
    Transact(t, "[{:db/id [:person/name \"person 7\"] :person/tag :t/late}]");
    pb::QueryRequest rest = small;
    rest.set_resume_token(first.resume_token());
    QueryOutcome q = RunQuery(t.stub(), rest);
    REQUIRE_MESSAGE(q.status.ok(), StatusText(q.status));
    CHECK(q.rows.size() == 20);
    CHECK(q.basis_tx == first.basis_tx());
    std::vector<pb::Row> rows(first.rows().begin(), first.rows().end());
    rows.insert(rows.end(), q.rows.begin(), q.rows.end());
    CHECK(Keys(rows) == Keys(all.rows));
  }

  SUBCASE("limit and batch_rows shape the answer") {
    pb::QueryRequest req = small;
    req.set_limit(15);
    pb::QueryResponse first;
    std::vector<pb::Row> rows = FirstThenRest(t, req, &first);
    CHECK(first.rows_size() == 10);
    CHECK(first.more());
    CHECK(rows.size() == 15);
    CHECK(Keys(rows).size() == 15);

    req.set_limit(10);
    pb::QueryResponse exact;
    rows = FirstThenRest(t, req, &exact);
    CHECK(rows.size() == 10);

    req.clear_limit();
    req.set_batch_rows(100);
    pb::QueryResponse whole;
    rows = FirstThenRest(t, req, &whole);
    CHECK_FALSE(whole.more());
    CHECK(whole.resume_token().empty());
    CHECK(Keys(rows) == Keys(all.rows));
  }

  SUBCASE("bad input answers as Query does") {
    pb::QueryRequest req;
    pb::QueryResponse resp;
    req.set_query("[:find ?e :where [?e :person/nme _]]");
    grpc::Status s = QueryFirst(t, req, &resp);
    CHECK(s.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
    CHECK(s.error_message().find(":person/nme") != std::string::npos);

    req.set_query("[:find ?e :where [?e");
    s = QueryFirst(t, req, &resp);
    CHECK(s.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
    CHECK(s.error_message().find("line 1") != std::string::npos);

    req.set_query(kAll);
    req.set_resume_token("not a token");
    s = QueryFirst(t, req, &resp);
    CHECK(s.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
    CHECK(s.error_message().find("resume_token") != std::string::npos);

    req.clear_resume_token();
    req.set_database("nosuch");
    s = QueryFirst(t, req, &resp);
    CHECK(s.error_code() == grpc::StatusCode::NOT_FOUND);
    CHECK(s.error_message().find("nosuch") != std::string::npos);
  }
}

TEST_CASE("server: QueryFirst answers in one call, or its first message") {
  TestServer t;
  CheckQueryFirst(t);
}

TEST_CASE("server: QueryFirst on a reader thread answers the same") {
  TestServer t([](ServerConfig* c) { c->inline_point_reads = false; });
  CheckQueryFirst(t);
}

}  // namespace
}  // namespace mentat::server::testing
