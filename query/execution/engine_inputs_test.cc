// Inputs of every kind, and the as_of / since / history bases.

#include <doctest/doctest.h>

#include "execution/engine_test_support.h"

namespace mentat::query {
namespace {

using engine_testing::EngineFixture;
using engine_testing::Expected;
using engine_testing::Join;
using engine_testing::LoadIssues;
using storage::Basis;

TEST_CASE("engine: scalar, tuple, collection and relation inputs") {
  EngineFixture f;
  LoadIssues(f);
  const char* by_emails =
      "[:find ?e ?name :in $ [?email ...] :where [?e :user/email ?email] "
      "[?e :user/name ?name]]";
  CHECK(f.Q(by_emails, R"([["alice@x.org" "bob@x.org" "bob@x.org" "no"]])")
            .rows.size() == 2);
  CHECK(f.Q(by_emails, "[[]]").rows.empty());
  CHECK(f.Rows("[:find ?t :in $ [?s ?p] :where [?i :issue/state ?s] "
               "[?i :issue/priority ?p] [?i :issue/title ?t]]",
               "[[:state/open 4]]") == "[\"Button misplaced\"]\n");
  CHECK(f.Rows("[:find ?t :in $ [[?s ?p]] :where [?i :issue/state ?s] "
               "[?i :issue/priority ?p] [?i :issue/title ?t]]",
               "[[[:state/open 4] [:state/closed 1] [:state/closed 5]]]") ==
        Join(Expected(R"(#{["Button misplaced"] ["Typo"]})")));
  // A blank in a relation input.
  CHECK(f.Q("[:find ?s :in $ [[?s _]] :where [?i :issue/state ?s]]",
            "[[[:state/open 1] [:state/open 2]]]")
            .rows.size() == 1);
  // Entity inputs: an id, an ident-free lookup ref, a keyword attribute.
  const std::string bob = StrCat(f.Id("bob"));
  for (const std::string& who :
       {bob, std::string("[:user/email \"bob@x.org\"]")}) {
    CHECK(f.Rows("[:find ?t :in $ ?u :where [?i :issue/assignee ?u] "
                 "[?i :issue/title ?t]]",
                 StrCat("[", who, "]")) ==
          Join(Expected(R"(#{["Typo"] ["Button misplaced"]})")));
  }
  CHECK(f.Rows("[:find ?t :in $ [?u ...] :where [?i :issue/reporter ?u] "
               "[?i :issue/title ?t]]",
               R"([[[:user/email "carol@x.org"] [:user/email "nobody"]]])") ==
        "[\"Slow search\"]\n");
  // An integer for a double attribute converts.
  CHECK(f.Rows("[:find ?n :in $ ?s :where [?u :user/score ?s] "
               "[?u :user/name ?n]]",
               "[7]") == "[\"Bob\"]\n");
  // An input only :find uses comes back as it was given.
  CHECK(f.Rows("[:find ?x ?n :in $ ?x :where [?u :user/name ?n] "
               "[(= ?n \"Bob\")]]",
               "[42]") == "[42 \"Bob\"]\n");
}

TEST_CASE("engine: bad inputs are InvalidArgument naming the input") {
  EngineFixture f;
  LoadIssues(f);
  const char* q =
      "[:find ?n :in $ ?email :where [?u :user/email ?email] "
      "[?u :user/name ?n]]";
  absl::Status s = f.Error(q, "[]");
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  s = f.Error(q, "[42]");
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK_MESSAGE(std::string(s.message()).find("?email") != std::string::npos,
                s.ToString());
  s = f.Error(
      "[:find ?n :in $ [?e ...] :where [?u :user/email ?e] "
      "[?u :user/name ?n]]",
      R"(["alice@x.org"])");
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK_MESSAGE(
      std::string(s.message()).find("collection") != std::string::npos,
      s.ToString());
  s = f.Error(
      "[:find ?t :in $ ?u :where [?i :issue/assignee ?u] "
      "[?i :issue/title ?t]]",
      R"(["bob"])");
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  s = f.Error(
      "[:find ?t :in $ [?a ?b] :where [?i :issue/priority ?a] "
      "[?i :issue/title ?t] [(< ?a ?b)]]",
      "[[1]]");
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("engine: as_of, since and history") {
  EngineFixture f;
  LoadIssues(f);
  const storage::EntityId loaded = f.View().basis_tx();
  f.Tx("[[:db/add [:user/email \"alice@x.org\"] :user/name \"Alicia\"]]");
  const auto change =
      f.Tx(StrCat("[[:db/add ", f.Id("i2"), " :issue/state :state/closed]]"));
  const char* q2 =
      "[:find ?t ?s :in $ ?email :where [?u :user/email ?email] "
      "[?i :issue/assignee ?u] [?i :issue/title ?t] [?i :issue/state ?s]]";
  CHECK(f.Rows(q2, R"(["alice@x.org"])") ==
        Join(Expected(R"(#{["Crash on start" :state/open]
                          ["Slow search" :state/closed]})")));
  CHECK(f.Rows(q2, R"(["alice@x.org"])", Basis::AsOf(loaded)) ==
        Join(Expected(R"(#{["Crash on start" :state/open]
                          ["Slow search" :state/open]})")));
  // q3 as of the load is counted by a scan.
  CHECK(f.Rows("[:find ?s (count ?i) :where [?i :issue/state ?s]]", "",
               Basis::AsOf(loaded)) ==
        Join(Expected(
            "#{[:state/open 3] [:state/closed 1] [:state/in-progress 1]}")));
  // Since the load: only what changed after it.
  CHECK(f.Rows("[:find ?i :where [?i :issue/state _]]", "",
               Basis::Since(loaded)) == StrCat("[", f.Id("i2"), "]\n"));
  CHECK(f.Rows("[:find ?n :where [_ :user/name ?n]]", "",
               Basis::Since(loaded)) == "[\"Alicia\"]\n");
  // History: every assertion and retraction, with tx and added.
  CHECK(f.Rows("[:find ?n ?added :where [?u :user/email \"alice@x.org\"] "
               "[?u :user/name ?n ?tx ?added]]",
               "", Basis::History()) ==
        Join(Expected(R"(#{["Alice" true] ["Alice" false]
                          ["Alicia" true]})")));
  CHECK(f.Rows("[:find ?s :in $ ?tx :where [?i :issue/state ?s ?tx false]]",
               StrCat("[", change.tx, "]"),
               Basis::History()) == "[:state/open]\n");
  // History rows are distinct even when the datoms repeat.
  CHECK(f.Q("[:find ?i :where [?i :issue/state _]]", "", Basis::History())
            .rows.size() == 5);
  // Pull is not defined on history.
  CHECK(f.Error("[:find (pull ?i [*]) :where [?i :issue/state _]]", "",
                Basis::History())
            .code() == absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace mentat::query

namespace mentat::query {
namespace {

// PrepareCall: the server's one parse of a query. It checks the inputs'
// count, takes the rules input out and reports the query's shape.
TEST_CASE("engine: PrepareCall reports the shape and takes the rules out") {
  engine_testing::EngineFixture f;
  engine_testing::LoadIssues(f);
  const std::string text =
      "[:find [?t ...] :in $ % ?email :where [?u :user/email ?email] "
      "(reported ?i ?u) [?i :issue/title ?t]]";
  std::vector<edn::EdnValue> inputs = engine_testing::Inputs(
      R"([[[(reported ?i ?u) [?i :issue/reporter ?u]]] "carol@x.org"])");
  REQUIRE(inputs.size() == 2);
  for (int round = 0; round < 2; ++round) {  // a miss, then the cache
    std::vector<edn::EdnValue> call = inputs;
    auto prepared = f.engine().PrepareCall(text, f.View(), &call);
    REQUIRE_MESSAGE(prepared.ok(), prepared.status().ToString());
    const QueryShape& shape = (*prepared)->shape();
    CHECK(shape.kind == FindSpec::Kind::kCollection);
    CHECK(shape.columns == std::vector<std::string>{"?t"});
    CHECK(shape.inputs == 2);
    CHECK(shape.rules_index == 0);
    REQUIRE(call.size() == 1);  // the rules went out
    CHECK(call[0] == inputs[1]);
    struct Collect : RowSink {
      [[nodiscard]] absl::Status OnColumns(
          const std::vector<std::string>&) override {
        return absl::OkStatus();
      }
      [[nodiscard]] absl::Status OnRows(std::vector<Row>&& rows) override {
        n += rows.size();
        return absl::OkStatus();
      }
      size_t n = 0;
    } sink;
    REQUIRE(f.engine().Execute(**prepared, f.View(), call, {}, &sink).ok());
    CHECK(sink.n == 1);
  }
  std::vector<edn::EdnValue> one = {inputs[1]};
  absl::Status s = f.engine().PrepareCall(text, f.View(), &one).status();
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK(s.message() ==
        "the query's :in takes 2 input(s) after its sources, the request "
        "has 1");
  std::vector<edn::EdnValue> none;
  auto plain = f.engine().PrepareCall(
      "[:find (count ?e) . :where [?e :user/email]]", f.View(), &none);
  REQUIRE(plain.ok());
  CHECK((*plain)->shape().kind == FindSpec::Kind::kScalar);
  CHECK((*plain)->shape().rules_index == -1);
  CHECK((*plain)->shape().inputs == 0);
}

}  // namespace
}  // namespace mentat::query
