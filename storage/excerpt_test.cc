// How storage quotes big values in messages (mentat/base/excerpt.h).
#include <doctest/doctest.h>

#include <string>

#include "mentat/storage/value.h"

namespace mentat {
namespace {

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
