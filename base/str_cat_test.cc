#include "mentat/base/str_cat.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "absl/strings/string_view.h"

namespace mentat {
namespace {

TEST_CASE("StrCat: integers in decimal, at their limits too") {
  CHECK(StrCat(0) == "0");
  CHECK(StrCat(-42) == "-42");
  CHECK(StrCat(std::numeric_limits<int64_t>::min()) == "-9223372036854775808");
  CHECK(StrCat(std::numeric_limits<uint64_t>::max()) == "18446744073709551615");
  CHECK(StrCat(size_t{7}, uint8_t{200}, int16_t{-3}) == "7200-3");
}

TEST_CASE("StrCat: floating point in the shortest form that reads back") {
  CHECK(StrCat(1.5) == "1.5");
  CHECK(StrCat(0.1) == "0.1");
  CHECK(StrCat(-2.0) == "-2");
  CHECK(StrCat(1e300) == "1e+300");
  CHECK(StrCat(0.25f) == "0.25");
}

TEST_CASE("StrCat: bools as words, chars as themselves") {
  CHECK(StrCat(true, "/", false) == "true/false");
  // A char is a character, not its code (65).
  CHECK(StrCat('A', 'b') == "Ab");
  CHECK(StrCat("x", '\0', "y") == std::string("x\0y", 3));
}

TEST_CASE("StrCat: every kind of string, embedded NULs kept") {
  std::string s = "str";
  std::string_view sv = "view";
  absl::string_view asv = "absl";
  const char* cs = "cstr";
  CHECK(StrCat(s, "-", sv, "-", asv, "-", cs) == "str-view-absl-cstr");
  // A view's bytes are its size, not up to a NUL.
  std::string_view with_nul("a\0b", 3);
  CHECK(StrCat(with_nul).size() == 3);
  // A view into part of a buffer takes only that part.
  CHECK(StrCat(std::string_view("abcdef").substr(1, 3)) == "bcd");
  CHECK(StrCat().empty());
}

TEST_CASE("StrAppend: appends after what is there") {
  std::string out = "n=";
  StrAppend(&out, 3, ", ok=", true, ", c=", 'z', ", s=", std::string_view("v"));
  CHECK(out == "n=3, ok=true, c=z, s=v");
  StrAppend(&out);  // nothing to append
  CHECK(out == "n=3, ok=true, c=z, s=v");
}

}  // namespace
}  // namespace mentat
