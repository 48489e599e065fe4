#include "mentat/base/closest_name.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace mentat {
namespace {

std::string Closest(std::string_view typed,
                    const std::vector<std::string>& candidates) {
  ClosestName closest(typed);
  for (const std::string& c : candidates) closest.Offer(c);
  return std::string(closest.best());
}

TEST_CASE("closest name: edit distance") {
  CHECK(EditDistance("", "") == 0);
  CHECK(EditDistance("abc", "") == 3);
  CHECK(EditDistance("", "abc") == 3);
  CHECK(EditDistance("kitten", "sitting") == 3);
  CHECK(EditDistance("person/nme", "person/name") == 1);
  CHECK(EditDistance("flaw", "lawn") == 2);
}

TEST_CASE("closest name: a typo's nearest candidate, or none") {
  const std::vector<std::string> attrs = {"person/name", "person/email",
                                          "person/age", "issue/title"};
  CHECK(Closest("person/nme", attrs) == "person/name");
  CHECK(Closest("persn/email", attrs) == "person/email");
  CHECK(Closest("person/ag", attrs) == "person/age");  // a prefix
  CHECK(Closest("issue/titel", attrs) == "issue/title");
  // Nothing near: no guess.
  CHECK(Closest("order/total", attrs).empty());
  CHECK(Closest("", attrs).empty());
  // The name itself is no suggestion.
  CHECK(Closest("person/age", {"person/age"}).empty());
  // On a tie, the one that sorts first, whatever the order.
  CHECK(Closest("ab", {"ax", "ay"}) == "ax");
  CHECK(Closest("ab", {"ay", "ax"}) == "ax");
  // Short names allow two edits, long ones a third of their length.
  CHECK(Closest("sch", {"schema"}) == "schema");
  CHECK(Closest("abcdefghijklmnop", {"abcdefghijklxxxx"}) ==
        "abcdefghijklxxxx");
  CHECK(Closest("abcdefghi", {"abcdexxxx"}).empty());
}

}  // namespace
}  // namespace mentat
