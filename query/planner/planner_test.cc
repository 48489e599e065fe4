// The planner on its own: clause order from statistics, access paths,
// hash joins, deduplication, errors.

#include <doctest/doctest.h>

#include "execution/engine_test_support.h"
#include "mentat/query/parser.h"
#include "planner/explain.h"
#include "planner/query_planner.h"

namespace mentat::query::planner {
namespace {

using engine_testing::EngineFixture;
using engine_testing::LoadIssues;

std::unique_ptr<QueryPlan> Plan(EngineFixture& f, std::string_view text) {
  absl::StatusOr<ParsedQuery> q = ParseQuery(text);
  REQUIRE_MESSAGE(q.ok(), q.status().ToString());
  storage::DbView view = f.View();
  absl::StatusOr<std::unique_ptr<QueryPlan>> plan =
      PlanQuery(*q, {}, view.db().schema_ptr(), view.db().stats());
  REQUIRE_MESSAGE(plan.ok(), plan.status().ToString());
  return *std::move(plan);
}

[[nodiscard]] absl::Status PlanError(EngineFixture& f, std::string_view text) {
  absl::StatusOr<ParsedQuery> q = ParseQuery(text);
  REQUIRE(q.ok());
  storage::DbView view = f.View();
  return PlanQuery(*q, {}, view.db().schema_ptr(), view.db().stats()).status();
}

// Many issues, few users: a clause on a user is selective.
void LoadMany(EngineFixture& f) {
  std::string tx = "[{:db/id \"u1\" :user/email \"u1@x\" :user/name \"U1\"}";
  StrAppend(&tx, "{:db/id \"u2\" :user/email \"u2@x\" :user/name \"U2\"}");
  for (int i = 0; i < 400; ++i) {
    StrAppend(&tx, "{:issue/title \"t", i, "\" :issue/priority ", i % 5 + 1,
              " :issue/state ", i % 10 == 0 ? ":state/open" : ":state/closed",
              " :issue/assignee \"", i % 2 == 0 ? "u1" : "u2", "\"}");
  }
  StrAppend(&tx, "]");
  f.Tx(tx);
}

TEST_CASE("engine: planner starts from the most selective clause") {
  EngineFixture f;
  LoadMany(f);
  auto plan = Plan(f,
                   "[:find ?t :in $ ?email :where [?i :issue/title ?t] "
                   "[?i :issue/assignee ?u] [?u :user/email ?email]]");
  REQUIRE(plan->where.steps.size() >= 2);
  CHECK(plan->where.steps[0].text == "[?u :user/email ?email]");
  CHECK(plan->where.steps[0].pattern.index == storage::IndexOrder::kAvet);
  CHECK(plan->where.steps[1].text == "[?i :issue/assignee ?u]");
  // An exact value count beats a guess: 40 open issues first.
  plan = Plan(f,
              "[:find ?t :where [?i :issue/title ?t] "
              "[?i :issue/state :state/open]]");
  CHECK(plan->where.steps[0].text == "[?i :issue/state :state/open]");
  CHECK(plan->where.steps[0].est_rows == doctest::Approx(40));
}

TEST_CASE("engine: planner access paths") {
  EngineFixture f;
  LoadMany(f);
  auto plan = Plan(f, "[:find ?i :where [?i :issue/priority ?p] [(> ?p 3)]]");
  const PatternSpec& p = plan->where.steps[0].pattern;
  CHECK(p.index == storage::IndexOrder::kAvet);
  CHECK(p.prefix_len == 1);
  REQUIRE(p.lower.has_value());
  CHECK_FALSE(p.lower->inclusive);
  // The range estimate comes from the value counts: 2 of 5 priorities.
  CHECK(plan->where.steps[0].est_rows == doctest::Approx(160));
  plan = Plan(f, "[:find ?a :in $ ?e :where [?e ?a _]]");
  CHECK(plan->where.steps[0].pattern.index == storage::IndexOrder::kEavt);
  plan = Plan(f, "[:find ?e :in $ ?v :where [?e :issue/assignee ?v]]");
  CHECK(plan->where.steps[0].pattern.index == storage::IndexOrder::kAvet);
  plan = Plan(f, "[:find ?e ?a :in $ ?v :where [?e ?a ?v]]");
  CHECK(plan->where.steps[0].pattern.index == storage::IndexOrder::kVaet);
  CHECK(PlanError(f, "[:find ?e :where [?e ?a ?v]]").code() ==
        absl::StatusCode::kInvalidArgument);
  CHECK(PlanError(f, "[:find ?e :in $ ?v :where [?e ?a \"text\"]]").code() ==
        absl::StatusCode::kInvalidArgument);
}

TEST_CASE("engine: planner hash join for a large independent side") {
  EngineFixture f;
  LoadMany(f);
  // 360 closed issues joined with 80 of priority 1: scanning the
  // priorities once beats 360 seeks.
  auto plan = Plan(f,
                   "[:find ?i :where [?i :issue/state :state/closed] "
                   "[?i :issue/priority 1]]");
  REQUIRE(plan->where.steps.size() == 2);
  CHECK(plan->where.steps[0].text == "[?i :issue/priority 1]");
  CHECK(plan->where.steps[1].pattern.hash_join);
  // Each of two users has 200 issues: scanning 400 titles once beats 200
  // seeks; one issue's title is a seek.
  plan = Plan(f,
              "[:find ?t :in $ ?email :where [?u :user/email ?email] "
              "[?i :issue/assignee ?u] [?i :issue/title ?t]]");
  CHECK(plan->where.steps.back().pattern.hash_join);
  plan = Plan(f, "[:find ?t :in $ ?i :where [?i :issue/title ?t]]");
  CHECK_FALSE(plan->where.steps.back().pattern.hash_join);
}

TEST_CASE("engine: planner walks in entity order only while rows keep it") {
  EngineFixture f;
  LoadMany(f);
  auto plan_always = [&](std::string_view text) {
    absl::StatusOr<ParsedQuery> q = ParseQuery(text);
    REQUIRE(q.ok());
    storage::DbView view = f.View();
    absl::StatusOr<std::unique_ptr<QueryPlan>> plan =
        PlanQuery(*q, {}, view.db().schema_ptr(), view.db().stats(),
                  {.always_entity_order = true});
    REQUIRE_MESSAGE(plan.ok(), plan.status().ToString());
    return *std::move(plan);
  };
  auto walks = [](const QueryPlan& p, size_t i) {
    REQUIRE(i < p.where.steps.size());
    const PatternSpec& s = p.where.steps[i].pattern;
    return s.entity_order && s.index == storage::IndexOrder::kAevt &&
           s.prefix_len == 2;
  };
  // 400 issues are too few to choose it by the counts.
  const char* q =
      "[:find ?t ?p :where [?i :issue/state :state/open] "
      "[?i :issue/priority ?p] [?i :issue/title ?t]]";
  auto plan = Plan(f, q);
  for (const Step& step : plan->where.steps) {
    CHECK_FALSE(step.pattern.entity_order);
  }
  // One AVET value's entities ascend: both lookups walk.
  plan = plan_always(q);
  REQUIRE(plan->where.steps.size() == 3);
  CHECK(plan->where.steps[0].text == "[?i :issue/state :state/open]");
  CHECK(walks(*plan, 1));
  CHECK(walks(*plan, 2));
  // A scan by value range yields entities in value order: no walk.
  plan = plan_always(
      "[:find ?t :where [?i :issue/priority ?p] [(> ?p 3)] "
      "[?i :issue/title ?t]]");
  for (const Step& step : plan->where.steps) {
    CHECK_FALSE(step.pattern.entity_order);
  }
}

TEST_CASE("engine: planner knows when rows are distinct already") {
  EngineFixture f;
  LoadIssues(f);
  // Every pattern-bound variable projected.
  CHECK_FALSE(Plan(f, "[:find ?i ?t :where [?i :issue/title ?t]]")->dedupe);
  // ?t follows from ?i (cardinality one), ?i from ?e (unique).
  CHECK_FALSE(Plan(f,
                   "[:find ?i :in $ ?e :where [?u :user/email ?e] "
                   "[?i :issue/assignee ?u] [?i :issue/title ?t]]")
                  ->dedupe);
  // Dropping the entity of a non-unique value needs a set.
  CHECK(Plan(f, "[:find ?t :where [?i :issue/title ?t]]")->dedupe);
  // A blank value of a cardinality-many attribute repeats the entity.
  CHECK(Plan(f, "[:find ?i :where [?i :issue/label _]]")->dedupe);
  CHECK_FALSE(Plan(f, "[:find ?i :where [?i :issue/title _]]")->dedupe);
}

TEST_CASE("engine: planner errors name the clause") {
  EngineFixture f;
  LoadIssues(f);
  absl::Status s = PlanError(f,
                             "[:find ?x :where [?x :issue/title ?t] "
                             "[(> ?y 1)]]");
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK_MESSAGE(std::string(s.message()).find("?y") != std::string::npos,
                s.ToString());
  s = PlanError(f, "[:find ?x :in $ $h :where [$h ?x :issue/title _]]");
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace mentat::query::planner
