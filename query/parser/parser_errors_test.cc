#include <doctest/doctest.h>

#include <string>

#include "mentat/query/parser.h"
#include "parser/parser_test_support.h"

namespace mentat::query {
namespace {

using testing::CheckMessage;
using testing::CheckParseError;
using testing::CheckParseErrorAt;

TEST_CASE("parser: errors in the query's shape") {
  CheckParseError("[:find ?a :where [?a :x/y] :into $]", 1, 28,
                  "unknown query keyword :into");
  CheckParseError("[:where [?a :x/y]]", 1, 1, "query has no :find");
  CheckParseError("{:where [[?a :x/y]]}", 1, 1, "query has no :find");
  CheckParseError("[?a :find ?a]", 1, 2, "a query starts with :find");
  CheckParseError("[]", 1, 1, "missing :find");
  CheckParseError("\"text\"", 1, 1, "a query is a vector");
  CheckParseError("[:find ?a :where [?a :x/y] :where [?a :x/z]]", 1, 28,
                  "duplicate :where");
  CheckParseError("{:find [?a] \"where\" [[?a :x/y]]}", 1, 13,
                  "query map keys are keywords");
  CheckParseError("{:find [?a] :wher [[?a :x/y]]}", 1, 13,
                  "unknown query keyword :wher");
  // The EDN reader's errors come through with their positions.
  CheckParseError("[:find ?a :where [?a :x/y]", 1, 1, "unterminated vector");
}

TEST_CASE("parser: errors in :find") {
  CheckParseErrorAt("[:find :where [?a :x/y]]", ":find",
                    ":find needs at least one element");
  CheckParseErrorAt("[:find ?a _ :where [?a :x/y]]", "_",
                    "_ is not allowed in :find");
  CheckParseErrorAt("[:find ?a ?b . :where [?a :x/y ?b]]", ".", "misplaced .");
  CheckParseErrorAt("[:find ?a [?b] :where [?a :x/y ?b]]", "[?b]",
                    "a vector must be the only element");
  CheckParseErrorAt("[:find a :where [?a :x/y]]", "a :where",
                    "a :find element must be a variable");
  CheckParseErrorAt("[:find (count 3) :where [?a :x/y]]", "3",
                    "the last argument of aggregate (count 3) must be a "
                    "variable");
  CheckParseErrorAt("[:find (count) :where [?a :x/y]]", "(count)",
                    "needs a variable");
  CheckParseErrorAt("[:find (sample _ ?a) :where [?a :x/y]]", "_",
                    "must be a variable or a constant");
  CheckParseErrorAt("[:find (pull ?e) :where [?e :x/y]]", "(pull",
                    "pull takes an entity variable and a pattern");
  CheckParseErrorAt("[:find (pull :e [*]) :where [?e :x/y]]", ":e",
                    "pull needs an entity variable");
  CheckParseErrorAt("[:find (pull x ?e [*]) :where [?e :x/y]]", "x ?e",
                    "expected a source");
  CheckParseErrorAt("[:find (pull ?e ?p) :in $ ?p :where [?e :x/y]]", "?p)",
                    "not supported");
  // The pull pattern parser's own errors.
  CheckParseErrorAt("[:find (pull ?e :a) :where [?e :x/y]]", ":a)",
                    "a pull pattern must be a vector");
  CheckParseErrorAt("[:find [] :where [?e :x/y]]", "[]", "empty vector");
}

TEST_CASE("parser: errors in :keys, :with, :in") {
  CheckParseErrorAt("[:find ?a ?b :keys a :where [?a :x/y ?b]]", ":keys",
                    ":keys has 1 names but :find has 2 elements");
  CheckParseErrorAt("[:find ?a :keys 1 :where [?a :x/y]]", "1",
                    ":keys takes names");
  CheckParseErrorAt("[:find ?a :keys a :strs a :where [?a :x/y]]", ":strs",
                    "only one of :keys, :strs and :syms");
  CheckParseErrorAt("[:find ?a :with ?b ?b :where [?a :x/y ?b]]", "?b :where",
                    "duplicate variable ?b in :with");
  CheckParseErrorAt("[:find ?a :with :where [?a :x/y ?b]]", ":with",
                    ":with needs at least one variable");
  CheckParseErrorAt("[:find ?a :with b :where [?a :x/y ?b]]", "b :where",
                    ":with takes variables");
  CheckParseErrorAt("[:find ?a :in $ foo :where [?a :x/y]]", "foo",
                    "bad :in element foo");
  CheckParseErrorAt("[:find ?a :in $ _ :where [?a :x/y]]", "_",
                    "bad :in element _");
  CheckParseErrorAt("[:find ?a :in $ 12 :where [?a :x/y]]", "12",
                    "bad :in element 12");
  CheckParseErrorAt("[:find ?a :in $ ?x ?x :where [?a :x/y]]", "?x :where",
                    "duplicate variable ?x in :in");
  CheckParseErrorAt("[:find ?a :in $ ?x [?y ?x] :where [?a :x/y]]", "[?y",
                    "duplicate variable ?x in :in");
  CheckParseErrorAt("[:find ?a :in $ $ :where [?a :x/y]]", "$ :where",
                    "duplicate $ in :in");
  CheckParseErrorAt("[:find ?a :in % % :where [?a :x/y]]", "% :where",
                    "duplicate % in :in");
  CheckParseErrorAt("[:find ?a :in [?x ?x] :where [?a :x/y]]", "?x]",
                    "duplicate variable ?x in :in");
  CheckParseErrorAt("[:find ?a :in $ [] :where [?a :x/y]]", "[]",
                    "bad binding form []");
  CheckParseErrorAt("[:find ?a :in $ [?x ... ?y] :where [?a :x/y]]", "[?x",
                    "bad binding form");
  CheckParseErrorAt("[:find ?a :in $ [_ ...] :where [?a :x/y]]", "[_",
                    "bad binding form");
  CheckParseErrorAt("[:find ?a :in $ [[?x :k]] :where [?a :x/y]]", "[[?x",
                    "bad binding form");
  CheckParseErrorAt("[:find ?a :in :where [?a :x/y]]", ":in",
                    ":in needs at least one input");
}

TEST_CASE("parser: errors in an empty :where") {
  CheckParseErrorAt("[:find ?a ?b :in ?a]", "?b",
                    "no :where: ?b in :find is not bound by :in");
  CheckParseErrorAt("[:find ?a :in $ :where]", "?a",
                    "empty :where: ?a in :find is not bound by :in");
  CheckParseErrorAt("[:find (count ?b) :in ?a]", "(count",
                    "?b in :find is not bound by :in");
}

TEST_CASE("parser: errors in :order, :limit, :offset") {
  CheckParseError("[:find ?a :where [?a :x/y ?b] :order ?b]", 1, 38,
                  ":order variable ?b is not a variable of :find");
  CheckParseErrorAt("[:find ?a :where [?a :x/y ?b] :order (up ?a)]", "(up",
                    "bad :order element (up ?a)");
  CheckParseErrorAt("[:find ?a :where [?a :x/y ?b] :order]", ":order",
                    ":order needs at least one variable");
  CheckParseErrorAt("[:find ?a :where [?a :x/y] :limit -1]", "-1",
                    ":limit takes a non-negative integer, got -1");
  CheckParseErrorAt("[:find ?a :where [?a :x/y] :limit \"10\"]", "\"10\"",
                    ":limit takes a non-negative integer");
  CheckParseErrorAt("[:find ?a :where [?a :x/y] :limit 1 2]", "1 2",
                    ":limit takes a non-negative integer");
  CheckParseErrorAt("[:find ?a :where [?a :x/y] :offset]", ":offset",
                    ":offset takes a non-negative integer, got nothing");
  CheckParseErrorAt("[:find ?a :where [?a :x/y] :offset 1.5]", "1.5",
                    ":offset takes a non-negative integer");
  CheckParseErrorAt("{:find [?a] :where [[?a :x/y]] :limit [1]}", "[1]",
                    ":limit takes a non-negative integer");
}

TEST_CASE("parser: errors in data patterns") {
  CheckParseErrorAt("[:find ?a :where []]", "[]", "empty clause []");
  CheckParseErrorAt("[:find ?a :where [$]]", "[$]", "has 0 terms");
  CheckParseErrorAt("[:find ?a :where [?a :x/y ?b ?t true 1]]", "[?a :x",
                    "has 6 terms; it takes 1 to 5");
  CheckParseErrorAt("[:find ?a :where [?a :x/y $h]]", "$h",
                    "source $h must come first");
  CheckParseErrorAt("[:find ?a :where [?a :x/y foo]]", "foo",
                    "unexpected symbol foo");
  CheckParseErrorAt("[:find ?a :where [?a :x/y (inc 1)]]", "(inc",
                    "nested expression (inc 1)");
  CheckParseErrorAt("[:find ?a :where [?a :x/y nil]]", "nil",
                    "nil is not allowed");
  CheckParseErrorAt("[:find ?a :where [?a :x/y] :x]", ":x]",
                    "unknown query keyword :x");
  CheckParseErrorAt("[:find ?a :where [?a :x/y] 12]", "12",
                    "a clause must be a vector or a list, got an integer");
  CheckParseErrorAt("[:find ?a :where [?a :x/y] {:a 1}]", "{:a",
                    "a clause must be a vector or a list, got a map");
}

TEST_CASE("parser: errors in expression clauses") {
  CheckParseErrorAt("[:find ?a :where [?a :x/y ?b] [(< ?b 1) ?c ?d]]", "[(<",
                    "has 3 forms");
  CheckParseErrorAt("[:find ?a :where [?a :x/y ?b] [()]]", "()",
                    "empty call ()");
  CheckParseErrorAt("[:find ?a :where [?a :x/y ?b] [(?f ?b)]]", "?f",
                    "a function name must be a symbol");
  CheckParseErrorAt("[:find ?a :where [?a :x/y ?b] [(\"f\" ?b)]]", "\"f\"",
                    "a function name must be a symbol");
  CheckParseErrorAt("[:find ?a :where [?a :x/y ?b] [(< _ 1)]]", "_",
                    "_ cannot be an argument");
  CheckParseErrorAt("[:find ?a :where [?a :x/y ?b] [(< (inc ?b) 1)]]", "(inc",
                    "nested expression");
  CheckParseErrorAt("[:find ?a :where [?a :x/y ?b] [(inc ?b) 1]]", "1]",
                    "bad binding form 1");
  CheckParseErrorAt("[:find ?a :where [?a :x/y ?b] [(inc ?b) _]]", "_]",
                    "bad binding form _");
  CheckParseErrorAt("[:find ?a :where [?a :x/y ?b] [(inc ?b) [?c ?c]]]", "?c]",
                    "duplicate variable ?c");
  CheckParseErrorAt("[:find ?a :where [?a :x/y ?b] [(inc ?b) [[]]]]", "[[]]",
                    "bad binding form");
}

TEST_CASE("parser: errors in not, or, rule calls") {
  CheckParseErrorAt("[:find ?a :where [?a :x/y] (not)]", "(not)",
                    "(not) needs at least one clause");
  CheckParseErrorAt("[:find ?a :where [?a :x/y] (not-join ?a [?a :x/z])]",
                    "?a [", "not-join needs a non-empty vector");
  CheckParseErrorAt("[:find ?a :where [?a :x/y] (not-join [] [?a :x/z])]",
                    "[] ", "not-join needs a non-empty vector");
  CheckParseErrorAt("[:find ?a :where [?a :x/y] (not-join [?a ?a] [?a :x/z])]",
                    "?a]", "duplicate variable ?a in the join variables");
  CheckParseErrorAt("[:find ?a :where [?a :x/y] (not-join [?a 1] [?a :x/z])]",
                    "1]", "must be variables, got 1");
  CheckParseErrorAt("[:find ?a :where [?a :x/y] (not-join [?a])]", "(not-join",
                    "needs at least one clause");
  CheckParseErrorAt("[:find ?a :where [?a :x/y] (or)]", "(or)",
                    "needs at least one branch");
  CheckParseErrorAt("[:find ?a :where [?a :x/y] (or (and))]", "(and)",
                    "(and) needs at least one clause");
  CheckParseErrorAt("[:find ?a :where [?a :x/y] (or-join [?a [?a]] [?a :x/z])]",
                    "?a]]", "duplicate variable ?a");
  CheckParseErrorAt("[:find ?a :where [?a :x/y] (or-join [?a []] [?a :x/z])]",
                    "[]]", "empty required-variable vector");
  CheckParseErrorAt("[:find ?a :where [?a :x/y] (and [?a :x/z])]", "(and",
                    "(and ...) is only allowed as a branch of or");
  CheckParseErrorAt("[:find ?a :where [?a :x/y] (or [?a :x/z] 3)]", "3)",
                    "a clause must be a vector or a list");
  CheckParseErrorAt(
      "[:find ?a :where [?a :x/y] (not [?a :x/z] [?a 1 2 3 4 5])]", "[?a 1",
      "has 6 terms");
  CheckParseErrorAt("[:find ?a :where [?a :x/y] ()]", "()", "empty clause ()");
  CheckParseErrorAt("[:find ?a :where [?a :x/y] (?r ?a)]", "?r",
                    "a list clause starts with not, not-join, or, or-join or "
                    "a rule name");
  CheckParseErrorAt("[:find ?a :where [?a :x/y] ($h)]", "($h)", "got nothing");
  CheckParseErrorAt("[:find ?a :where [?a :x/y] (r ?a $h)]", "$h",
                    "cannot be a rule argument");
  CheckParseErrorAt("[:find ?a :where [?a :x/y] (r ?a (f))]", "(f)",
                    "nested expression");
}

TEST_CASE("parser: errors in rule sets") {
  auto rule_error = [](std::string_view text, int line, int column,
                       std::string_view part) {
    absl::StatusOr<std::vector<Rule>> rules = ParseRules(text);
    INFO(text);
    REQUIRE(!rules.ok());
    CHECK(rules.status().code() == absl::StatusCode::kInvalidArgument);
    CheckMessage(std::string(rules.status().message()), line, column, part);
  };
  rule_error("{:a 1}", 1, 1, "rules are a vector");
  rule_error("[[(r ?a)]]", 1, 2, "a rule is [(name ?var ...) clause ...]");
  rule_error("[[r ?a [?a :x/y]]]", 1, 2, "a rule is [(name");
  rule_error("[[(?r ?a) [?a :x/y]]]", 1, 3, "a rule head starts with");
  rule_error("[[(not ?a) [?a :x/y]]]", 1, 3, "a rule head starts with");
  rule_error("[[(r ?a 1) [?a :x/y]]]", 1, 9, "takes variables, got 1");
  rule_error("[[(r ?a ?a) [?a :x/y]]]", 1, 9, "duplicate variable ?a");
  rule_error("[[(r [?a] ?a) [?a :x/y]]]", 1, 11, "duplicate variable ?a");
  rule_error("[[(r []) [?a :x/y]]]", 1, 6, "empty required-variable vector");
  rule_error("[[(r ?a) [?a :x/y]]\n [(r ?a ?b) [?a :x/y ?b]]]", 2, 2,
             "rule r is defined with 1 and with 2 variables");
  rule_error("[[(r ?a) [?a :x/y 1 2 3 4]]]", 1, 10, "has 6 terms");
}

TEST_CASE("parser: errors on later lines carry their line") {
  CheckParseError(
      "[:find ?a\n"
      " :where [?a :x/y ?b]\n"
      "        [?a :x/z foo]]",
      3, 18, "unexpected symbol foo");
}

}  // namespace
}  // namespace mentat::query
