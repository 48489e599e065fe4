// ValueCounts (statistics.h) against a std::map of the same operations:
// the statistics' value counts, and the answers of count-by-value queries
// the planner takes from them, must not depend on the container.

#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <random>
#include <string>

#include "mentat/storage/statistics.h"

namespace mentat::storage {
namespace {

TEST_CASE("ValueCounts finds, adds, changes and erases what a map does") {
  std::mt19937_64 rng(7);
  // Values of several types, some equal across forms a hash map would
  // also take as one (the same long twice, a keyword and a string of the
  // same text as two).
  auto random_value = [&]() -> Value {
    const int64_t n = static_cast<int64_t>(rng() % 40);
    switch (rng() % 4) {
      case 0:
        return Value::Long(n - 20);
      case 1:
        return Value::Ref(17592186045418 + n);
      case 2:
        return Value::Keyword("state/s" + std::to_string(n));
      default:
        return Value::String("s" + std::to_string(n));
    }
  };
  ValueCounts counts;
  std::map<Value, int64_t> model;
  for (int step = 0; step < 5000; ++step) {
    const Value v = random_value();
    const int64_t delta = static_cast<int64_t>(rng() % 5) - 2;
    // ApplyStatsDelta's use: find, then erase, add or change.
    auto it = counts.find(v);
    const int64_t before = it == counts.end() ? 0 : it->second;
    REQUIRE(before == (model.contains(v) ? model[v] : 0));
    const int64_t after = before + delta;
    if (after <= 0) {
      if (it != counts.end()) counts.erase(it);
      model.erase(v);
    } else if (it == counts.end()) {
      const auto [at, added] = counts.emplace(v, after);
      CHECK(added);
      CHECK(at->first == v);
      model[v] = after;
    } else {
      it->second = after;
      model[v] = after;
    }
    REQUIRE(counts.size() == model.size());
  }
  // The same pairs in the same (value) order; a copy equals its original.
  auto m = model.begin();
  for (const auto& [v, n] : counts) {
    REQUIRE(m != model.end());
    CHECK(v == m->first);
    CHECK(n == m->second);
    CHECK(counts.CountOf(v) == n);
    ++m;
  }
  CHECK(m == model.end());
  const ValueCounts copy = counts;
  CHECK(copy == counts);
  // Adding a value that is there changes nothing.
  if (!model.empty()) {
    const auto [at, added] = counts.emplace(model.begin()->first, 999);
    CHECK_FALSE(added);
    CHECK(at->second == model.begin()->second);
  }
  CHECK(counts.CountOf(Value::Long(12345)) == 0);
  counts.clear();
  CHECK(counts.empty());
  CHECK_FALSE(copy == counts);
}

}  // namespace
}  // namespace mentat::storage
