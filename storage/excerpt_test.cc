#include "mentat/storage/excerpt.h"

#include <doctest/doctest.h>

#include <string>

#include "mentat/storage/value.h"

namespace mentat {
namespace {

TEST_CASE("Excerpt: short texts whole, long ones cut with their size") {
  CHECK(Excerpt("abc") == "abc");
  CHECK(Excerpt(std::string(64, 'x')) == std::string(64, 'x'));
  CHECK(Excerpt(std::string(65, 'x')) ==
        std::string(64, 'x') + "\u2026(65 bytes)");
  CHECK(Excerpt("abcdef", 3) == "abc\u2026(6 bytes)");
  // Never half a character: "é" is two bytes.
  CHECK(Excerpt("a\u00e9b", 2) == "a\u2026(4 bytes)");
  CHECK(ExcerptPrefix("a\u00e9b", 3) == "a\u00e9");
  CHECK(ExcerptMarker("abc", 3).empty());
}

TEST_CASE("Value::DebugString quotes long texts as excerpts") {
  const std::string big(1 << 20, 'y');
  const std::string s = storage::Value::String(big).DebugString();
  CHECK(s == "\"" + std::string(64, 'y') + "\"\u2026(1048576 bytes)");
  CHECK(storage::Value::Keyword("a/" + big).DebugString().size() < 100);
  CHECK(storage::Value::Bytes(big).DebugString().size() < 120);
  CHECK(storage::Value::String("short").DebugString() == "\"short\"");
}

}  // namespace
}  // namespace mentat
