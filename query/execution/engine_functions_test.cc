// Predicates and functions, the pure built-ins and the database ones.

#include <doctest/doctest.h>

#include "execution/engine_test_support.h"

namespace mentat::query {
namespace {

using engine_testing::EngineFixture;
using engine_testing::Expected;
using engine_testing::Join;
using engine_testing::LoadIssues;

TEST_CASE("engine: built-in predicates and functions") {
  EngineFixture f;
  LoadIssues(f);
  CHECK(f.Rows("[:find ?t ?p2 :where [?i :issue/priority ?p] "
               "[(* ?p 2) ?p2] [(> ?p2 8)] [?i :issue/title ?t]]") ==
        "[\"Crash on start\" 10]\n");
  CHECK(f.Rows("[:find ?s :where [?u :user/name \"Bob\"] [?u :user/email ?e] "
               "[(str ?e \"!\") ?s]]") == "[\"bob@x.org!\"]\n");
  CHECK(f.Rows("[:find ?t :where [?i :issue/title ?t] "
               "[(clojure.string/starts-with? ?t \"S\")]]") ==
        "[\"Slow search\"]\n");
  // A function result bound to a variable bound already compares.
  CHECK(f.Rows("[:find ?t :where [?i :issue/priority ?p] [?i :issue/title ?t] "
               "[(inc 3) ?p]]") ==
        Join(Expected(R"(#{["Button misplaced"] ["Memory leak"]})")));
  // Integer overflow is an error naming the function.
  absl::Status s = f.Error(
      "[:find ?x :where [?i :issue/priority ?p] "
      "[(+ ?p 9223372036854775807) ?x]]");
  CHECK(s.code() == absl::StatusCode::kOutOfRange);
  // Predicates over input-bound variables only run before any scan.
  CHECK(f.Rows("[:find ?t :in $ ?x :where [(> ?x 2)] [?i :issue/priority ?x] "
               "[?i :issue/title ?t]]",
               "[3]") == "[\"Slow search\"]\n");
  CHECK(f.Rows("[:find ?t :in $ ?x :where [(> ?x 3)] [?i :issue/priority ?x] "
               "[?i :issue/title ?t]]",
               "[3]") == "");
}

TEST_CASE("engine: ground in every binding form") {
  EngineFixture f;
  LoadIssues(f);
  CHECK(f.Rows("[:find ?t :where [(ground 3) ?p] [?i :issue/priority ?p] "
               "[?i :issue/title ?t]]") == "[\"Slow search\"]\n");
  CHECK(f.Rows("[:find ?a ?b :where [(ground [1 \"x\"]) [?a ?b]]]") ==
        "[1 \"x\"]\n");
  CHECK(f.Rows("[:find ?t :where [(ground [1 5 5]) [?p ...]] "
               "[?i :issue/priority ?p] [?i :issue/title ?t]]") ==
        Join(Expected(R"(#{["Typo"] ["Crash on start"]})")));
  CHECK(f.Rows("[:find ?a ?b :where [(ground [[1 2] [3 4] [1 2]]) "
               "[[?a ?b]]]]") == Join(Expected("#{[1 2] [3 4]}")));
  // A keyword bound by ground matches a keyword attribute.
  CHECK(f.Q("[:find ?i :where [(ground :state/open) ?s] "
            "[?i :issue/state ?s]]")
            .rows.size() == 3);
}

TEST_CASE("engine: get-else, get-some, missing?") {
  EngineFixture f;
  LoadIssues(f);
  CHECK(f.Rows("[:find ?n ?s :where [?u :user/name ?n] "
               "[(get-else $ ?u :user/score -1.0) ?s]]") ==
        Join(Expected(R"(#{["Alice" 9.5] ["Bob" 7.0] ["Carol" -1.0]})")));
  CHECK(f.Rows("[:find ?n :where [?u :user/name ?n] "
               "[(missing? $ ?u :user/score)]]") == "[\"Carol\"]\n");
  CHECK(f.Rows("[:find ?n :where [?u :user/name ?n] "
               "(not [(missing? $ ?u :user/score)])]") ==
        Join(Expected(R"(#{["Alice"] ["Bob"]})")));
  // get-some: the first attribute with a value, as [attribute value].
  const std::string score =
      StrCat(*f.View().schema().EntityForIdent("user/score"));
  CHECK(f.Rows("[:find ?n ?v :where [?u :user/name ?n] "
               "[(get-some $ ?u :user/score :user/email) [?a ?v]]]") ==
        Join(Expected(R"(#{["Alice" 9.5] ["Bob" 7.0]
                          ["Carol" "carol@x.org"]})")));
  CHECK(f.Rows("[:find ?a :where [?u :user/name \"Bob\"] "
               "[(get-some $ ?u :user/score) [?a _]]]") ==
        StrCat("[", score, "]\n"));
  // get-else on a cardinality-many attribute is refused, as in Datomic.
  CHECK(f.Error("[:find ?x :where [?u :user/name _] "
                "[(get-else $ ?u :user/tags \"\") ?x]]")
            .code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("engine: tuple, untuple, identity") {
  EngineFixture f;
  LoadIssues(f);
  CHECK(f.Rows("[:find ?t :where [?u :user/name \"Bob\"] [?u :user/email ?e] "
               "[(tuple ?e 7) ?t]]") == "[[\"bob@x.org\" 7]]\n");
  CHECK(f.Rows("[:find ?e ?n :where [?u :user/name \"Bob\"] "
               "[?u :user/email ?x] [(tuple ?x 7) ?t] "
               "[(untuple ?t) [?e ?n]]]") == "[\"bob@x.org\" 7]\n");
  CHECK(f.Rows("[:find ?y :where [?u :user/name \"Bob\"] "
               "[(identity ?u) ?y] [?y :user/email ?e]]") ==
        StrCat("[", f.Id("bob"), "]\n"));
}

TEST_CASE("engine: tx-ids and tx-data") {
  EngineFixture f;
  const auto first = f.Tx("[{:user/email \"a@x\"}]");
  const auto second = f.Tx("[{:user/email \"b@x\"}]");
  const auto third = f.Tx("[{:user/email \"c@x\"}]");
  CHECK(f.Rows("[:find ?tx :in $ ?t1 ?t2 :where "
               "[(tx-ids $ ?t1 ?t2) [?tx ...]]]",
               StrCat("[", second.tx, " ", third.tx + 1, "]")) ==
        Join(Expected(StrCat("#{[", second.tx, "] [", third.tx, "]}"))));
  // Open start.
  CHECK(f.Q("[:find ?tx :in $ ?t2 :where [(tx-ids $ nil ?t2) [?tx ...]] "
            "[?tx :db/txInstant _]]",
            StrCat("[", second.tx, "]"))
            .rows.size() >= 2);
  CHECK(f.Q("[:find ?e :in $ ?t1 :where [(tx-ids $ ?t1 nil) [?tx ...]] "
            "[?e :user/email _ ?tx]]",
            StrCat("[", second.tx, "]"))
            .rows.size() == 2);
  // tx-data: what the second transaction asserted (and its tx instant).
  CHECK(f.Rows("[:find ?v ?added :in $ ?tx :where "
               "[(tx-data $ ?tx) [[?e ?a ?v _ ?added]]] "
               "[?a :db/ident :user/email]]",
               StrCat("[", second.tx, "]")) == "[\"b@x\" true]\n");
  // Both read the log, not the view: as of the first transaction, the log
  // still holds the second and the third.
  const storage::Basis as_of = storage::Basis::AsOf(first.tx);
  CHECK(f.Q("[:find ?tx :in $ ?t1 :where [(tx-ids $ ?t1 nil) [?tx ...]]]",
            StrCat("[", first.tx, "]"), as_of)
            .rows.size() == 3);
  CHECK(f.Q("[:find ?e :in $ ?tx :where [(tx-data $ ?tx) [[?e]]]]",
            StrCat("[", third.tx, "]"), as_of)
            .rows.size() == 2);  // the new user and the tx
  absl::Status s = f.Error(
      "[:find ?e :in $ ?tx :where [(tx-data $ ?tx) [[?e]]]]", "[\"x\"]");
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK_MESSAGE(std::string(s.message()).find("tx-data's argument 2") !=
                    std::string::npos,
                s.ToString());
}

}  // namespace
}  // namespace mentat::query
