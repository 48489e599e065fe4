// The entity cache warmer (internal/cache_warmer.h): after it has run, the
// first read of an entity is a hit and answers what RocksDB holds, commits
// made while it runs are never hidden by a record it read before them, and
// it stops where the cache's budget says.

#include "internal/cache_warmer.h"

#include <doctest/doctest.h>

#include <map>
#include <thread>
#include <vector>

#include "mentat/storage/store.h"
#include "test_support.h"

namespace mentat::storage {
namespace {

using testing::Add;
using testing::Attr;
using testing::E;
using testing::TempDir;
using testing::Tx;
using testing::ValuesOf;

StoreOptions Warming(bool on, size_t cache_bytes = size_t{64} << 20) {
  StoreOptions options;
  options.warm_entity_cache = on;
  options.entity_cache_bytes = cache_bytes;
  return options;
}

// `n` entities with m/one = i and a name each, written in transactions of
// 100; returns them in order.
std::vector<EntityId> Fill(Store& store, int n) {
  std::vector<TxOp> schema = Attr("m/one", "db.type/long");
  const std::vector<TxOp> name = Attr("m/name", "db.type/string");
  schema.insert(schema.end(), name.begin(), name.end());
  REQUIRE(store.Transact(Tx(schema)).get().ok());
  std::vector<EntityId> entities;
  for (int base = 0; base < n; base += 100) {
    std::vector<TxOp> ops;
    for (int i = base; i < base + 100 && i < n; ++i) {
      const std::string tempid = "e" + std::to_string(i);
      ops.push_back(Add(E(tempid.c_str()), "m/one", Value::Long(i)));
      ops.push_back(Add(E(tempid.c_str()), "m/name",
                        Value::String("name " + std::to_string(i))));
    }
    auto r = store.Transact(Tx(ops)).get();
    REQUIRE(r.ok());
    for (int i = base; i < base + 100 && i < n; ++i) {
      entities.push_back(r->tempids.at("e" + std::to_string(i)));
    }
  }
  return entities;
}

// A store in `path` holding `n` entities (Fill), closed again.
std::vector<EntityId> Written(const std::string& path, int n) {
  auto store = *Store::Open(path, Warming(false));
  return Fill(*store, n);
}

TEST_CASE(
    "a warmed store answers the first read of every entity from the "
    "cache, with what was written") {
  TempDir dir;
  const std::vector<EntityId> entities = Written(dir.path(), 3000);
  auto store = *Store::Open(dir.path(), Warming(true));
  store->WaitForWarmCache();
  const CacheCounters warmed = store->entity_cache_counters();
  CHECK(warmed.entries >= entities.size());  // and the schema's entities
  CHECK(warmed.misses == 0);
  auto db = store->Latest();
  // Transactions are not warmed: reading one is the one miss.
  CHECK(ValuesOf(db->View(Basis::Current()), db->basis_tx(), "db/txInstant")
            .size() == 1);
  CHECK(store->entity_cache_counters().misses == 1);
  for (size_t i = 0; i < entities.size(); ++i) {
    const DbView view = db->View(Basis::Current());
    REQUIRE(ValuesOf(view, entities[i], "m/one") ==
            std::vector<Value>{Value::Long(static_cast<int64_t>(i))});
    REQUIRE(ValuesOf(view, entities[i], "m/name") ==
            std::vector<Value>{Value::String("name " + std::to_string(i))});
  }
  const CacheCounters after = store->entity_cache_counters();
  CHECK(after.misses == 1);
  CHECK(after.hits >= 2 * entities.size());
}

TEST_CASE(
    "commits while the cache warms are never hidden by a record read "
    "before them") {
  TempDir dir;
  const std::vector<EntityId> entities = Written(dir.path(), 20000);
  auto store = *Store::Open(dir.path(), Warming(true));
  // Each entity's m/one goes up by 100000, in transactions of 50, from the
  // last entity down (the warmer walks up), as the warmer runs.
  std::map<EntityId, int64_t> want;
  for (size_t i = 0; i < entities.size(); ++i) {
    want[entities[i]] = static_cast<int64_t>(i);
  }
  for (size_t end = entities.size(); end > 0; end -= 50) {
    std::vector<TxOp> ops;
    for (size_t i = end - 50; i < end; ++i) {
      want[entities[i]] += 100000;
      ops.push_back(
          Add(E(entities[i]), "m/one", Value::Long(want[entities[i]])));
    }
    REQUIRE(store->Transact(Tx(ops)).get().ok());
  }
  store->WaitForWarmCache();
  const DbView view = store->Latest()->View(Basis::Current());
  for (const auto& [e, v] : want) {
    REQUIRE(ValuesOf(view, e, "m/one") == std::vector<Value>{Value::Long(v)});
  }
}

TEST_CASE("the warmer fills three quarters of the entity cache, no more") {
  TempDir dir;
  const std::vector<EntityId> entities = Written(dir.path(), 20000);
  const size_t capacity = size_t{2} << 20;
  auto store = *Store::Open(dir.path(), Warming(true, capacity));
  store->WaitForWarmCache();
  const CacheCounters c = store->entity_cache_counters();
  CHECK(c.entries > 0);
  CHECK(c.entries < entities.size() / 2);
  // It stops at the first record past three quarters.
  CHECK(c.bytes >= capacity / 4 * 3);
  CHECK(c.bytes < capacity / 4 * 3 + 1024);
  // What it kept still answers right.
  const DbView view = store->Latest()->View(Basis::Current());
  for (size_t i = 0; i < entities.size(); i += 97) {
    REQUIRE(ValuesOf(view, entities[i], "m/one") ==
            std::vector<Value>{Value::Long(static_cast<int64_t>(i))});
  }
}

TEST_CASE("off, the entity cache starts empty") {
  TempDir dir;
  Written(dir.path(), 200);
  auto store = *Store::Open(dir.path(), Warming(false));
  store->WaitForWarmCache();
  CHECK(store->entity_cache_counters().entries == 0);
}

TEST_CASE("a store closed while it warms closes at once, whole") {
  TempDir dir;
  const std::vector<EntityId> entities = Written(dir.path(), 5000);
  {
    auto store = *Store::Open(dir.path(), Warming(true));
    store->Close();
    store->WaitForWarmCache();  // ended by Close, whether or not it finished
  }
  auto store = *Store::Open(dir.path(), Warming(false));
  const DbView view = store->Latest()->View(Basis::Current());
  CHECK(ValuesOf(view, entities.back(), "m/one") ==
        std::vector<Value>{Value::Long(4999)});
}

}  // namespace
}  // namespace mentat::storage
