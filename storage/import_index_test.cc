// ImportIndex against a model (an ordered map per order): the latest write
// of every key, scans by every prefix shape, save points, the final sort.

#include "internal/import_index.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <deque>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "mentat/storage/keys.h"

namespace mentat::storage::internal {
namespace {

using Model = std::map<std::string, EntityId>;
using Collected = std::vector<std::pair<std::string_view, EntityId>>;

Collected Expected(const Model& model, std::string_view prefix) {
  Collected out;
  for (auto it = model.lower_bound(std::string(prefix));
       it != model.end() && std::string_view(it->first).starts_with(prefix);
       ++it) {
    out.emplace_back(it->first, it->second);
  }
  return out;
}

bool Same(const Collected& a, const Collected& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].first != b[i].first || a[i].second != b[i].second) return false;
  }
  return true;
}

Value RandomValue(std::mt19937& rng) {
  switch (rng() % 4) {
    case 0:
      return Value::Long(static_cast<int64_t>(rng() % 7) - 3);
    case 1:
      return Value::Ref(static_cast<EntityId>(rng() % 5 + 1));
    case 2: {
      // Strings that are prefixes of each other, and with zero bytes.
      std::string s(rng() % 3, 'x');
      if (rng() % 3 == 0) s.push_back('\0');
      return Value::String(s);
    }
    default:
      return Value::Keyword(rng() % 2 ? "a/b" : "a/bc");
  }
}

TEST_CASE("ImportIndex answers like an ordered map of the latest writes") {
  std::mt19937 rng(7);
  constexpr IndexOrder kOrders[] = {IndexOrder::kEavt, IndexOrder::kAvet,
                                    IndexOrder::kVaet};
  ImportIndex index;
  std::map<IndexOrder, Model> model;
  std::deque<std::string> storage;  // the keys' bytes (the arena)
  std::vector<std::pair<ImportIndex::Marks, std::map<IndexOrder, Model>>> saved;
  std::vector<std::string> written;  // keys to look up again
  Collected got;
  for (int step = 0; step < 4000; ++step) {
    const IndexOrder order = kOrders[rng() % 3];
    const EntityId e = static_cast<EntityId>(rng() % 6 + 1);
    const EntityId a = static_cast<EntityId>(rng() % 3 + 10);
    Value v = RandomValue(rng);
    std::string key;
    if (order == IndexOrder::kEavt) EavtKey::Encode(e, a, v, &key);
    if (order == IndexOrder::kAvet) AvetKey::Encode(a, v, e, &key);
    if (order == IndexOrder::kVaet) {
      VaetKey::Encode(static_cast<EntityId>(rng() % 5 + 1), a, e, &key);
    }
    const int what = static_cast<int>(rng() % 100);
    if (what < 70) {
      const EntityId tx =
          rng() % 4 == 0 ? ImportIndex::kDeleted : static_cast<EntityId>(step);
      storage.push_back(key);
      index.Add(order, storage.back(), tx);
      model[order][key] = tx;
      written.push_back(key);
    } else if (what < 74) {
      saved.emplace_back(index.marks(), model);
    } else if (what < 77 && !saved.empty()) {
      index.Truncate(saved.back().first);
      model = saved.back().second;
      saved.pop_back();
    } else if (what < 90) {
      // Find, of a written key or a fresh one.
      if (!written.empty() && rng() % 2) key = written[rng() % written.size()];
      auto found = model[order].find(key);
      const std::optional<EntityId> want =
          found == model[order].end() ? std::nullopt
                                      : std::optional<EntityId>(found->second);
      CAPTURE(step);
      CHECK(index.Find(order, key) == want);
    } else {
      // A prefix of every shape: whole components, and cuts inside one.
      std::string prefix;
      switch (rng() % 5) {
        case 0:
          prefix = key.substr(0, 8);
          break;
        case 1:
          prefix = order == IndexOrder::kAvet ? key.substr(0, key.size() - 8)
                                              : key.substr(0, 16);
          break;
        case 2:
          prefix = key.substr(0, rng() % key.size());
          break;
        case 3:
          prefix = key;
          break;
        default:
          prefix = key.substr(0, 9);
          break;
      }
      index.Collect(order, prefix, &got);
      CAPTURE(step);
      CHECK(Same(got, Expected(model[order], prefix)));
    }
  }
  for (IndexOrder order : kOrders) {
    index.SortedKeys(order, &got);
    CHECK(Same(got, Expected(model[order], "")));
  }
  index.Clear();
  CHECK(index.size() == 0);
  index.Collect(IndexOrder::kEavt, "", &got);
  CHECK(got.empty());
}

TEST_CASE("SortedByKey orders bytewise, the latest of equal keys first") {
  const std::vector<std::string> keys = {
      std::string("ab"),          std::string("ab\0", 3),
      std::string(30, 'z'),       std::string(29, 'z') + "y",
      std::string("ab"),          std::string(),
      std::string(24, 'q') + "b", std::string(24, 'q') + "a",
  };
  const std::vector<uint32_t> order =
      SortedByKey(static_cast<uint32_t>(keys.size()),
                  [&](uint32_t i) { return std::string_view(keys[i]); });
  const std::vector<uint32_t> want = {5, 4, 0, 1, 7, 6, 3, 2};
  CHECK(order == want);
}

TEST_CASE("LatestByKey keeps the latest write of each key, in key order") {
  // Keys that tie on their first 27 bytes (the sort records' bytes) and
  // differ after, or only in length, or by a zero byte; and repeats.
  const std::string q27(27, 'q');
  const std::vector<std::string> keys = {
      q27 + "b",
      q27,
      q27 + "a",
      std::string(26, 'q'),
      q27 + "b",
      std::string(26, 'q') + std::string("\0", 1),
      q27,
      std::string(25, 'q') + "r",
      std::string(),
      std::string("\0\0", 2),
      std::string(),
      std::string(24, 'x') + "abc",
      std::string(24, 'x') + "abd",
      std::string(24, 'x') + "abc",
  };
  std::vector<uint32_t> want_all(keys.size());
  for (uint32_t i = 0; i < want_all.size(); ++i) want_all[i] = i;
  std::stable_sort(want_all.begin(), want_all.end(),
                   [&](uint32_t a, uint32_t b) { return keys[a] < keys[b]; });
  auto key_of = [&](uint32_t i) { return std::string_view(keys[i]); };
  SUBCASE("SortedByKey: bytewise, the latest of equal keys first") {
    std::vector<uint32_t> want = want_all;
    // Among equal keys, the latest first.
    for (size_t i = 0; i < want.size();) {
      size_t j = i;
      while (j < want.size() && keys[want[j]] == keys[want[i]]) ++j;
      std::reverse(want.begin() + i, want.begin() + j);
      i = j;
    }
    CHECK(SortedByKey(static_cast<uint32_t>(keys.size()), key_of) == want);
  }
  SUBCASE("LatestByKey: one index per key, its latest write") {
    std::vector<uint32_t> want;
    for (size_t i = 0; i < want_all.size(); ++i) {
      const bool last_of_key = i + 1 == want_all.size() ||
                               keys[want_all[i + 1]] != keys[want_all[i]];
      if (last_of_key) want.push_back(want_all[i]);
    }
    CHECK(LatestByKey(static_cast<uint32_t>(keys.size()), key_of) == want);
  }
}

}  // namespace
}  // namespace mentat::storage::internal
