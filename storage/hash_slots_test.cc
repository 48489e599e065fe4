// HashSlots (internal/hash_slots.h) against std::unordered_map, under
// hashes chosen to collide: long probe runs, runs that wrap around the
// array's end, erasures inside them, and growth.

#include "internal/hash_slots.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <unordered_map>

namespace mentat::storage::internal {
namespace {

TEST_CASE("HashSlots finds, replaces and erases what a map does") {
  for (const uint64_t spread : {uint64_t{4}, uint64_t{64}, uint64_t{1} << 40}) {
    CAPTURE(spread);
    std::mt19937_64 rng(spread);
    HashSlots<int64_t> slots;
    std::unordered_map<uint64_t, int64_t> model;
    // Hashes whose low bits (the home slot) take few values, and whose
    // high bits keep them apart; some at the array's last slots.
    auto hash = [&] {
      const uint64_t low = rng() % spread;
      const uint64_t high = (rng() % 64) << 48;
      return (high | (low == 0 ? 15 : low)) | (rng() % 2 ? 0 : 15);
    };
    for (int step = 0; step < 20000; ++step) {
      const uint64_t h = hash();
      switch (rng() % 3) {
        case 0: {
          const auto v = static_cast<int64_t>(rng());
          slots.Put(h, v);
          model[h] = v;
          break;
        }
        case 1:
          REQUIRE(slots.Erase(h) == (model.erase(h) == 1));
          break;
        default: {
          const int64_t* got = slots.Find(h);
          auto it = model.find(h);
          REQUIRE((got != nullptr) == (it != model.end()));
          if (got != nullptr) REQUIRE(*got == it->second);
        }
      }
      REQUIRE(slots.size() == model.size());
    }
    for (const auto& [h, v] : model) {
      const int64_t* got = slots.Find(h);
      REQUIRE(got != nullptr);
      REQUIRE(*got == v);
    }
    slots.Clear();
    CHECK(slots.size() == 0);
    for (const auto& [h, v] : model) CHECK(slots.Find(h) == nullptr);
  }
}

}  // namespace
}  // namespace mentat::storage::internal
