#include "mentat/query/pull_pattern.h"

#include <doctest/doctest.h>

#include <string>
#include <string_view>

#include "mentat/edn/edn_reader.h"

namespace mentat::query {
namespace {

using edn::EdnValue;

PullPattern Parse(std::string_view text) {
  absl::StatusOr<EdnValue> v = edn::ParseEdn(text);
  REQUIRE_MESSAGE(v.ok(), v.status().ToString());
  absl::StatusOr<PullPattern> p = ParsePullPattern(*v);
  REQUIRE_MESSAGE(p.ok(), p.status().ToString());
  return *std::move(p);
}

std::string Error(std::string_view text) {
  absl::StatusOr<EdnValue> v = edn::ParseEdn(text);
  REQUIRE_MESSAGE(v.ok(), v.status().ToString());
  absl::StatusOr<PullPattern> p = ParsePullPattern(*v);
  REQUIRE_FALSE(p.ok());
  CHECK(p.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(p.status().message());
}

TEST_CASE("pull: parse wildcard and plain attributes") {
  PullPattern p = Parse("[* :issue/title :db/id :issue/_assignee :name]");
  CHECK(p.wildcard);
  REQUIRE(p.attrs.size() == 4);
  CHECK(p.attrs[0].attr == "issue/title");
  CHECK_FALSE(p.attrs[0].reverse);
  CHECK(p.attrs[0].limit == 1000);
  CHECK_FALSE(p.attrs[0].no_limit);
  CHECK_FALSE(p.attrs[0].as.has_value());
  CHECK(p.attrs[0].line == 1);
  CHECK(p.attrs[0].column == 4);
  CHECK(p.attrs[1].attr == "db/id");
  CHECK(p.attrs[2].attr == "issue/assignee");
  CHECK(p.attrs[2].reverse);
  CHECK(p.attrs[3].attr == "name");
  CHECK(Parse("[\"*\"]").wildcard);
  CHECK_FALSE(Parse("[:a/b]").wildcard);
}

TEST_CASE("pull: parse attribute options, vector and list forms") {
  PullPattern p = Parse(
      "[[:a/b :as \"x\" :limit 5 :default 0] (:a/c :limit nil) "
      "(limit :a/d 7) (default :a/e \"none\") [:a/_f :as :g]]");
  REQUIRE(p.attrs.size() == 5);
  CHECK(p.attrs[0].attr == "a/b");
  CHECK(*p.attrs[0].as == EdnValue::String("x"));
  CHECK(p.attrs[0].limit == 5);
  CHECK(*p.attrs[0].default_value == EdnValue::Int(0));
  CHECK(p.attrs[1].no_limit);
  CHECK(p.attrs[2].attr == "a/d");
  CHECK(p.attrs[2].limit == 7);
  CHECK(*p.attrs[3].default_value == EdnValue::String("none"));
  CHECK(p.attrs[4].reverse);
  CHECK(p.attrs[4].attr == "a/f");
  CHECK(*p.attrs[4].as == EdnValue::Keyword("g"));
}

TEST_CASE("pull: parse map specs, recursion and options on map keys") {
  PullPattern p = Parse(
      "[{:issue/assignee [:user/name] :person/friend ... :person/boss 3}"
      " {[:issue/label :limit 2] [:label/name]}"
      " {(:issue/label :limit 3 :as :l) [:label/name]}"
      " {(limit :issue/label 4) [*]}]");
  REQUIRE(p.attrs.size() == 6);
  REQUIRE(p.attrs[0].sub != nullptr);
  CHECK(p.attrs[0].sub->attrs[0].attr == "user/name");
  CHECK_FALSE(p.attrs[0].recursive);
  CHECK(p.attrs[1].recursive);
  CHECK_FALSE(p.attrs[1].recursion_depth.has_value());
  CHECK(p.attrs[1].sub == nullptr);
  CHECK(p.attrs[2].recursive);
  CHECK(*p.attrs[2].recursion_depth == 3);
  CHECK(p.attrs[3].limit == 2);
  CHECK(p.attrs[3].sub->attrs[0].attr == "label/name");
  CHECK(p.attrs[4].limit == 3);
  CHECK(*p.attrs[4].as == EdnValue::Keyword("l"));
  CHECK(p.attrs[5].limit == 4);
  CHECK(p.attrs[5].sub->wildcard);

  PullPattern w = Parse("[* {:issue/assignee [:user/name]}]");
  CHECK(w.wildcard);
  REQUIRE(w.attrs.size() == 1);
  CHECK(w.attrs[0].sub != nullptr);
}

TEST_CASE("pull: parse errors name the element and its position") {
  CHECK(Error("{:a 1}") ==
        "line 1, column 1: a pull pattern must be a vector, got a map {:a 1}");
  CHECK(Error("[]") ==
        "line 1, column 1: a pull pattern needs at least one "
        "element");
  CHECK(Error("[:a/b 1]")
            .starts_with("line 1, column 7: expected an "
                         "attribute keyword"));
  CHECK(Error("[[:a/b :limit \"x\"]]") ==
        "line 1, column 15: pull option :limit needs a number or nil, got "
        "\"x\"");
  CHECK(Error("[(:a/b :limit -1)]") ==
        "line 1, column 15: pull option :limit must be positive, got -1");
  CHECK(Error("[(:a/b :limit 0)]") ==
        "line 1, column 15: pull option :limit must be positive, got 0");
  CHECK(Error("[(limit :a/b :x)]") ==
        "line 1, column 14: pull option :limit needs a number or nil, got :x");
  CHECK(Error("[[:a/b :foo 1]]") ==
        "line 1, column 8: unknown pull option :foo (expected :as, :limit or "
        ":default)");
  CHECK(Error("[[:a/b :xform str]]") ==
        "line 1, column 8: pull option :xform is not supported");
  CHECK(Error("[[:a/b :limit]]") ==
        "line 1, column 8: pull option :limit has no value");
  CHECK(Error("[[:a/b :as 1 :as 2]]") ==
        "line 1, column 14: pull option :as given twice");
  CHECK(Error("[[:a/b :default 1 :default 2]]") ==
        "line 1, column 19: pull option :default given twice");
  CHECK(Error("[[\"a\" :as 1]]")
            .starts_with("line 1, column 3: an attribute with options starts "
                         "with the attribute "
                         "keyword"));
  CHECK(
      Error("[[]]").starts_with("line 1, column 2: an attribute with "
                                "options starts"));
  CHECK(Error("[[:a/b]]") ==
        "line 1, column 2: [:a/b] has no options; write the attribute alone");
  CHECK(
      Error("[(limit :a/b)]")
          .starts_with(
              "line 1, column 2: (limit ...) takes an attribute and a value"));
  CHECK(Error("[(default 1 2)]") ==
        "line 1, column 11: (default ...) needs an attribute keyword, got 1");
  CHECK(Error("[(frob :a/b 1)]")
            .starts_with("line 1, column 3: unknown pull form (frob ...)"));
  CHECK(Error("[{:a/b \"x\"}]")
            .starts_with("line 1, column 8: the value of a map spec must be a "
                         "pattern vector"));
  CHECK(Error("[{:a/b 0}]") ==
        "line 1, column 8: a recursion depth must be positive, got 0");
  CHECK(Error("[{* [:a/b]}]") ==
        "line 1, column 3: * cannot be the key of a map spec");
  CHECK(Error("[{}]") ==
        "line 1, column 2: a map spec needs at least one "
        "entry");
  CHECK(Error("[...]") ==
        "line 1, column 2: ... is only allowed as the value of a map spec");
  // Errors inside nested patterns keep their own positions.
  CHECK(Error("[{:a/b\n  [:c/d 7]}]").starts_with("line 2, column 9: "));
  CHECK(Error("[{:a/b []}]") ==
        "line 1, column 8: a pull pattern needs at "
        "least one element");
}

TEST_CASE("pull: parse patterns built in code, without positions") {
  EdnValue v = EdnValue::Vector(
      {EdnValue::Keyword("a/b"),
       EdnValue::List({EdnValue::Keyword("a/c"), EdnValue::Keyword("limit"),
                       EdnValue::String("x")})});
  absl::StatusOr<PullPattern> p = ParsePullPattern(v);
  REQUIRE_FALSE(p.ok());
  CHECK(p.status().message() ==
        "pull option :limit needs a number or nil, got \"x\"");
}

}  // namespace
}  // namespace mentat::query
