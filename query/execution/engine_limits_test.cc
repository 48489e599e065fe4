// Memory budget, cancellation, deadlines, and the plan cache.

#include <doctest/doctest.h>

#include <atomic>
#include <thread>

#include "execution/engine_test_support.h"

namespace mentat::query {
namespace {

using engine_testing::EngineFixture;
using engine_testing::LoadIssues;

void LoadNodes(EngineFixture& f, int n) {
  std::string tx = "[";
  for (int i = 0; i < n; ++i) {
    StrAppend(&tx, "{:node/name \"n", i, "\" :node/weight ", i % 100, "}");
  }
  StrAppend(&tx, "]");
  f.Tx(tx);
}

// A join of every node with every node of the same weight, 90K rows,
// projected onto ?b: the hash set that makes the rows distinct grows.
const char* kBig =
    "[:find (count ?b) :where [?a :node/weight ?w] [?b :node/weight ?w]]";

TEST_CASE("engine: the memory budget stops a query with ResourceExhausted") {
  EngineFixture f;
  LoadNodes(f, 3000);
  QueryOptions options;
  options.memory_budget_bytes = 64 << 10;
  absl::Status s = f.Error(kBig, "", storage::Basis::Current(), options);
  CHECK(s.code() == absl::StatusCode::kResourceExhausted);
  CHECK_MESSAGE(std::string(s.message()).find("budget") != std::string::npos,
                s.ToString());
  // The message names the step that grew (its label is made only then).
  CHECK_MESSAGE(std::string(s.message())
                        .find("query step 2 [?b :node/weight ?w] (hash "
                              "join build side)") != std::string::npos,
                s.ToString());
  // A failed query leaves nothing broken: the same engine runs it again.
  CHECK(f.Rows(kBig) == "[3000]\n");
}

TEST_CASE("engine: tx-data and tx-ids are bounded by the query limits") {
  EngineFixture f;
  LoadNodes(f, 3000);
  // One transaction of 6001 datoms (3000 nodes of two attributes, and its
  // :db/txInstant).
  std::string tx = f.Rows("[:find (max ?tx) :where [_ :node/name _ ?tx]]");
  tx.pop_back();  // "[id]\n" -> "[id]", the input vector
  const char* datoms =
      "[:find (count ?e) . :with ?a ?v :in $ ?tx :where [(tx-data $ ?tx) [[?e "
      "?a ?v]]]]";
  CHECK(f.Rows(datoms, tx) == "[6001]\n");
  QueryOptions options;
  options.max_rows_scanned = 1000;
  absl::Status s = f.Error(datoms, tx, storage::Basis::Current(), options);
  CHECK_MESSAGE(s.code() == absl::StatusCode::kResourceExhausted, s.ToString());
  options = QueryOptions();
  options.memory_budget_bytes = 64 << 10;
  s = f.Error(datoms, tx, storage::Basis::Current(), options);
  CHECK_MESSAGE(s.code() == absl::StatusCode::kResourceExhausted, s.ToString());
  CHECK_MESSAGE(std::string(s.message()).find("tx-data") != std::string::npos,
                s.ToString());
  options = QueryOptions();
  options.deadline = std::chrono::steady_clock::now();
  s = f.Error(datoms, tx, storage::Basis::Current(), options);
  CHECK_MESSAGE(s.code() == absl::StatusCode::kDeadlineExceeded, s.ToString());
}

TEST_CASE("engine: fulltext is bounded by the query limits") {
  EngineFixture f;
  f.Tx(
      "[{:db/ident :note/text :db/valueType :db.type/string "
      ":db/cardinality :db.cardinality/one :db/fulltext true}]");
  std::string tx = "[";
  for (int i = 0; i < 3000; ++i) {
    StrAppend(&tx, "{:note/text \"note n", i, " common\"}");
  }
  f.Tx(tx + "]");
  // 3000 postings of one word; 3000 words under one prefix.
  for (std::string search : {"common", "n*"}) {
    CAPTURE(search);
    const std::string q =
        StrCat("[:find (count ?e) . :where [(fulltext $ :note/text \"", search,
               "\") [[?e]]]]");
    CHECK(f.Rows(q) == "[3000]\n");
    QueryOptions options;
    options.max_rows_scanned = 1000;
    absl::Status s = f.Error(q, "", storage::Basis::Current(), options);
    CHECK_MESSAGE(s.code() == absl::StatusCode::kResourceExhausted,
                  s.ToString());
    options = QueryOptions();
    options.deadline = std::chrono::steady_clock::now();
    s = f.Error(q, "", storage::Basis::Current(), options);
    CHECK_MESSAGE(s.code() == absl::StatusCode::kDeadlineExceeded,
                  s.ToString());
  }
}

TEST_CASE("engine: a cancelled query stops with Cancelled") {
  EngineFixture f;
  LoadNodes(f, 3000);
  std::atomic<bool> cancelled{true};
  QueryOptions options;
  options.cancelled = &cancelled;
  absl::Status s = f.Error(kBig, "", storage::Basis::Current(), options);
  CHECK(s.code() == absl::StatusCode::kCancelled);
  // Cancelled from another thread while it runs.
  cancelled = false;
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    cancelled = true;
  });
  // 81M combinations: tens of seconds unless stopped. (2.7M, a join of
  // three, ran in about 200 ms, and on a busy machine it sometimes ended
  // before the canceller thread was first scheduled.)
  const char* slow =
      "[:find (count ?d) :with ?a ?b ?c :where [?a :node/weight ?w] "
      "[?b :node/weight ?w] [?c :node/weight ?w] [?d :node/weight ?w]]";
  absl::StatusOr<QueryResult> r =
      f.Run(slow, "", storage::Basis::Current(), options);
  canceller.join();
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == absl::StatusCode::kCancelled);
}

TEST_CASE("engine: a passed deadline stops with DeadlineExceeded") {
  EngineFixture f;
  LoadNodes(f, 3000);
  QueryOptions options;
  options.deadline = std::chrono::steady_clock::now();
  CHECK(f.Error(kBig, "", storage::Basis::Current(), options).code() ==
        absl::StatusCode::kDeadlineExceeded);
  options.deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(5);
  // 81M combinations: tens of seconds unless stopped. (2.7M, a join of
  // three, ran in about 200 ms, and on a busy machine it sometimes ended
  // before the canceller thread was first scheduled.)
  const char* slow =
      "[:find (count ?d) :with ?a ?b ?c :where [?a :node/weight ?w] "
      "[?b :node/weight ?w] [?c :node/weight ?w] [?d :node/weight ?w]]";
  CHECK(f.Error(slow, "", storage::Basis::Current(), options).code() ==
        absl::StatusCode::kDeadlineExceeded);
}

TEST_CASE("engine: the scan limit stops a query with ResourceExhausted") {
  EngineFixture f;
  LoadNodes(f, 3000);
  // A cartesian product of three scans: 2.7e10 combinations, no deadline.
  const char* product =
      "[:find (count ?c) :with ?a ?b :where [?a :node/weight _] "
      "[?b :node/weight _] [?c :node/weight _]]";
  QueryOptions options;
  options.max_rows_scanned = 1000000;
  absl::Status s = f.Error(product, "", storage::Basis::Current(), options);
  CHECK(s.code() == absl::StatusCode::kResourceExhausted);
  CHECK_MESSAGE(std::string(s.message()).find("1000000 datoms and rows") !=
                    std::string::npos,
                s.ToString());
  CHECK_MESSAGE(
      std::string(s.message()).find("--query-scan-limit") != std::string::npos,
      s.ToString());
  // Within the limit, a query answers.
  CHECK(f.Run("[:find (count ?a) . :where [?a :node/weight 7]]", "",
              storage::Basis::Current(), options)
            .ok());
}

TEST_CASE("engine: cancellation stops lookups through an entity column") {
  EngineFixture f(/*eager_columns=*/true);
  LoadNodes(f, 3000);
  // One hub with an edge to every node. `none` reads the hub's 3,000
  // edges from the :node/edge column and keeps none of them (every node
  // was made before the hub), so no batch of rows is emitted (where the
  // engine checks its limits too): only the check every 1,024 datoms
  // inside the lookup loop can see the cancel flag.
  std::string tx = "[{:db/id \"hub\" :node/name \"hub\" :node/edge [";
  for (int i = 0; i < 3000; ++i) StrAppend(&tx, "[:node/name \"n", i, "\"] ");
  StrAppend(&tx, "]}]");
  f.Tx(tx);
  // Two entities, so that ?b comes from the rows (one would be a constant).
  const std::string hub = StrCat("[[", f.Id("hub"), " 1]]");
  const char* q = "[:find ?t :in $ [?b ...] :where [?b :node/edge ?t]]";
  const char* none =
      "[:find ?t :in $ [?b ...] :where [?b :node/edge ?t] [(> ?t ?b)]]";
  // The first run earns the column (built in the background); the next
  // ones read it.
  CHECK(f.Q(q, hub).rows.size() == 3000);
  f.store().store().WaitForColumns();
  CHECK(f.Q(none, hub).rows.empty());
  const std::string plan = f.Explain(none, hub, true);
  REQUIRE_MESSAGE(plan.find("ran as AEVT column probes") != std::string::npos,
                  plan);
  // Cancelled once the query has started (the engine checks the flag
  // before it begins): the sink raises the flag when it gets the columns.
  struct CancellingSink : RowSink {
    std::atomic<bool>* flag;
    [[nodiscard]] absl::Status OnColumns(
        const std::vector<std::string>&) override {
      *flag = true;
      return absl::OkStatus();
    }
    [[nodiscard]] absl::Status OnRows(std::vector<Row>&&) override {
      return absl::OkStatus();
    }
  };
  std::atomic<bool> cancelled{false};
  CancellingSink sink;
  sink.flag = &cancelled;
  QueryOptions options;
  options.cancelled = &cancelled;
  auto prepared = f.engine().Prepare(none, f.View());
  REQUIRE(prepared.ok());
  CHECK(f.engine()
            .Execute(**prepared, f.View(), engine_testing::Inputs(hub), options,
                     &sink)
            .code() == absl::StatusCode::kCancelled);
  // Nothing is left broken: the column answers the next query whole.
  CHECK(f.Q(q, hub).rows.size() == 3000);
}

TEST_CASE("engine: the plan cache") {
  EngineFixture f;
  LoadIssues(f);
  const char* q =
      "[:find ?n :in $ ?e :where [?u :user/email ?e] [?u :user/name ?n]]";
  auto a = f.engine().Prepare(q, f.View());
  auto b = f.engine().Prepare(q, f.View());
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(a->get() == b->get());
  // A transaction that leaves the schema and the counts alike keeps it.
  f.Tx("[{:user/email \"dan@x.org\" :user/name \"Dan\"}]");
  auto c = f.engine().Prepare(q, f.View());
  REQUIRE(c.ok());
  CHECK(c->get() == a->get());
  // A schema change makes a new plan.
  f.Tx(
      "[{:db/ident :user/age :db/valueType :db.type/long "
      ":db/cardinality :db.cardinality/one}]");
  auto d = f.engine().Prepare(q, f.View());
  REQUIRE(d.ok());
  CHECK(d->get() != a->get());
  // So does a 2x change of an attribute the estimates used.
  std::string tx = "[";
  for (int i = 0; i < 200; ++i) {
    StrAppend(&tx, "{:user/email \"u", i, "@x\" :user/name \"U\"}");
  }
  StrAppend(&tx, "]");
  f.Tx(tx);
  auto e = f.engine().Prepare(q, f.View());
  REQUIRE(e.ok());
  CHECK(e->get() != d->get());
  // Rules are part of the key.
  const char* rq = "[:find ?n :in $ % :where (named ?n)]";
  absl::StatusOr<QueryResult> r1 =
      f.Run(rq, R"([[[(named ?n) [_ :user/name ?n] [(= ?n "Dan")]]]])");
  absl::StatusOr<QueryResult> r2 =
      f.Run(rq, R"([[[(named ?n) [_ :user/name ?n] [(= ?n "Bob")]]]])");
  REQUIRE(r1.ok());
  REQUIRE(r2.ok());
  CHECK(r1->rows[0][0] == edn::EdnValue::String("Dan"));
  CHECK(r2->rows[0][0] == edn::EdnValue::String("Bob"));
}

TEST_CASE("engine: many threads share prepared queries") {
  EngineFixture f;
  LoadIssues(f);
  const char* q =
      "[:find ?t :in $ ?email :where [?u :user/email ?email] "
      "[?i :issue/assignee ?u] [?i :issue/title ?t]]";
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 200; ++i) {
        absl::StatusOr<QueryResult> r = f.engine().Query(
            q, f.View(), engine_testing::Inputs(R"(["alice@x.org"])"));
        if (!r.ok() || r->rows.size() != 2) ++wrong;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  CHECK(wrong == 0);
}

TEST_CASE("engine: explain with a profile") {
  EngineFixture f;
  LoadIssues(f);
  const std::string text = f.Explain(
      "[:find ?t :in $ ?email :where [?u :user/email ?email] "
      "[?i :issue/assignee ?u] [?i :issue/title ?t]]",
      R"(["alice@x.org"])", true);
  CHECK_MESSAGE(text.find("actual 1 rows") != std::string::npos, text);
  CHECK_MESSAGE(text.find("total ") != std::string::npos, text);
  CHECK_MESSAGE(text.find("est ") != std::string::npos, text);
}

}  // namespace
}  // namespace mentat::query
