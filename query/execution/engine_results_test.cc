// Aggregates, find specs, pull, :keys, order/limit/offset, streaming.

#include <doctest/doctest.h>

#include "execution/engine_test_support.h"

namespace mentat::query {
namespace {

using edn::EdnValue;
using engine_testing::Edn;
using engine_testing::EngineFixture;
using engine_testing::Expected;
using engine_testing::Join;
using engine_testing::LoadIssues;

TEST_CASE("engine: aggregates and :with") {
  EngineFixture f;
  LoadIssues(f);
  // Without :with the bag is the set of ?p: 5 4 3 1.
  CHECK(f.Rows("[:find (sum ?p) :where [?i :issue/priority ?p]]") == "[13]\n");
  // With :with ?i every issue counts: 5+3+1+4+4.
  CHECK(f.Rows("[:find (sum ?p) :with ?i :where [?i :issue/priority ?p]]") ==
        "[17]\n");
  CHECK(f.Rows("[:find ?s (count ?i) (max ?p) (min ?p) :where "
               "[?i :issue/state ?s] [?i :issue/priority ?p]]") ==
        Join(Expected("#{[:state/open 3 5 3] [:state/closed 1 1 1] "
                      "[:state/in-progress 1 4 4]}")));
  CHECK(f.Rows("[:find (count-distinct ?p) (count ?i) :where "
               "[?i :issue/priority ?p]]") == "[4 5]\n");
  CHECK(f.Rows("[:find (min 2 ?p) (max 2 ?p) :with ?i :where "
               "[?i :issue/priority ?p]]") == "[[1 3] [5 4]]\n");
  CHECK(f.Q("[:find (distinct ?s) :where [?i :issue/state ?s]]").ToEdn() ==
        Edn("#{[#{:state/open :state/closed :state/in-progress}]}"));
  QueryResult avg = f.Q(
      "[:find (avg ?p) (median ?p) :with ?i :where [?i :issue/priority ?p]]");
  REQUIRE(avg.rows.size() == 1);
  CHECK(avg.rows[0][0] == EdnValue::Float(3.4));
  CHECK(avg.rows[0][1] == EdnValue::Int(4));
  // Grouped by a name through a join.
  CHECK(f.Rows("[:find ?n (count ?i) :where [?i :issue/assignee ?u] "
               "[?u :user/name ?n]]") ==
        Join(Expected(R"(#{["Alice" 2] ["Bob" 2] ["Carol" 1]})")));
  // Nothing matches: no rows.
  CHECK(f.Rows("[:find (count ?i) :where [?i :issue/priority 99]]") == "");
}

TEST_CASE("engine: find specs, pull and :keys") {
  EngineFixture f;
  LoadIssues(f);
  QueryResult coll = f.Q(
      "[:find [?t ...] :where [?i :issue/priority 4] [?i :issue/title ?t]]");
  CHECK(coll.kind == FindSpec::Kind::kCollection);
  CHECK(coll.rows.size() == 2);
  CHECK(f.Q("[:find ?n . :where [?u :user/email \"bob@x.org\"] "
            "[?u :user/name ?n]]")
            .ToEdn() == EdnValue::String("Bob"));
  CHECK(f.Q("[:find ?n . :where [?u :user/email \"nobody\"] "
            "[?u :user/name ?n]]")
            .ToEdn()
            .is_nil());
  CHECK(f.Q("[:find [?n ?e] :where [?u :user/email \"bob@x.org\"] "
            "[?u :user/name ?n] [?u :user/email ?e]]")
            .ToEdn() == Edn(R"(["Bob" "bob@x.org"])"));
  // Pull, as the workload's pull query runs it.
  const std::string i3 = StrCat(f.Id("i3"));
  QueryResult pulled =
      f.Q("[:find (pull ?e [:issue/title :issue/priority]) . :in $ ?e "
          ":where [?e :issue/title _]]",
          StrCat("[", i3, "]"));
  CHECK(pulled.ToEdn() == Edn(R"({:issue/title "Typo" :issue/priority 1})"));
  CHECK(f.Q("[:find (pull ?e [*]) . :in $ ?e :where [?e :issue/title _]]",
            StrCat("[", i3, "]"))
            .ToEdn()
            .is_map());
  // :keys makes each row a map.
  QueryResult keyed =
      f.Q("[:find ?n ?e :keys name email :where [?u :user/name ?n] "
          "[?u :user/email ?e] [(= ?n \"Bob\")]]");
  REQUIRE(keyed.rows.size() == 1);
  CHECK(keyed.keyed);
  CHECK(keyed.rows[0][0] == Edn(R"({:name "Bob" :email "bob@x.org"})"));
  CHECK(f.Q("[:find ?n :strs name :where [?u :user/name ?n] "
            "[(= ?n \"Bob\")]]")
            .rows[0][0] == Edn(R"({"name" "Bob"})"));
}

TEST_CASE("engine: order, limit and offset") {
  EngineFixture f;
  LoadIssues(f);
  QueryResult r =
      f.Q("[:find ?t ?p :where [?i :issue/title ?t] [?i :issue/priority ?p] "
          ":order [(desc ?p) ?t] :limit 3]");
  REQUIRE(r.rows.size() == 3);
  CHECK(EdnValue::Vector(r.rows[0]) == Edn(R"(["Crash on start" 5])"));
  CHECK(EdnValue::Vector(r.rows[1]) == Edn(R"(["Button misplaced" 4])"));
  CHECK(EdnValue::Vector(r.rows[2]) == Edn(R"(["Memory leak" 4])"));
  r =
      f.Q("[:find ?t :where [?i :issue/title ?t] :order [?t] :offset 1 "
          ":limit 2]");
  REQUIRE(r.rows.size() == 2);
  CHECK(r.rows[0][0] == EdnValue::String("Crash on start"));
  CHECK(r.rows[1][0] == EdnValue::String("Memory leak"));
  // Without :order, :limit stops the scan early.
  CHECK(f.Q("[:find ?i :where [?i :issue/title _] :limit 2]").rows.size() == 2);
  CHECK(f.Q("[:find ?i :where [?i :issue/title _] :offset 4]").rows.size() ==
        1);
  CHECK(f.Q("[:find ?i :where [?i :issue/title _] :limit 0]").rows.empty());
  // Ordering an aggregate query by its group.
  r = f.Q("[:find ?s (count ?i) :where [?i :issue/state ?s] :order [?s]]");
  REQUIRE(r.rows.size() == 3);
  CHECK(r.rows[0][0] == EdnValue::Keyword("state/closed"));
  CHECK(f.Error("[:find ?t :where [?i :issue/title ?t] :order [?i]]").code() ==
        absl::StatusCode::kInvalidArgument);
}

class BatchSink : public RowSink {
 public:
  [[nodiscard]] absl::Status OnColumns(
      const std::vector<std::string>& c) override {
    columns = c;
    return absl::OkStatus();
  }
  [[nodiscard]] absl::Status OnRows(std::vector<Row>&& rows) override {
    batches.push_back(rows.size());
    total += rows.size();
    if (fail_after > 0 && batches.size() >= fail_after) {
      return absl::UnavailableError("client went away");
    }
    return absl::OkStatus();
  }
  std::vector<std::string> columns;
  std::vector<size_t> batches;
  size_t total = 0;
  size_t fail_after = 0;
};

TEST_CASE("engine: a large result streams in batches") {
  EngineFixture f;
  std::string tx = "[";
  for (int i = 0; i < 5500; ++i) {
    StrAppend(&tx, "{:node/name \"n", i, "\" :node/weight ", i % 7, "}");
  }
  StrAppend(&tx, "]");
  f.Tx(tx);
  auto prepared =
      f.engine().Prepare("[:find ?e ?w :where [?e :node/weight ?w]]", f.View());
  REQUIRE(prepared.ok());
  BatchSink sink;
  QueryOptions options;
  options.batch_rows = 1000;
  REQUIRE(f.engine().Execute(**prepared, f.View(), {}, options, &sink).ok());
  CHECK(sink.columns == std::vector<std::string>{"?e", "?w"});
  CHECK(sink.total == 5500);
  CHECK(sink.batches == std::vector<size_t>{1000, 1000, 1000, 1000, 1000, 500});
  // The sink's error stops the query and comes back.
  BatchSink failing;
  failing.fail_after = 2;
  absl::Status s =
      f.engine().Execute(**prepared, f.View(), {}, options, &failing);
  CHECK(s.code() == absl::StatusCode::kUnavailable);
  CHECK(failing.total == 2000);
}

}  // namespace
}  // namespace mentat::query
