// The engine on the workload's queries and on each kind of pattern.

#include <doctest/doctest.h>

#include "execution/engine_test_support.h"

namespace mentat::query {
namespace {

using engine_testing::EngineFixture;
using engine_testing::Expected;
using engine_testing::Join;
using engine_testing::LoadIssues;
using storage::Basis;

TEST_CASE("engine: q1 point lookup by unique email") {
  EngineFixture f;
  LoadIssues(f);
  const char* q1 =
      "[:find ?e ?name :in $ ?email :where [?e :user/email ?email] "
      "[?e :user/name ?name]]";
  CHECK(f.Rows(q1, R"(["bob@x.org"])") ==
        StrCat("[", f.Id("bob"), " \"Bob\"]\n"));
  CHECK(f.Rows(q1, R"(["nobody@x.org"])") == "");
  // The second run comes from the plan cache and agrees.
  CHECK(f.Rows(q1, R"(["bob@x.org"])") ==
        StrCat("[", f.Id("bob"), " \"Bob\"]\n"));
}

TEST_CASE("engine: q2 ref traversal in either clause order") {
  EngineFixture f;
  LoadIssues(f);
  const char* q2 =
      "[:find ?title ?state :in $ ?email :where [?u :user/email ?email] "
      "[?i :issue/assignee ?u] [?i :issue/title ?title] "
      "[?i :issue/state ?state]]";
  const char* reversed =
      "[:find ?title ?state :in $ ?email :where [?i :issue/state ?state] "
      "[?i :issue/title ?title] [?i :issue/assignee ?u] "
      "[?u :user/email ?email]]";
  const std::string want = Join(Expected(
      R"(#{["Crash on start" :state/open] ["Slow search" :state/open]})"));
  CHECK(f.Rows(q2, R"(["alice@x.org"])") == want);
  CHECK(f.Rows(reversed, R"(["alice@x.org"])") == want);
  // Both plans start from the unique email, whatever the written order.
  for (const char* q : {q2, reversed}) {
    const std::string plan = f.Explain(q, R"(["alice@x.org"])");
    const size_t first = plan.find("1. ");
    REQUIRE(first != std::string::npos);
    const std::string line = plan.substr(first, plan.find('\n', first) - first);
    CHECK_MESSAGE(line.find(":user/email") != std::string::npos, plan);
    CHECK_MESSAGE(line.find("AVET a+v") != std::string::npos, plan);
  }
}

TEST_CASE("engine: profiles name the steps that ran as column probes") {
  const char* q4 =
      "[:find ?i ?title :where [?i :issue/state :state/open] "
      "[?i :issue/title ?title]]";
  EngineFixture plain;
  LoadIssues(plain);
  EngineFixture f(/*eager_columns=*/true);
  LoadIssues(f);
  // The first run reads :issue/title from RocksDB and asks for a column,
  // which the store builds in the background; the next ones probe the
  // column instead of hashing, with the same rows.
  const std::string rows = f.Rows(q4);
  CHECK(rows == plain.Rows(q4));
  f.store().store().WaitForColumns();
  CHECK(f.Explain(q4, "", true).find("ran as AEVT column probes") !=
        std::string::npos);
  CHECK(f.Rows(q4) == rows);
  // Without columns the plan runs as planned.
  CHECK(plain.Explain(q4, "", true).find("ran as") == std::string::npos);
}

TEST_CASE("engine: q3 count per state, from statistics and by scan") {
  EngineFixture f;
  LoadIssues(f);
  const char* q3 = "[:find ?state (count ?i) :where [?i :issue/state ?state]]";
  const std::string want = Join(
      Expected("#{[:state/open 3] [:state/closed 1] [:state/in-progress 1]}"));
  CHECK(f.Rows(q3) == want);
  CHECK(f.Explain(q3, "", true)
            .find("answered from the attribute "
                  "statistics (no scan)") != std::string::npos);
  // History is not current: the same answer by scanning.
  const char* q3_history =
      "[:find ?state (count ?i) :where [?i :issue/state ?state ?tx true]]";
  CHECK(f.Rows(q3_history, "", Basis::History()) == want);
  // (count ?e) alone comes from the datom count.
  CHECK(f.Rows("[:find (count ?i) :where [?i :issue/title _]]") == "[5]\n");
  CHECK(f.Rows("[:find (count ?s) :where [_ :issue/state ?s]]") == "[3]\n");
  // Without the statistics: counted from the AVET keys, same answers.
  QueryOptions scan;
  scan.use_statistics = false;
  auto rows = [&](std::string_view q) {
    absl::StatusOr<QueryResult> r = f.Run(q, "", Basis::Current(), scan);
    REQUIRE_MESSAGE(r.ok(), r.status().ToString());
    return Join(engine_testing::Printed(*r));
  };
  CHECK(rows(q3) == want);
  CHECK(rows("[:find (count ?i) ?state :where [?i :issue/state ?state]]") ==
        Join(Expected("#{[3 :state/open] [1 :state/closed] "
                      "[1 :state/in-progress]}")));
  CHECK(rows("[:find (count ?i) :where [?i :issue/title _]]") == "[5]\n");
  CHECK(rows("[:find (count ?s) :where [_ :issue/state ?s]]") == "[3]\n");
  CHECK(rows("[:find (count ?w) :where [?n :node/weight ?w]]").empty());
  // As of a past tx the statistics do not apply; the key pass does.
  const storage::EntityId before = f.View().basis_tx();
  f.Tx(R"([{:issue/title "New" :issue/state :state/open}])");
  CHECK(f.Rows(q3, "", Basis::AsOf(before)) == want);
  CHECK(f.Rows(q3, "", Basis::Since(before)) == "[:state/open 1]\n");
  CHECK(f.Rows(q3) == Join(Expected("#{[:state/open 4] [:state/closed 1] "
                                    "[:state/in-progress 1]}")));
}

TEST_CASE("engine: q4 predicate scan picks a range scan") {
  EngineFixture f;
  LoadIssues(f);
  const char* q4 =
      "[:find ?title ?priority :in $ ?min :where [?i :issue/state "
      ":state/open] [?i :issue/priority ?priority] [?i :issue/title ?title] "
      "[(>= ?priority ?min)]]";
  CHECK(f.Rows(q4, "[4]") ==
        Join(Expected(R"(#{["Crash on start" 5] ["Button misplaced" 4]})")));
  const char* by_range =
      "[:find ?i :where [?i :issue/priority ?p] [(>= ?p 4)]]";
  const std::string plan = f.Explain(by_range);
  CHECK_MESSAGE(plan.find("AVET a range >=") != std::string::npos, plan);
  CHECK(f.Q(by_range).rows.size() == 3);
  // Both bounds, the constant on either side.
  CHECK(f.Rows("[:find ?t :where [?i :issue/priority ?p] [(< 1 ?p)] "
               "[(<= ?p 4)] [?i :issue/title ?t]]") ==
        Join(Expected(
            R"(#{["Slow search"] ["Button misplaced"] ["Memory leak"]})")));
  // A bound of another type matches nothing (and is no error).
  CHECK(f.Rows("[:find ?i :where [?i :issue/priority ?p] [(> ?p \"a\")]]") ==
        "");
}

TEST_CASE("engine: constants and variables in every position") {
  EngineFixture f;
  LoadIssues(f);
  const std::string i1 = StrCat(f.Id("i1"));
  // e constant.
  CHECK(f.Rows(StrCat("[:find ?t :where [", i1, " :issue/title ?t]]")) ==
        "[\"Crash on start\"]\n");
  // e as a lookup ref and as a bound entity; v constant ref by lookup ref.
  CHECK(f.Rows("[:find ?t :where [?i :issue/assignee [:user/email "
               "\"carol@x.org\"]] [?i :issue/title ?t]]") ==
        "[\"Memory leak\"]\n");
  CHECK(f.Rows("[:find ?n :where [[:user/email \"bob@x.org\"] :user/name "
               "?n]]") == "[\"Bob\"]\n");
  // An unknown lookup ref or ident matches nothing.
  CHECK(f.Rows("[:find ?n :where [[:user/email \"zed@x.org\"] :user/name "
               "?n]]") == "");
  // Attribute variable: every attribute of an entity.
  CHECK(f.Q(StrCat("[:find ?a ?v :where [", i1, " ?a ?v]]")).rows.size() == 6);
  // Attribute bound to an ident through a variable, used by name.
  CHECK(f.Rows("[:find ?v :in $ ?a :where [?e ?a ?v] [?e :user/email "
               "\"bob@x.org\"]]",
               "[:user/name]") == "[\"Bob\"]\n");
  // Value-only lookup of a ref through VAET.
  CHECK(f.Q(StrCat("[:find ?e ?a :where [?e ?a ", f.Id("alice"), "]]"))
            .rows.size() == 4);
  // A one-term pattern: the entity exists.
  CHECK(f.Rows(StrCat("[:find ?t :in $ ?e :where [?e] [?e :issue/title ?t]]"),
               StrCat("[", i1, "]")) == "[\"Crash on start\"]\n");
  // Same variable twice in one pattern.
  f.Tx("[{:db/id \"self\" :node/name \"loop\"}]");
  f.Tx("[[:db/add [:node/name \"loop\"] :node/edge [:node/name \"loop\"]]]");
  CHECK(f.Rows("[:find ?n :where [?e :node/edge ?e] [?e :node/name ?n]]") ==
        "[\"loop\"]\n");
  // A keyword constant for a keyword attribute; an ident for a ref.
  CHECK(f.Q("[:find ?i :where [?i :issue/state :state/closed]]").rows.size() ==
        1);
  // Cross-type comparison is no match, not an error.
  CHECK(f.Rows("[:find ?i :where [?i :issue/priority ?p] [(= ?p \"5\")]]") ==
        "");
}

TEST_CASE("engine: joins in every order give the same rows") {
  EngineFixture f;
  LoadIssues(f);
  const std::vector<std::string> clauses = {
      "[?i :issue/reporter ?r]", "[?r :user/name ?rn]", "[?i :issue/label ?l]",
      "[?l :label/name ?ln]"};
  std::vector<int> order = {0, 1, 2, 3};
  std::string first;
  int runs = 0;
  do {
    std::string q = "[:find ?rn ?ln :where";
    for (int i : order) StrAppend(&q, " ", clauses[static_cast<size_t>(i)]);
    StrAppend(&q, "]");
    const std::string rows = f.Rows(q);
    if (runs++ == 0) {
      first = rows;
      CHECK(first == Join(Expected(R"(#{["Bob" "bug"] ["Carol" "perf"]
                                       ["Carol" "bug"] ["Bob" "ui"]})")));
    } else {
      CHECK_MESSAGE(rows == first, q);
    }
  } while (std::next_permutation(order.begin(), order.end()));
  CHECK(runs == 24);
}

TEST_CASE("engine: lookups of one entity's attributes share a seek") {
  EngineFixture f;
  LoadIssues(f);
  const char* q =
      "[:find ?t ?s ?p :in $ ?i :where [?i :issue/priority ?p] "
      "[?i :issue/title ?t] [?i :issue/state ?s]]";
  const std::string i2 = StrCat("[", f.Id("i2"), "]");
  const std::string plan = f.Explain(q, i2);
  CHECK_MESSAGE(plan.find("EntityFetch") != std::string::npos, plan);
  CHECK(f.Rows(q, i2) == "[\"Slow search\" :state/open 3]\n");
  // A missing attribute drops the row.
  CHECK(f.Rows("[:find ?n ?s :in $ ?u :where [?u :user/name ?n] "
               "[?u :user/score ?s]]",
               StrCat("[", f.Id("carol"), "]")) == "");
  // In history an attribute can have several datoms: every combination.
  f.Tx(StrCat("[[:db/add ", f.Id("i2"), " :issue/state :state/closed]]"));
  CHECK(f.Rows(q, i2, Basis::History()) ==
        Join(Expected(R"(#{["Slow search" :state/open 3]
                          ["Slow search" :state/closed 3]})")));
  CHECK(f.Rows(q, i2) == "[\"Slow search\" :state/closed 3]\n");
}

TEST_CASE("engine: joins on values that are not entity ids") {
  EngineFixture f;
  LoadIssues(f);
  f.Tx(R"([{:node/name "Typo" :node/weight 1} {:node/name "Crash on start"
            :node/weight 5} {:node/name "Nothing" :node/weight 2}])");
  CHECK(f.Rows("[:find ?t ?w :where [?i :issue/title ?t] [?n :node/name ?t] "
               "[?n :node/weight ?w] [?i :issue/priority ?w]]") ==
        Join(Expected(R"(#{["Typo" 1] ["Crash on start" 5]})")));
  CHECK(f.Rows("[:find ?t :where [?n :node/name ?t] [?i :issue/title ?t]]") ==
        Join(Expected(R"(#{["Typo"] ["Crash on start"]})")));
}

TEST_CASE("engine: insufficient binding") {
  EngineFixture f;
  LoadIssues(f);
  absl::Status s = f.Error("[:find ?e ?a ?v :where [?e ?a ?v]]");
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK_MESSAGE(std::string(s.message()).find("insufficient binding") !=
                    std::string::npos,
                s.ToString());
}

}  // namespace
}  // namespace mentat::query
