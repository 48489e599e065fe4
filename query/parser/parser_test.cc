#include "mentat/query/parser.h"

#include <doctest/doctest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "mentat/query/edn/edn_reader.h"
#include "parser/parser_test_support.h"

namespace mentat::query {
namespace {

using edn::EdnValue;
using testing::MustParse;

// The seven queries of the benchmark workload (shared/workload/queries/).
constexpr const char* kWorkloadQueries[] = {
    "[:find ?e ?name :in $ ?email :where [?e :user/email ?email] "
    "[?e :user/name ?name]]",
    "[:find ?i ?title ?state :in $ ?email :where [?u :user/email ?email] "
    "[?i :issue/assignee ?u] [?i :issue/title ?title] "
    "[?i :issue/state ?state]]",
    "[:find ?state (count ?i) :where [?i :issue/state ?state]]",
    "[:find ?i ?title ?priority :in $ ?min :where "
    "[?i :issue/state :state/open] [?i :issue/priority ?priority] "
    "[?i :issue/title ?title] [(>= ?priority ?min)]]",
    "[:find ?i :where [?i :issue/state _]]",
    "[:find (pull ?e [*]) . :in $ ?e :where [?e :issue/title _]]",
    "[:find ?e ?name :in $ [?email ...] :where [?e :user/email ?email] "
    "[?e :user/name ?name]]",
};

TEST_CASE("parser: the workload queries") {
  for (const char* text : kWorkloadQueries) MustParse(text);

  ParsedQuery q1 = MustParse(kWorkloadQueries[0]);
  CHECK(q1.find.kind == FindSpec::Kind::kRelation);
  REQUIRE(q1.find.elements.size() == 2);
  CHECK(q1.find.elements[0].kind == FindElement::Kind::kVariable);
  CHECK(q1.find.elements[0].var == "?e");
  CHECK(q1.find.elements[1].text == "?name");
  REQUIRE(q1.inputs.size() == 2);
  CHECK(q1.inputs[0].kind == InputSpec::Kind::kSource);
  CHECK(q1.inputs[0].name == "$");
  CHECK(q1.inputs[1].kind == InputSpec::Kind::kScalar);
  CHECK(q1.inputs[1].vars == std::vector<std::string>{"?email"});
  REQUIRE(q1.where.size() == 2);
  const Clause& c = q1.where[0];
  CHECK(c.kind == Clause::Kind::kPattern);
  CHECK(c.pattern.source == "$");
  REQUIRE(c.pattern.terms.size() == 3);
  CHECK(c.pattern.terms[0].kind == Term::Kind::kVariable);
  CHECK(c.pattern.terms[0].name == "?e");
  CHECK(c.pattern.terms[1].kind == Term::Kind::kConstant);
  CHECK(c.pattern.terms[1].constant == EdnValue::Keyword("user/email"));
  CHECK(c.text == "[?e :user/email ?email]");
  CHECK(c.pos.line == 1);
  CHECK(c.pos.column == 37);
  CHECK(c.pattern.terms[1].pos.column == 41);
  CHECK(!q1.limit.has_value());
  CHECK(q1.order.empty());

  ParsedQuery q3 = MustParse(kWorkloadQueries[2]);
  REQUIRE(q3.find.elements.size() == 2);
  const FindElement& count = q3.find.elements[1];
  CHECK(count.kind == FindElement::Kind::kAggregate);
  CHECK(count.aggregate == "count");
  CHECK(count.var == "?i");
  CHECK(count.text == "(count ?i)");
  REQUIRE(q3.inputs.size() == 1);  // the default [$]
  CHECK(q3.inputs[0].kind == InputSpec::Kind::kSource);

  ParsedQuery q4 = MustParse(kWorkloadQueries[3]);
  REQUIRE(q4.where.size() == 4);
  CHECK(q4.where[0].pattern.terms[2].constant ==
        EdnValue::Keyword("state/open"));
  CHECK(q4.where[3].kind == Clause::Kind::kPredicate);
  CHECK(q4.where[3].predicate.fn == ">=");
  CHECK(q4.where[3].predicate.args.size() == 2);

  ParsedQuery since = MustParse(kWorkloadQueries[4]);
  CHECK(since.where[0].pattern.terms[2].kind == Term::Kind::kBlank);

  ParsedQuery pull = MustParse(kWorkloadQueries[5]);
  CHECK(pull.find.kind == FindSpec::Kind::kScalar);
  REQUIRE(pull.find.elements.size() == 1);
  CHECK(pull.find.elements[0].kind == FindElement::Kind::kPull);
  CHECK(pull.find.elements[0].var == "?e");
  CHECK(pull.find.elements[0].text == "(pull ?e [*])");
  REQUIRE(pull.find.elements[0].pull != nullptr);
  CHECK(pull.find.elements[0].pull->wildcard);

  ParsedQuery inputs = MustParse(kWorkloadQueries[6]);
  CHECK(inputs.inputs[1].kind == InputSpec::Kind::kCollection);
  CHECK(inputs.inputs[1].vars == std::vector<std::string>{"?email"});
}

TEST_CASE("parser: the workload query files, with their comments") {
  for (const char* name :
       {"q1-point-lookup", "q2-ref-traversal", "q3-aggregate",
        "q4-predicate-scan", "since", "pull", "input-bindings"}) {
    const std::string path =
        std::string(MENTAT_WORKLOAD_DIR "/queries/") + name + ".edn";
    FILE* f = std::fopen(path.c_str(), "rb");
    // The workload sits outside the repository; CMake finds it (the
    // top-level CMakeLists.txt). A missing file is a failure, not a pass.
    REQUIRE_MESSAGE(f != nullptr,
                    "cannot read the workload query "
                        << path
                        << ": configure with -DMENTAT_WORKLOAD_DIR=<the "
                           "shared/workload directory>");
    std::string text;
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
    std::fclose(f);
    MustParse(text);
  }
}

TEST_CASE("parser: find specs") {
  ParsedQuery q = MustParse("[:find [?a ...] :where [?a :x/y]]");
  CHECK(q.find.kind == FindSpec::Kind::kCollection);
  REQUIRE(q.find.elements.size() == 1);
  CHECK(q.find.elements[0].var == "?a");

  q = MustParse("[:find [?a ?b] :where [?a :x/y ?b]]");
  CHECK(q.find.kind == FindSpec::Kind::kTuple);
  CHECK(q.find.elements.size() == 2);

  q = MustParse("[:find ?a . :where [?a :x/y]]");
  CHECK(q.find.kind == FindSpec::Kind::kScalar);
  CHECK(q.find.elements.size() == 1);

  q = MustParse("[:find ?a ?b (max ?b) :where [?a :x/y ?b]]");
  CHECK(q.find.kind == FindSpec::Kind::kRelation);
  CHECK(q.find.elements.size() == 3);

  q = MustParse("[:find [(count ?a) ...] :where [?a :x/y]]");
  CHECK(q.find.kind == FindSpec::Kind::kCollection);
  CHECK(q.find.elements[0].kind == FindElement::Kind::kAggregate);
}

TEST_CASE("parser: aggregates") {
  ParsedQuery q = MustParse(
      "[:find (sum ?x) (sample 5 ?x) (min 3 ?x) (count-distinct ?x) "
      "(my-agg ?n ?x) :in $ ?n :where [?e :a/b ?x]]");
  const auto& el = q.find.elements;
  REQUIRE(el.size() == 5);
  CHECK(el[0].aggregate == "sum");
  CHECK(el[0].text == "(sum ?x)");
  CHECK(el[1].aggregate == "sample");
  REQUIRE(el[1].aggregate_args.size() == 2);
  CHECK(el[1].aggregate_args[0].kind == Term::Kind::kConstant);
  CHECK(el[1].aggregate_args[0].constant == EdnValue::Int(5));
  CHECK(el[1].aggregate_args[1].name == "?x");
  CHECK(el[1].var == "?x");
  CHECK(el[1].text == "(sample 5 ?x)");
  CHECK(el[2].text == "(min 3 ?x)");
  CHECK(el[3].aggregate == "count-distinct");
  CHECK(el[4].aggregate == "my-agg");
  CHECK(el[4].aggregate_args[0].kind == Term::Kind::kVariable);
  CHECK(el[0].pos.column == 8);
}

TEST_CASE("parser: pull expressions in :find") {
  ParsedQuery q = MustParse(
      "[:find (pull ?e [:a/b {:a/c [:c/d]}]) (pull $h ?f [*]) :in $ $h "
      ":where [?e :a/c ?f]]");
  const auto& el = q.find.elements;
  REQUIRE(el.size() == 2);
  CHECK(el[0].kind == FindElement::Kind::kPull);
  CHECK(el[0].pull_source == "$");
  CHECK(el[0].text == "(pull ?e [:a/b {:a/c [:c/d]}])");
  REQUIRE(el[0].pull != nullptr);
  REQUIRE(el[0].pull->attrs.size() == 2);
  CHECK(el[0].pull->attrs[0].attr == "a/b");
  CHECK(el[1].pull_source == "$h");
  CHECK(el[1].var == "?f");
  CHECK(el[1].pull->wildcard);
}

TEST_CASE("parser: :in bindings") {
  ParsedQuery q = MustParse(
      "[:find ?a :in $ $hist % ?x [?c ...] [?d _ ?e] [[?f _ ?g]] "
      ":where [?a :x/y ?x]]");
  REQUIRE(q.inputs.size() == 7);
  CHECK(q.inputs[0].kind == InputSpec::Kind::kSource);
  CHECK(q.inputs[1].kind == InputSpec::Kind::kSource);
  CHECK(q.inputs[1].name == "$hist");
  CHECK(q.inputs[2].kind == InputSpec::Kind::kRules);
  CHECK(q.inputs[3].kind == InputSpec::Kind::kScalar);
  CHECK(q.inputs[4].kind == InputSpec::Kind::kCollection);
  CHECK(q.inputs[4].vars == std::vector<std::string>{"?c"});
  CHECK(q.inputs[5].kind == InputSpec::Kind::kTuple);
  CHECK(q.inputs[5].vars == std::vector<std::string>{"?d", "_", "?e"});
  CHECK(q.inputs[6].kind == InputSpec::Kind::kRelation);
  CHECK(q.inputs[6].vars == std::vector<std::string>{"?f", "_", "?g"});
  CHECK(q.inputs[6].pos.column == 47);

  // Without :where, every :find variable must come from :in.
  q = MustParse("[:find ?x ?y :in ?x ?y]");
  CHECK(q.where.empty());
  CHECK(q.inputs.size() == 2);
}

TEST_CASE("parser: :with, :keys, :strs, :syms") {
  ParsedQuery q = MustParse(
      "[:find ?a ?b :keys a b :with ?c ?d :where [?a :x/y ?b] "
      "[?a :x/z ?c] [?a :x/w ?d]]");
  CHECK(q.keys_kind == ParsedQuery::KeysKind::kKeys);
  CHECK(q.keys == std::vector<std::string>{"a", "b"});
  CHECK(q.with == std::vector<std::string>{"?c", "?d"});

  q = MustParse("[:find ?a :strs name :where [?a :x/y]]");
  CHECK(q.keys_kind == ParsedQuery::KeysKind::kStrs);
  q = MustParse("[:find ?a :syms name :where [?a :x/y]]");
  CHECK(q.keys_kind == ParsedQuery::KeysKind::kSyms);
  CHECK(q.keys == std::vector<std::string>{"name"});
}

TEST_CASE("parser: :order, :limit, :offset") {
  ParsedQuery q = MustParse(
      "[:find ?a ?b :where [?a :x/y ?b] :order (asc ?a) (desc ?b) :limit 10 "
      ":offset 5]");
  REQUIRE(q.order.size() == 2);
  CHECK(q.order[0].var == "?a");
  CHECK(!q.order[0].descending);
  CHECK(q.order[1].var == "?b");
  CHECK(q.order[1].descending);
  CHECK(q.limit == 10);
  CHECK(q.offset == 5);

  q = MustParse("[:find ?a :where [?a :x/y] :order ?a]");
  REQUIRE(q.order.size() == 1);
  CHECK(!q.order[0].descending);

  q = MustParse("[:find ?a ?b :where [?a :x/y ?b] :order [(desc ?a) ?b]]");
  REQUIRE(q.order.size() == 2);
  CHECK(q.order[0].descending);
  CHECK(!q.order[1].descending);

  q = MustParse("[:find ?a :where [?a :x/y] :limit 0 :offset 0]");
  CHECK(q.limit == 0);
  CHECK(q.offset == 0);
}

TEST_CASE("parser: the map form") {
  ParsedQuery q = MustParse(
      "{:find [?a (count ?b)] :in [$ ?x] :with [?c] :where [[?a :x/y ?x] "
      "[?a :x/z ?b] [?a :x/w ?c]] :order [(desc ?a)] :limit 3 :offset 1 "
      ":keys [a n]}");
  CHECK(q.find.kind == FindSpec::Kind::kRelation);
  CHECK(q.find.elements.size() == 2);
  CHECK(q.inputs.size() == 2);
  CHECK(q.with == std::vector<std::string>{"?c"});
  CHECK(q.where.size() == 3);
  REQUIRE(q.order.size() == 1);
  CHECK(q.order[0].descending);
  CHECK(q.limit == 3);
  CHECK(q.offset == 1);
  CHECK(q.keys == std::vector<std::string>{"a", "n"});

  q = MustParse("{:find [[?a ...]] :where [[?a :x/y]]}");
  CHECK(q.find.kind == FindSpec::Kind::kCollection);
  q = MustParse("{:find [?a .] :where [[?a :x/y]]}");
  CHECK(q.find.kind == FindSpec::Kind::kScalar);
  q = MustParse("{:find [[?a ?b]] :where [[?a :x/y ?b]]}");
  CHECK(q.find.kind == FindSpec::Kind::kTuple);
  q = MustParse("{:find [?a] :where [[?a :x/y]] :order (desc ?a)}");
  REQUIRE(q.order.size() == 1);
  CHECK(q.order[0].descending);
  q = MustParse("{:find [?a] :where [[?a :x/y]] :order ?a}");
  CHECK(q.order.size() == 1);
  q = MustParse("{:find [?a] :where [[?a :x/y]]}");
  CHECK(q.inputs.size() == 1);

  // From an EDN value, as the server passes it.
  absl::StatusOr<EdnValue> form = edn::ParseEdn("[:find ?a :where [?a :x/y]]");
  REQUIRE(form.ok());
  absl::StatusOr<ParsedQuery> parsed = ParseQuery(*form);
  REQUIRE(parsed.ok());
  CHECK(parsed->where.size() == 1);
}

TEST_CASE("parser: data patterns") {
  ParsedQuery q = MustParse(
      "[:find ?e :in $ $h :where [?e] [?e :a/b] [$h ?e :a/b 1 ?tx true] "
      "[?e :a/s \"str\" _ false] [[:user/email \"x\"] :a/b ?e] "
      "[:db.part/db :a/c ?e] [17 :a/d 2.5] [?e :a/f #inst \"2024-01-01\"] "
      "[?e :a/g #uuid \"f81d4fae-7dec-11d0-a765-00a0c91e6bf6\"] "
      "[?e :a/h 12N] [?e :a/i 1.5M] [?e :a/j \\c] [?e :a/k [1 2]]]");
  REQUIRE(q.where.size() == 13);
  CHECK(q.where[0].pattern.terms.size() == 1);
  CHECK(q.where[1].pattern.terms.size() == 2);
  const PatternClause& five = q.where[2].pattern;
  CHECK(five.source == "$h");
  REQUIRE(five.terms.size() == 5);
  CHECK(five.terms[3].kind == Term::Kind::kVariable);
  CHECK(five.terms[4].constant == EdnValue::Bool(true));
  CHECK(q.where[3].pattern.terms[2].constant == EdnValue::String("str"));
  CHECK(q.where[3].pattern.terms[3].kind == Term::Kind::kBlank);
  const Term& lookup = q.where[4].pattern.terms[0];
  CHECK(lookup.kind == Term::Kind::kConstant);
  CHECK(lookup.constant.is_vector());
  CHECK(q.where[4].text == "[[:user/email \"x\"] :a/b ?e]");
  CHECK(q.where[5].pattern.terms[0].constant.is_keyword("db.part/db"));
  CHECK(q.where[6].pattern.terms[0].constant == EdnValue::Int(17));
  CHECK(q.where[6].pattern.terms[2].constant == EdnValue::Float(2.5));
  CHECK(q.where[7].pattern.terms[2].constant.is_inst());
  CHECK(q.where[8].pattern.terms[2].constant.is_uuid());
  CHECK(q.where[9].pattern.terms[2].constant.is_bigint());
  CHECK(q.where[10].pattern.terms[2].constant.is_bigdec());
  CHECK(q.where[11].pattern.terms[2].constant.is_char());
  CHECK(q.where[12].pattern.terms[2].constant.is_vector());
}

TEST_CASE("parser: predicates and functions") {
  ParsedQuery q = MustParse(
      "[:find ?e ?b ?s :where [?e :a/n ?a] [(< ?a 10)] "
      "[(starts-with? ?s \"x\")] [(+ ?a 1) ?b] [(str ?a \"x\") ?s] "
      "[(tuple ?a ?b) [?t1 ?t2]] [(ground [1 2]) [?g ...]] "
      "[(tx-data $ ?tx) [[?x _ ?v]]] [(get-else $ ?e :a/m 0) ?m] "
      "[(get-else ?e :a/m 0) ?m2] [(missing? ?e :a/z)] "
      "[(get-some ?e :a/x :a/y) [?at ?av]]]");
  const auto& w = q.where;
  REQUIRE(w.size() == 12);
  CHECK(w[1].kind == Clause::Kind::kPredicate);
  CHECK(w[1].predicate.fn == "<");
  CHECK(w[1].predicate.args[1].constant == EdnValue::Int(10));
  CHECK(w[2].predicate.fn == "starts-with?");
  CHECK(w[3].kind == Clause::Kind::kFunction);
  CHECK(w[3].function.fn == "+");
  CHECK(w[3].function.binding.kind == Binding::Kind::kScalar);
  CHECK(w[3].function.binding.vars == std::vector<std::string>{"?b"});
  CHECK(w[5].function.binding.kind == Binding::Kind::kTuple);
  CHECK(w[5].function.binding.vars.size() == 2);
  CHECK(w[6].function.binding.kind == Binding::Kind::kCollection);
  CHECK(w[6].function.args[0].constant.is_vector());
  CHECK(w[7].function.binding.kind == Binding::Kind::kRelation);
  CHECK(w[7].function.binding.vars ==
        std::vector<std::string>{"?x", "_", "?v"});
  CHECK(w[7].function.args[0].kind == Term::Kind::kSource);
  // get-else, get-some and missing? get an implicit $.
  for (int i : {8, 9}) {
    REQUIRE(w[i].function.args.size() == 4);
    CHECK(w[i].function.args[0].kind == Term::Kind::kSource);
    CHECK(w[i].function.args[0].name == "$");
    CHECK(w[i].function.args[1].name == "?e");
  }
  REQUIRE(w[10].predicate.args.size() == 3);
  CHECK(w[10].predicate.args[0].kind == Term::Kind::kSource);
  REQUIRE(w[11].function.args.size() == 4);
  CHECK(w[11].function.args[0].name == "$");
}

TEST_CASE("parser: not, not-join, or, or-join") {
  ParsedQuery q = MustParse(
      "[:find ?e :in $ $h :where [?e :a/b ?x]\n"
      " (not [?e :a/c 1] [?e :a/d ?x])\n"
      " (not-join [?e] [?e :a/c ?y] [?y :a/d 2])\n"
      " (or [?e :a/c 1] (and [?e :a/d 2] [?e :a/f 3]))\n"
      " (or-join [?e [?x]] [?e :a/c ?x] (and [?e :a/d ?z] [?z :a/f ?x]))\n"
      " ($h not [?e :a/g 1])\n"
      " ($h or [?e :a/g 1] [?e :a/g 2])]");
  REQUIRE(q.where.size() == 7);
  const Clause& n = q.where[1];
  CHECK(n.kind == Clause::Kind::kNot);
  CHECK(!n.not_clause->is_join);
  CHECK(n.not_clause->source == "$");
  CHECK(n.not_clause->clauses.size() == 2);
  CHECK(n.pos.line == 2);
  CHECK(n.pos.column == 2);
  CHECK(n.text == "(not [?e :a/c 1] [?e :a/d ?x])");
  const NotClause& nj = *q.where[2].not_clause;
  CHECK(nj.is_join);
  CHECK(nj.join_vars == std::vector<std::string>{"?e"});
  CHECK(nj.clauses.size() == 2);
  const OrClause& o = *q.where[3].or_clause;
  CHECK(!o.is_join);
  REQUIRE(o.branches.size() == 2);
  CHECK(o.branches[0].size() == 1);
  CHECK(o.branches[1].size() == 2);
  CHECK(o.branches[1][1].pos.line == 4);
  const OrClause& oj = *q.where[4].or_clause;
  CHECK(oj.is_join);
  CHECK(oj.join_vars == std::vector<std::string>{"?e", "?x"});
  CHECK(oj.required_vars == std::vector<std::string>{"?x"});
  CHECK(oj.branches.size() == 2);
  CHECK(q.where[5].not_clause->source == "$h");
  CHECK(q.where[6].or_clause->source == "$h");
  CHECK(q.where[6].or_clause->branches.size() == 2);
}

TEST_CASE("parser: rule calls and rule sets") {
  ParsedQuery q = MustParse(
      "[:find ?a :in $ $h % :where (follows ?a ?b) ($h follows ?b \"x\") "
      "(follows ?a _)]");
  REQUIRE(q.where.size() == 3);
  CHECK(q.where[0].kind == Clause::Kind::kRuleCall);
  CHECK(q.where[0].rule_call.name == "follows");
  CHECK(q.where[0].rule_call.source == "$");
  CHECK(q.where[0].rule_call.args.size() == 2);
  CHECK(q.where[1].rule_call.source == "$h");
  CHECK(q.where[1].rule_call.args[1].constant == EdnValue::String("x"));
  CHECK(q.where[2].rule_call.args[1].kind == Term::Kind::kBlank);

  absl::StatusOr<std::vector<Rule>> rules = ParseRules(
      "[[(follows ?a ?b) [?a :p/follows ?b]]\n"
      " [(follows ?a ?b) [?a :p/follows ?c] (follows ?c ?b)]\n"
      " [(named [?e] ?n) [?e :p/name ?n]]\n"
      " [(between ?a [?lo ?hi]) [(<= ?lo ?a)] [(< ?a ?hi)]]]");
  REQUIRE_MESSAGE(rules.ok(), rules.status().ToString());
  REQUIRE(rules->size() == 4);
  CHECK((*rules)[0].name == "follows");
  CHECK((*rules)[0].vars == std::vector<std::string>{"?a", "?b"});
  CHECK((*rules)[0].required_vars.empty());
  CHECK((*rules)[1].body.size() == 2);
  CHECK((*rules)[1].body[1].kind == Clause::Kind::kRuleCall);
  CHECK((*rules)[1].pos.line == 2);
  CHECK((*rules)[2].vars == std::vector<std::string>{"?e", "?n"});
  CHECK((*rules)[2].required_vars == std::vector<std::string>{"?e"});
  CHECK((*rules)[3].vars == std::vector<std::string>{"?a", "?lo", "?hi"});
  CHECK((*rules)[3].required_vars == std::vector<std::string>{"?lo", "?hi"});

  absl::StatusOr<std::vector<Rule>> empty = ParseRules("[]");
  REQUIRE(empty.ok());
  CHECK(empty->empty());
}

TEST_CASE("parser: long clause texts are abbreviated") {
  std::string text = "[:find ?e :where [?e :a/b \"";
  text.append(1000, 'x');
  text += "\"]]";
  ParsedQuery q = MustParse(text);
  CHECK(q.where[0].text.size() < 300);
  CHECK(q.where[0].text.find("\u2026(1000 bytes)") != std::string::npos);
}

}  // namespace
}  // namespace mentat::query
