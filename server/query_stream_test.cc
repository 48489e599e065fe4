#include <doctest/doctest.h>

#include <set>
#include <thread>

#include "test_support.h"

namespace mentat::server::testing {
namespace {

// Loads `n` people, 1000 per transaction.
void LoadPeople(TestServer& t, int n) {
  Transact(t, kPeopleSchema);
  for (int i = 0; i < n; i += 1000)
    Transact(t, People(i, std::min(1000, n - i)));
}

std::string RowKey(const pb::Row& r) { return r.SerializeAsString(); }

TEST_CASE("server: query streams every row in batches, columns first") {
  TestServer t;
  LoadPeople(t, 5500);
  QueryOutcome q = Query(t, "[:find ?e ?n :where [?e :person/name ?n]]");
  REQUIRE_MESSAGE(q.status.ok(), StatusText(q.status));
  CHECK(q.columns == std::vector<std::string>{"?e", "?n"});
  CHECK(q.rows.size() == 5500);
  std::set<std::string> distinct;
  for (const pb::Row& r : q.rows) {
    REQUIRE(r.values_size() == 2);
    CHECK(r.values(0).has_long_value());
    CHECK(r.values(1).has_string_value());
    distinct.insert(RowKey(r));
  }
  CHECK(distinct.size() == 5500);
  // Batches of at most 1000 rows with tokens, columns with the first.
  REQUIRE(q.messages.size() == 6);
  CHECK(q.messages[0].columns_size() == 2);
  CHECK(q.messages[0].basis_tx() > 0);
  for (size_t i = 0; i < q.messages.size(); ++i) {
    CHECK(q.messages[i].rows_size() <= 1000);
    CHECK_FALSE(q.messages[i].resume_token().empty());
    CHECK(q.messages[i].basis_tx() == q.messages[0].basis_tx());
    if (i > 0) CHECK(q.messages[i].columns_size() == 0);
  }
  CHECK(q.messages.back().rows_so_far() == 5500);

  SUBCASE("limit") {
    pb::QueryRequest req;
    req.set_query("[:find ?e :where [?e :person/age _]]");
    req.set_limit(1234);
    QueryOutcome l = RunQuery(t.stub(), req);
    REQUIRE(l.status.ok());
    CHECK(l.rows.size() == 1234);
  }
  SUBCASE("batch size") {
    pb::QueryRequest req;
    req.set_query("[:find ?e :where [?e :person/age _]]");
    req.set_batch_rows(100);
    QueryOutcome l = RunQuery(t.stub(), req);
    REQUIRE(l.status.ok());
    CHECK(l.rows.size() == 5500);
    CHECK(l.messages.size() == 55);
  }
}

// Reads the first `batches` messages after the columns, then drops the
// stream; returns the rows read and the last token.
std::pair<std::vector<pb::Row>, std::string> ReadSome(
    pb::Mentat::Stub& stub, const pb::QueryRequest& req, int batches) {
  std::vector<pb::Row> rows;
  std::string token;
  grpc::ClientContext ctx;
  auto reader = stub.Query(&ctx, req);
  pb::QueryResponse msg;
  int seen = 0;
  while (seen < batches && reader->Read(&msg)) {
    if (msg.rows_size() == 0) continue;
    for (const pb::Row& r : msg.rows()) rows.push_back(r);
    token = msg.resume_token();
    ++seen;
  }
  ctx.TryCancel();
  reader->Finish().IgnoreError();
  return {rows, token};
}

TEST_CASE(
    "server: a broken query stream resumes with no row lost or repeated") {
  TestServer t;
  LoadPeople(t, 4500);
  pb::QueryRequest req;
  req.set_query("[:find ?e ?a :where [?e :person/age ?a]]");
  QueryOutcome all = RunQuery(t.stub(), req);
  REQUIRE(all.status.ok());
  REQUIRE(all.rows.size() == 4500);

  // (Not a structured binding: clang 14, which checks thread safety,
  // cannot capture one in a lambda.)
  const auto some = ReadSome(t.stub(), req, 2);
  const std::vector<pb::Row>& first = some.first;
  const std::string& token = some.second;
  REQUIRE(first.size() == 2000);
  // A write after the token: the resumed stream still reads the old basis.
  Transact(t, People(100000, 10));

  auto check_resume = [&](const std::string& tok, size_t expect_rest) {
    pb::QueryRequest again = req;
    again.set_resume_token(tok);
    QueryOutcome rest = RunQuery(t.stub(), again);
    REQUIRE_MESSAGE(rest.status.ok(), StatusText(rest.status));
    CHECK(rest.columns.size() == 2);
    CHECK(rest.rows.size() == expect_rest);
    std::multiset<std::string> got, want;
    for (const pb::Row& r : first) got.insert(RowKey(r));
    for (const pb::Row& r : rest.rows) got.insert(RowKey(r));
    for (const pb::Row& r : all.rows) want.insert(RowKey(r));
    CHECK(got == want);
    CHECK(rest.messages.back().rows_so_far() == 4500);
  };
  check_resume(token, 2500);

  SUBCASE("after a restart, rebuilt as of the token's basis") {
    t.Restart();
    check_resume(token, 2500);
  }
  SUBCASE("a token of another request is refused") {
    pb::QueryRequest other;
    other.set_query("[:find ?e :where [?e :person/age _]]");
    other.set_resume_token(token);
    QueryOutcome bad = RunQuery(t.stub(), other);
    CHECK(bad.status.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  }
}

TEST_CASE("server: query deadlines, timeouts and cancellation") {
  TestServer t;
  LoadPeople(t, 3000);
  // About 90,000 rows: 30 people per age, squared.
  const std::string big =
      "[:find ?a ?b :where [?a :person/age ?x] [?b :person/age ?x]]";

  SUBCASE("timeout_ms") {
    pb::QueryRequest req;
    req.set_query(big);
    req.set_timeout_ms(1);
    QueryOutcome q = RunQuery(t.stub(), req);
    CHECK(q.status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED);
  }
  SUBCASE("a client that stops reading past its deadline") {
    pb::QueryRequest req;
    req.set_query(big);
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() +
                     std::chrono::milliseconds(300));
    auto reader = t.stub().Query(&ctx, req);
    pb::QueryResponse msg;
    REQUIRE(reader->Read(&msg));
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    while (reader->Read(&msg)) {
    }
    CHECK(reader->Finish().error_code() == grpc::StatusCode::DEADLINE_EXCEEDED);
  }
  SUBCASE("cancellation frees the query") {
    // 81M combinations: tens of seconds unless cancelled. (The 90K rows
    // of `big` could all reach the transport's buffers, and the query
    // end, before a busy machine got to the check that it ran.)
    pb::QueryRequest req;
    req.set_query(
        "[:find (count ?a) :where [?a :person/age ?w] [?b :person/age ?w] "
        "[?c :person/age ?w] [?d :person/age ?w]]");
    grpc::ClientContext ctx;
    auto reader = t.stub().Query(&ctx, req);
    auto running = [&] {
      return MetricValue(HttpGet(t.server().http_port(), "/metrics"),
                         "mentat_running_queries");
    };
    // Polls up to ~20 s: on a busy machine a query can take seconds to
    // start, and a cancelled one to notice.
    auto wait_running = [&](double want) {
      for (int i = 0; i < 4000; ++i) {
        if (running() == want) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      return false;
    };
    REQUIRE(wait_running(1));
    ctx.TryCancel();
    CHECK(reader->Finish().error_code() == grpc::StatusCode::CANCELLED);
    CHECK(wait_running(0));
  }
}

// The value of a labelled Prometheus series, or -1.
double SeriesValue(const std::string& exposition, const std::string& series) {
  const size_t pos = exposition.find(series + " ");
  if (pos == std::string::npos) return -1;
  return std::stod(exposition.substr(pos + series.size() + 1));
}

TEST_CASE("server: a query stream that waits for its basis answers from it") {
  // Read-your-writes on a stream: the query starts on a reader once the
  // commit it waits for is there, and its reactor must outlive the run
  // that ends the stream (a use-after-free ASan caught in the replica
  // tests). Rounds, so that most of the queries do wait.
  TestServer t;
  Transact(t, kPeopleSchema);
  int64_t last = Transact(t, "[{:person/name \"w start\"}]").tx();
  for (int i = 0; i < 25; ++i) {
    const std::string name = "w " + std::to_string(i);
    pb::QueryRequest req;
    req.set_query("[:find ?e . :in $ ?n :where [?e :person/name ?n]]");
    req.add_inputs()->set_edn("\"" + name + "\"");
    req.set_min_basis_tx(last + 1);  // the next commit's, not yet made
    QueryOutcome q;
    std::thread reader([&] { q = RunQuery(t.stub(), req); });
    const pb::TransactResponse r =
        Transact(t, "[{:db/id \"p\" :person/name \"" + name + "\"}]");
    reader.join();
    REQUIRE_MESSAGE(q.status.ok(), StatusText(q.status));
    CHECK(q.basis_tx >= r.tx());
    REQUIRE(q.rows.size() == 1);
    REQUIRE(r.tempids().count("p") == 1);
    CHECK(q.rows[0].values(0).long_value() == r.tempids().at("p"));
    last = r.tx();
  }
}

TEST_CASE("server: a slow reader holds the query back (no buffering)") {
  TestServer t;
  LoadPeople(t, 3000);
  // About 90,000 rows, 90 messages.
  pb::QueryRequest req;
  req.set_query("[:find ?a ?b :where [?a :person/age ?x] [?b :person/age ?x]]");
  // A client whose receive window does not grow (no BDP probing), as a
  // slow client's would not.
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
  auto stub = pb::Mentat::NewStub(grpc::CreateCustomChannel(
      t.Address(), grpc::InsecureChannelCredentials(), args));
  grpc::ClientContext ctx;
  auto reader = stub->Query(&ctx, req);
  pb::QueryResponse msg;
  int64_t read = 0;
  for (int i = 0; i < 3; ++i) {
    REQUIRE(reader->Read(&msg));
    read += msg.rows_size();
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const std::string m = HttpGet(t.server().http_port(), "/metrics");
  const double produced =
      SeriesValue(m, "mentat_stream_items_total{method=\"Query\"}");
  // Produced: what the client read, what gRPC's flow-control windows hold
  // (some 64 KiB batches), and the reactor's two queued messages; far from
  // the 90,000 rows of the result.
  CHECK(produced > 0);
  CHECK(produced < 30000);
  MESSAGE("rows produced while the client had read ", read, ": ", produced);
  int64_t rows = read;
  while (reader->Read(&msg)) rows += msg.rows_size();
  CHECK(reader->Finish().ok());
  CHECK(rows == 90000);
}

TEST_CASE("server: query inputs as EDN, typed values and JSON") {
  TestServer t;
  LoadPeople(t, 200);
  const std::string q =
      "[:find ?e :in $ ?name [?age ...] :where [?e :person/name ?name] "
      "[?e :person/age ?age]]";
  pb::QueryRequest req;
  req.set_query(q);
  req.add_inputs()->set_edn("\"person 5\"");
  req.add_inputs()->set_json("[5, 6, 7]");
  QueryOutcome a = RunQuery(t.stub(), req);
  REQUIRE_MESSAGE(a.status.ok(), StatusText(a.status));
  CHECK(a.rows.size() == 1);

  pb::QueryRequest typed;
  typed.set_query(q);
  typed.add_inputs()->mutable_value()->set_string_value("person 5");
  pb::ValueList* ages = typed.add_inputs()->mutable_value()->mutable_list();
  ages->add_values()->set_long_value(5);
  QueryOutcome b = RunQuery(t.stub(), typed);
  REQUIRE_MESSAGE(b.status.ok(), StatusText(b.status));
  REQUIRE(b.rows.size() == 1);
  CHECK(b.rows[0].values(0).long_value() == a.rows[0].values(0).long_value());

  SUBCASE("errors") {
    pb::QueryRequest bad = req;
    bad.mutable_inputs(1)->set_json("[5, ");
    CHECK(RunQuery(t.stub(), bad).status.error_code() ==
          grpc::StatusCode::INVALID_ARGUMENT);
    bad = req;
    bad.mutable_inputs()->RemoveLast();
    CHECK(RunQuery(t.stub(), bad).status.error_code() ==
          grpc::StatusCode::INVALID_ARGUMENT);
    bad = req;
    bad.set_query("[:find ?e :where [?e :person/name]");
    QueryOutcome o = RunQuery(t.stub(), bad);
    CHECK(o.status.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
    CHECK(o.status.error_message().find("line 1") != std::string::npos);
    bad.set_query("[:find ?e :where [?e :no/such _]]");
    CHECK(RunQuery(t.stub(), bad).status.error_code() ==
          grpc::StatusCode::INVALID_ARGUMENT);
    bad = req;
    bad.set_database("nope");
    CHECK(RunQuery(t.stub(), bad).status.error_code() ==
          grpc::StatusCode::NOT_FOUND);
  }
}

}  // namespace
}  // namespace mentat::server::testing
