// Pull's limits and its recursion over graphs: each entity is expanded once
// per path (cycles cut, as Datomic's `...` stops at them), and a pull that
// explodes (a dense DAG has exponentially many paths) stops at the
// deadline, the cancel flag, the memory budget, the scan limit or the
// result's size cap, in Pull, PullMany and `(pull ...)` in queries.

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "execution/engine_test_support.h"
#include "mentat/query/edn/edn_printer.h"
#include "mentat/query/pull.h"

namespace mentat::query {
namespace {

using edn::EdnValue;
using engine_testing::EngineFixture;
using storage::Basis;
using storage::DbView;
using storage::EntityId;

constexpr char kRecursive[] = "[:node/name {:node/edge ...}]";

PullPattern Pattern(std::string_view text) {
  absl::StatusOr<edn::EdnValue> form = edn::ParseEdn(text);
  REQUIRE(form.ok());
  absl::StatusOr<PullPattern> p = ParsePullPattern(*form);
  REQUIRE_MESSAGE(p.ok(), p.status().ToString());
  return *std::move(p);
}

// `levels` levels of two nodes each, every node linked to both nodes of
// the level below (80 nodes for 40 levels): 2^levels paths from the top.
void LoadDenseDag(EngineFixture& f, int levels) {
  std::string tx = "[";
  for (int l = 0; l < levels; ++l) {
    for (int k = 0; k < 2; ++k) {
      StrAppend(&tx, "{:db/id \"n", l, "-", k, "\" :node/name \"n", l, "-", k,
                "\"");
      if (l + 1 < levels) {
        StrAppend(&tx, " :node/edge [\"n", l + 1, "-0\" \"n", l + 1, "-1\"]");
      }
      StrAppend(&tx, "}");
    }
  }
  StrAppend(&tx, "]");
  f.Tx(tx);
}

std::string Message(const absl::Status& s) { return std::string(s.message()); }

// Runs `pull` and checks that it failed with `code` and a message holding
// `needle`, well before the exponential pull could have finished.
template <typename Fn>
void ExpectStopped(Fn pull, absl::StatusCode code, std::string_view needle) {
  const auto start = std::chrono::steady_clock::now();
  absl::Status s = pull();
  const auto took = std::chrono::steady_clock::now() - start;
  CHECK_MESSAGE(s.code() == code, s.ToString());
  CHECK_MESSAGE(Message(s).find(needle) != std::string::npos, s.ToString());
  // Generous for a busy 2-core machine; unstopped it runs for days.
  CHECK(took < std::chrono::seconds(60));
}

TEST_CASE("pull: recursion expands an entity once per path") {
  EngineFixture f;
  // a -> b, a -> c, b -> d, c -> d (a diamond), d -> a (a cycle).
  f.Tx(R"([{:db/id "a" :node/name "a" :node/edge ["b" "c"]}
           {:db/id "b" :node/name "b" :node/edge ["d"]}
           {:db/id "c" :node/name "c" :node/edge ["d"]}
           {:db/id "d" :node/name "d" :node/edge ["a"]}])");
  const DbView view = f.View();
  absl::StatusOr<EdnValue> v = Pull(view, Pattern(kRecursive), f.Id("a"));
  REQUIRE_MESSAGE(v.ok(), v.status().ToString());
  // d is on two paths, so it is expanded under b and under c; a is on the
  // path already when d refers back to it, so the cycle is cut there.
  const std::string a = StrCat("{:db/id ", f.Id("a"), "}");
  const std::string d_map = StrCat("{:node/name \"d\" :node/edge [", a, "]}");
  absl::StatusOr<EdnValue> expected = edn::ParseEdn(
      StrCat("{:node/name \"a\" :node/edge [{:node/name \"b\" :node/edge [",
             d_map, "]} {:node/name \"c\" :node/edge [", d_map, "]}]}"));
  REQUIRE(expected.ok());
  CHECK_MESSAGE(*v == *expected, edn::PrintEdn(*v));

  // A depth bounds the levels: d's refs are left out two levels down.
  v = Pull(view, Pattern("[:node/name {:node/edge 2}]"), f.Id("a"));
  REQUIRE(v.ok());
  expected = edn::ParseEdn(
      "{:node/name \"a\" :node/edge [{:node/name \"b\" :node/edge "
      "[{:node/name \"d\"}]} {:node/name \"c\" :node/edge [{:node/name "
      "\"d\"}]}]}");
  REQUIRE(expected.ok());
  CHECK_MESSAGE(*v == *expected, edn::PrintEdn(*v));
}

TEST_CASE("pull: a recursive pull over a dense DAG stops at every limit") {
  EngineFixture f;
  LoadDenseDag(f, 40);
  const DbView view = f.View();
  const PullPattern pattern = Pattern(kRecursive);
  const EntityId top = f.Id("n0-0");

  SUBCASE("the deadline") {
    QueryOptions limits;
    limits.deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
    ExpectStopped([&] { return Pull(view, pattern, top, limits).status(); },
                  absl::StatusCode::kDeadlineExceeded, "pull deadline");
  }
  SUBCASE("cancellation raised while it runs") {
    std::atomic<bool> cancelled{false};
    QueryOptions limits;
    limits.cancelled = &cancelled;
    // The pull never ends by itself, so the flag is raised while it runs
    // however late this thread gets to it.
    std::thread canceller([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      cancelled = true;
    });
    ExpectStopped([&] { return Pull(view, pattern, top, limits).status(); },
                  absl::StatusCode::kCancelled, "pull cancelled");
    canceller.join();
  }
  SUBCASE("the memory budget") {
    QueryOptions limits;
    limits.memory_budget_bytes = 1 << 20;
    limits.max_pull_bytes = 0;
    ExpectStopped([&] { return Pull(view, pattern, top, limits).status(); },
                  absl::StatusCode::kResourceExhausted, "--query-memory");
  }
  SUBCASE("the scan limit") {
    QueryOptions limits;
    limits.max_rows_scanned = 100000;
    limits.max_pull_bytes = 0;
    ExpectStopped([&] { return Pull(view, pattern, top, limits).status(); },
                  absl::StatusCode::kResourceExhausted, "--query-scan-limit");
  }
  SUBCASE("the size cap by default") {
    // Nothing set: the default cap (256 MiB) stops it.
    ExpectStopped([&] { return Pull(view, pattern, top).status(); },
                  absl::StatusCode::kResourceExhausted, "--pull-max-bytes");
  }
  SUBCASE("a pull in a query at its deadline and under the cap") {
    const std::string q = StrCat("[:find (pull ?e ", kRecursive,
                                 ") :where [?e :node/name \"n0-0\"]]");
    QueryOptions limits;
    limits.deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
    ExpectStopped(
        [&] { return f.Run(q, "", Basis::Current(), limits).status(); },
        absl::StatusCode::kDeadlineExceeded, "query deadline");
    limits = QueryOptions();
    limits.max_pull_bytes = 1 << 20;
    ExpectStopped(
        [&] { return f.Run(q, "", Basis::Current(), limits).status(); },
        absl::StatusCode::kResourceExhausted, "--pull-max-bytes");
  }
  // Nothing is left behind: a small pull of the same graph answers.
  absl::StatusOr<EdnValue> one =
      Pull(view, Pattern("[:node/name {:node/edge 1}]"), top);
  REQUIRE(one.ok());
  CHECK(one->Get("node/edge")->size() == 2);
}

TEST_CASE("pull: the size cap counts a PullMany's results together") {
  EngineFixture f;
  LoadDenseDag(f, 6);  // 2^6 paths: a few KiB a result
  const DbView view = f.View();
  const PullPattern pattern = Pattern(kRecursive);
  size_t one_result = 0;
  {
    QueryOptions limits;
    absl::StatusOr<PullExecutor> executor =
        PullExecutor::Create(view, pattern, limits);
    REQUIRE(executor.ok());
    REQUIRE(executor->Pull(f.Id("n0-0")).ok());
    // The scan counts every datom read and entity expanded.
    CHECK(executor->rows_scanned() > 100);
  }
  // Find a single result's size: the smallest cap it fits.
  for (size_t cap = 1024; one_result == 0; cap *= 2) {
    QueryOptions limits;
    limits.max_pull_bytes = cap;
    if (Pull(view, pattern, f.Id("n0-0"), limits).ok()) one_result = cap;
    REQUIRE(cap < (size_t{1} << 30));
  }
  QueryOptions limits;
  limits.max_pull_bytes = one_result;
  // One fits; three of the same do not.
  CHECK(PullMany(view, pattern, {f.Id("n0-0")}, limits).ok());
  absl::StatusOr<std::vector<EdnValue>> many = PullMany(
      view, pattern, {f.Id("n0-0"), f.Id("n0-0"), f.Id("n0-0")}, limits);
  REQUIRE_FALSE(many.ok());
  CHECK(many.status().code() == absl::StatusCode::kResourceExhausted);
  CHECK_MESSAGE(
      Message(many.status()).find("results before it") != std::string::npos,
      many.status().ToString());
  // In a query the cap is per pulled value: three rows of it are fine.
  absl::StatusOr<QueryResult> rows =
      f.Run(StrCat("[:find ?n (pull ?e ", kRecursive,
                   ") :where [?e :node/name ?n] [(< ?n \"n1\")]]"),
            "", Basis::Current(), limits);
  REQUIRE_MESSAGE(rows.ok(), rows.status().ToString());
  CHECK(rows->rows.size() == 2);
}

}  // namespace
}  // namespace mentat::query
