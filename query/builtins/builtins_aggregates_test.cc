// Tests of the built-in aggregates (functions.h).

#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "builtins/builtins_test_support.h"
#include "mentat/edn/edn_printer.h"

namespace mentat::query::builtins::testing {
namespace {

// Runs an aggregate over `values` and prints its result as EDN.
std::string Agg(std::string_view name, std::vector<Value> values,
                std::optional<int64_t> n = std::nullopt) {
  absl::StatusOr<std::unique_ptr<Aggregate>> agg = MakeAggregate(name, n);
  if (!agg.ok()) return "error: " + std::string(agg.status().message());
  for (const Value& v : values) (*agg)->Add(v);
  return edn::PrintEdn((*agg)->Result());
}

// The result's elements, printed, for the random aggregates.
std::vector<std::string> AggItems(std::string_view name,
                                  std::vector<Value> values, int64_t n) {
  absl::StatusOr<std::unique_ptr<Aggregate>> agg = MakeAggregate(name, n);
  REQUIRE(agg.ok());
  for (const Value& v : values) (*agg)->Add(v);
  edn::EdnValue result = (*agg)->Result();
  REQUIRE(result.is_vector());
  std::vector<std::string> out;
  for (const edn::EdnValue& item : result.items()) {
    out.push_back(edn::PrintEdn(item));
  }
  return out;
}

TEST_CASE("builtins: count and count-distinct") {
  CHECK(Agg("count", {L(1), L(2), L(2), L(3)}) == "4");
  CHECK(Agg("count", {}) == "0");
  CHECK(Agg("count", {S("a"), K("a"), S("a")}) == "3");
  CHECK(Agg("count-distinct", {L(1), L(2), L(2), L(3)}) == "3");
  CHECK(Agg("count-distinct", {S("a"), K("a"), S("a")}) == "2");
  CHECK(Agg("count-distinct", {D(0.0), D(-0.0)}) == "1");
  CHECK(Agg("count-distinct", {}) == "0");
}

TEST_CASE("builtins: sum") {
  CHECK(Agg("sum", {L(1), L(2), L(3)}) == "6");
  CHECK(Agg("sum", {L(1), L(2), L(3), D(1.5)}) == "7.5");
  CHECK(Agg("sum", {D(0.5), D(0.25)}) == "0.75");
  CHECK(Agg("sum", {}) == "0");
  CHECK(Agg("sum", {R(2), L(3)}) == "5");
  // Long overflow switches to a bigint instead of failing.
  CHECK(Agg("sum", {L(kMaxLong), L(kMaxLong)}) == "18446744073709551614N");
  CHECK(Agg("sum", {L(kMinLong), L(-1)}) == "-9223372036854775809N");
  CHECK(Agg("sum", {L(kMaxLong), L(kMaxLong), L(-kMaxLong), L(-kMaxLong)}) ==
        "0");
  CHECK(Agg("sum", {L(1), N("2")}) == "3N");
  CHECK(Agg("sum", {L(1), M("0.5")}) == "1.5M");
  CHECK(Agg("sum", {M("0.1"), M("0.2")}) == "0.3M");
  CHECK(Agg("sum", {N("1"), M("0.5"), D(1.0)}) == "2.5");
  // Non-numbers are skipped.
  CHECK(Agg("sum", {L(1), S("a"), L(2)}) == "3");
}

TEST_CASE("builtins: avg") {
  CHECK(Agg("avg", {L(1), L(2), L(3), L(4)}) == "2.5");
  CHECK(Agg("avg", {L(1), L(2)}) == "1.5");
  CHECK(Agg("avg", {L(2), L(4)}) == "3.0");
  CHECK(Agg("avg", {D(1.0), M("2"), N("3")}) == "2.0");
  CHECK(Agg("avg", {L(kMaxLong), L(kMaxLong)}) == "9223372036854775808.0");
  CHECK(Agg("avg", {}) == "nil");
  CHECK(Agg("avg", {S("a")}) == "nil");
}

TEST_CASE("builtins: median") {
  CHECK(Agg("median", {L(3), L(1), L(2)}) == "2");
  CHECK(Agg("median", {L(4), L(1), L(3), L(2)}) == "2.5");
  CHECK(Agg("median", {L(1), L(3)}) == "2");
  CHECK(Agg("median", {L(1), L(2), L(2), L(100)}) == "2");
  CHECK(Agg("median", {D(4.0), D(1.0), D(3.0), D(2.0)}) == "2.5");
  CHECK(Agg("median", {L(5)}) == "5");
  CHECK(Agg("median", {L(1), D(2.5), L(10)}) == "2.5");
  CHECK(Agg("median", {L(kMaxLong), L(kMaxLong - 2)}) == "9223372036854775806");
  CHECK(Agg("median", {M("1.5"), L(7), N("3")}) == "3N");
  CHECK(Agg("median", {}) == "nil");
}

TEST_CASE("builtins: variance and stddev are population statistics") {
  std::vector<Value> xs = {L(2), L(4), L(4), L(4), L(5), L(5), L(7), L(9)};
  CHECK(Agg("variance", xs) == "4.0");
  CHECK(Agg("stddev", xs) == "2.0");
  CHECK(Agg("variance", {L(1), L(2)}) == "0.25");
  CHECK(Agg("stddev", {L(1), L(2)}) == "0.5");
  CHECK(Agg("variance", {D(1.5)}) == "0.0");
  // A large mean does not destroy the small spread.
  CHECK(Agg("variance", {L(1000000001), L(1000000003)}) == "1.0");
  CHECK(Agg("variance", {}) == "nil");
  CHECK(Agg("stddev", {S("a")}) == "nil");
}

TEST_CASE("builtins: min and max") {
  CHECK(Agg("min", {L(3), D(1.5), L(2)}) == "1.5");
  CHECK(Agg("max", {L(3), D(1.5), L(2)}) == "3");
  CHECK(Agg("max", {L(3), N("4"), M("3.5")}) == "4N");
  CHECK(Agg("min", {S("b"), S("a"), S("c")}) == "\"a\"");
  CHECK(Agg("max", {S("b"), S("a"), S("c")}) == "\"c\"");
  CHECK(Agg("min", {K("b/a"), K("a/z")}) == ":a/z");
  CHECK(Agg("max", {I(5), I(1000), I(7)}) ==
        "#inst \"1970-01-01T00:00:00.001Z\"");
  CHECK(Agg("min", {B(true), B(false)}) == "false");
  CHECK(Agg("max", {R(10), R(20)}) == "20");
  CHECK(Agg("min", {}) == "nil");
  CHECK(Agg("max", {}) == "nil");
}

TEST_CASE("builtins: distinct") {
  CHECK(Agg("distinct", {L(3), L(1), L(2), L(2)}) == "#{1 2 3}");
  CHECK(Agg("distinct", {}) == "#{}");
  // A ref and a long with the same id are one EDN value.
  CHECK(Agg("distinct", {R(1), L(1)}) == "#{1}");
  CHECK(Agg("distinct", {S("a"), K("a"), L(1), D(1.0)}) == "#{1 1.0 :a \"a\"}");
}

TEST_CASE("builtins: (min n) and (max n)") {
  std::vector<Value> xs = {L(5), L(1), L(4), L(1), L(3), L(2)};
  CHECK(Agg("min", xs, 3) == "[1 2 3]");
  CHECK(Agg("max", xs, 3) == "[5 4 3]");
  CHECK(Agg("max", xs, 10) == "[5 4 3 2 1]");
  CHECK(Agg("min", xs, 0) == "[]");
  CHECK(Agg("min", {}, 2) == "[]");
  CHECK(Agg("max", {S("b"), S("a"), S("c"), S("b")}, 2) == "[\"c\" \"b\"]");
  CHECK(Agg("min", {D(2.5), L(1), N("3")}, 2) == "[1 2.5]");
}

TEST_CASE("builtins: sample and rand") {
  std::vector<Value> xs = {L(1), L(2), L(3), L(4), L(5)};
  for (int round = 0; round < 20; ++round) {
    std::vector<std::string> s = AggItems("sample", xs, 3);
    CHECK(s.size() == 3);
    CHECK(std::set<std::string>(s.begin(), s.end()).size() == 3);
    for (const std::string& item : s) {
      CHECK(item.size() == 1);
      CHECK(item[0] >= '1');
      CHECK(item[0] <= '5');
    }
  }
  std::vector<std::string> all = AggItems("sample", {L(1), L(1), L(2)}, 10);
  std::sort(all.begin(), all.end());
  CHECK(all == std::vector<std::string>{"1", "2"});
  CHECK(AggItems("sample", xs, 0).empty());

  CHECK(Agg("rand", {L(7)}) == "7");
  CHECK(Agg("rand", {}) == "nil");
  std::set<std::string> seen;
  for (int round = 0; round < 200; ++round) seen.insert(Agg("rand", xs));
  CHECK(seen.size() == 5);  // each has probability 1/5 per round

  std::vector<std::string> r = AggItems("rand", xs, 3);
  CHECK(r.size() == 3);
  for (const std::string& item : r) CHECK((item >= "1" && item <= "5"));
  CHECK(AggItems("rand", {L(1), L(2)}, 5).size() == 2);
  CHECK(AggItems("rand", {}, 5).empty());
}

TEST_CASE("builtins: aggregate names, arity and bad counts") {
  CHECK(IsAggregate("count", 1));
  CHECK_FALSE(IsAggregate("count", 2));
  CHECK(IsAggregate("count-distinct", 1));
  CHECK(IsAggregate("median", 1));
  CHECK(IsAggregate("min", 1));
  CHECK(IsAggregate("min", 2));
  CHECK(IsAggregate("max", 2));
  CHECK(IsAggregate("rand", 1));
  CHECK(IsAggregate("rand", 2));
  CHECK(IsAggregate("sample", 2));
  CHECK_FALSE(IsAggregate("sample", 1));
  CHECK_FALSE(IsAggregate("distinct", 2));
  CHECK_FALSE(IsAggregate("frob", 1));
  CHECK_FALSE(IsAggregate("count", 0));

  CHECK(Agg("sample", {}) ==
        "error: aggregate sample needs a count: (sample n ?x)");
  CHECK(Agg("count", {}, 3) ==
        "error: aggregate count takes no count: (count ?x)");
  CHECK(Agg("min", {}, -1) ==
        "error: aggregate min needs a count of 0 or more, got -1");
  CHECK(Agg("frob", {}) == "error: unknown aggregate frob");
  CHECK(MakeAggregate("frob", std::nullopt).status().code() ==
        absl::StatusCode::kInvalidArgument);

  CHECK(AggregateWantsDistinct("count-distinct"));
  CHECK(AggregateWantsDistinct("distinct"));
  CHECK_FALSE(AggregateWantsDistinct("count"));
  CHECK_FALSE(AggregateWantsDistinct("sum"));
  CHECK_FALSE(AggregateWantsDistinct("median"));
}

}  // namespace
}  // namespace mentat::query::builtins::testing
