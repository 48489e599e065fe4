// The record caches (internal/record_cache.h) behind EAVT reads of one
// entity and AVET reads of one value: what they answer must be exactly
// what RocksDB answers, at every basis, whoever filled them and whenever.

#include "internal/record_cache.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <map>
#include <random>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "internal/store_core.h"
#include "mentat/base/str_cat.h"
#include "mentat/storage/store.h"
#include "test_support.h"

namespace mentat::storage {
namespace {

using testing::Add;
using testing::AddRef;
using testing::Attr;
using testing::E;
using testing::Retract;
using testing::TempDir;
using testing::Tx;
using testing::ValuesOf;

std::vector<TxOp> SchemaOps() {
  std::vector<TxOp> ops;
  for (auto attr :
       {Attr("m/one", "db.type/long"), Attr("m/many", "db.type/long", true),
        Attr("m/ref", "db.type/ref", true), Attr("m/name", "db.type/string")}) {
    ops.insert(ops.end(), attr.begin(), attr.end());
  }
  return ops;
}

EntityId NewEntity(Store& store, int64_t one) {
  auto r = store.Transact(Tx({Add(E("x"), "m/one", Value::Long(one))})).get();
  REQUIRE(r.ok());
  return r->tempids.at("x");
}

void SetOne(Store& store, EntityId e, int64_t v) {
  REQUIRE(store.Transact(Tx({Add(E(e), "m/one", Value::Long(v))})).get().ok());
}

TEST_CASE("a reader of an older basis never puts a stale entity back") {
  TempDir dir;
  auto store = *Store::Open(dir.path(), StoreOptions());
  REQUIRE(store->Transact(Tx(SchemaOps())).get().ok());
  const EntityId e = NewEntity(*store, 1);
  auto before = store->Latest();
  SetOne(*store, e, 2);
  auto after = store->Latest();

  SUBCASE("the old reader loads first") {
    // Loaded from the old snapshot after the commit: it must not be kept.
    CHECK(ValuesOf(before->View(Basis::Current()), e, "m/one") ==
          std::vector<Value>{Value::Long(1)});
    CHECK(ValuesOf(after->View(Basis::Current()), e, "m/one") ==
          std::vector<Value>{Value::Long(2)});
  }
  SUBCASE("the new reader loads first") {
    // The record read at the later basis answers the older reader too,
    // filtered to what was true at its basis.
    CHECK(ValuesOf(after->View(Basis::Current()), e, "m/one") ==
          std::vector<Value>{Value::Long(2)});
    CHECK(ValuesOf(before->View(Basis::Current()), e, "m/one") ==
          std::vector<Value>{Value::Long(1)});
    CHECK(ValuesOf(after->View(Basis::AsOf(before->basis_tx())), e, "m/one") ==
          std::vector<Value>{Value::Long(1)});
  }
  // The value cache: the entity found by its old value at the old basis
  // only.
  const EntityId one = after->schema().FindAttribute("m/one")->id;
  for (int pass = 0; pass < 2; ++pass) {
    auto found =
        after->View(Basis::Current()).LookupUnique(one, Value::Long(1));
    REQUIRE(found.ok());
    CHECK(!found->has_value());
    found = before->View(Basis::Current()).LookupUnique(one, Value::Long(1));
    REQUIRE(found.ok());
    CHECK(*found == std::optional<EntityId>(e));
    found = after->View(Basis::Current()).LookupUnique(one, Value::Long(2));
    REQUIRE(found.ok());
    CHECK(*found == std::optional<EntityId>(e));
  }
  // A later commit drops the record: the next read sees it.
  SetOne(*store, e, 3);
  CHECK(ValuesOf(store->Latest()->View(Basis::Current()), e, "m/one") ==
        std::vector<Value>{Value::Long(3)});
  auto by_value =
      store->Latest()->View(Basis::Current()).LookupUnique(one, Value::Long(2));
  REQUIRE(by_value.ok());
  CHECK(!by_value->has_value());
  // And it is kept: a second read finds it.
  const uint64_t hits = store->entity_cache_counters().hits;
  CHECK(ValuesOf(store->Latest()->View(Basis::Current()), e, "m/one") ==
        std::vector<Value>{Value::Long(3)});
  CHECK(store->entity_cache_counters().hits == hits + 1);
}

// Every datom of the entity (and of each of its attributes, and from a
// SeekWithin) at `view`, as a comparable list.
std::vector<std::string> Read(const DbView& view, EntityId e,
                              const std::vector<EntityId>& attrs) {
  std::vector<std::string> out;
  auto cursor = view.NewCursor(IndexOrder::kEavt);
  auto dump = [&](const char* what) {
    for (; cursor->Valid(); cursor->Next()) {
      const Datom& d = cursor->datom();
      out.push_back(StrCat(what, " ", d.e, " ", d.a, " ", d.v.DebugString(),
                           " ", d.tx, " ", d.added));
    }
    REQUIRE(cursor->status().ok());
  };
  std::string prefix;
  EavtKey::EncodePrefix(e, &prefix);
  cursor->Seek(prefix);
  dump("entity");
  for (EntityId a : attrs) {
    std::string ea;
    EavtKey::EncodePrefix(e, a, &ea);
    cursor->Seek(ea);
    dump("attribute");
    cursor->Seek(prefix);
    cursor->SeekWithin(ea);
    dump("within");
  }
  return out;
}

// Every datom of each value of m/one (AVET under attribute and value).
std::vector<std::string> ReadValues(const DbView& view, EntityId attr) {
  std::vector<std::string> out;
  auto cursor = view.NewCursor(IndexOrder::kAvet);
  for (int64_t v = 0; v < 5; ++v) {
    std::string prefix;
    AvetKey::EncodePrefix(attr, Value::Long(v), &prefix);
    for (cursor->Seek(prefix); cursor->Valid(); cursor->Next()) {
      const Datom& d = cursor->datom();
      out.push_back(StrCat(v, ": ", d.e, " ", d.tx));
    }
    REQUIRE(cursor->status().ok());
  }
  return out;
}

TEST_CASE("cached reads equal RocksDB's at every basis") {
  // 1 byte: nothing fits, every read loads; 4 KB: records are evicted
  // all the time; 64 MB: everything stays.
  for (const size_t capacity : {size_t{1}, size_t{4096}, size_t{64} << 20}) {
    CAPTURE(capacity);
    TempDir plain_dir, cached_dir;
    StoreOptions plain_options, cached_options;
    plain_options.entity_cache_bytes = 0;
    plain_options.value_cache_bytes = 0;
    cached_options.entity_cache_bytes = capacity;
    cached_options.value_cache_bytes = capacity;
    auto plain = *Store::Open(plain_dir.path(), plain_options);
    auto cached = *Store::Open(cached_dir.path(), cached_options);
    std::mt19937 rng(static_cast<uint32_t>(capacity) + 7);
    auto pick = [&](int n) {
      return std::uniform_int_distribution<int>(0, n - 1)(rng);
    };
    std::vector<EntityId> entities, txs;
    auto both = [&](std::vector<TxOp> ops) {
      auto a = plain->Transact(Tx(ops)).get();
      auto b = cached->Transact(Tx(ops)).get();
      REQUIRE(a.ok());
      REQUIRE(b.ok());
      REQUIRE(a->tx == b->tx);
      txs.push_back(a->tx);
      return *a;
    };
    both(SchemaOps());
    for (int i = 0; i < 20; ++i) {
      auto r =
          both({Add(E("x"), "m/one", Value::Long(i)),
                Add(E("x"), "m/name", Value::String("n" + std::to_string(i)))});
      entities.push_back(r.tempids.at("x"));
    }
    const Schema& schema = cached->Latest()->schema();
    std::vector<EntityId> attrs;
    for (const char* a : {"m/one", "m/many", "m/ref", "m/name"}) {
      attrs.push_back(schema.FindAttribute(a)->id);
    }
    for (int round = 0; round < 120; ++round) {
      std::vector<TxOp> ops;
      const EntityId e = entities[pick(static_cast<int>(entities.size()))];
      switch (pick(4)) {
        case 0:
          ops.push_back(Add(E(e), "m/one", Value::Long(pick(5))));
          break;
        case 1:
          ops.push_back(Add(E(e), "m/many", Value::Long(pick(4))));
          break;
        case 2:
          ops.push_back(Retract(E(e), "m/many", Value::Long(pick(4))));
          break;
        default:
          ops.push_back(
              AddRef(E(e), "m/ref",
                     E(entities[pick(static_cast<int>(entities.size()))])));
      }
      // A retraction of a value that is not there is a no-op either way.
      auto a = plain->Transact(Tx(ops)).get();
      auto b = cached->Transact(Tx(ops)).get();
      REQUIRE(a.ok() == b.ok());
      if (a.ok()) txs.push_back(a->tx);
      // Reads at the latest basis and as of a random earlier one, through
      // the cache in whichever order the rounds fill it.
      const EntityId probe = entities[pick(static_cast<int>(entities.size()))];
      const EntityId t = txs[pick(static_cast<int>(txs.size()))];
      for (const Basis basis : {Basis::Current(), Basis::AsOf(t)}) {
        CAPTURE(round);
        CHECK(Read(cached->Latest()->View(basis), probe, attrs) ==
              Read(plain->Latest()->View(basis), probe, attrs));
        CHECK(ReadValues(cached->Latest()->View(basis), attrs[0]) ==
              ReadValues(plain->Latest()->View(basis), attrs[0]));
      }
    }
  }
}

TEST_CASE(
    "a value many entities share: cached up to a limit, exact either way") {
  // A ref's fan-in (q2's issues of one assignee, about 80) belongs in the
  // value cache; an enum value thousands of entities share does not (one
  // read of it would push out everything else). Both must read exactly.
  TempDir dir;
  auto store = *Store::Open(dir.path(), StoreOptions());
  REQUIRE(store->Transact(Tx(SchemaOps())).get().ok());
  const int kFew = 300, kMany = 1500;
  for (const auto& [value, count] : {std::pair{7, kFew}, std::pair{8, kMany}}) {
    std::vector<TxOp> ops;
    for (int i = 0; i < count; ++i) {
      ops.push_back(Add(E(("e" + std::to_string(i)).c_str()), "m/one",
                        Value::Long(value)));
    }
    REQUIRE(store->Transact(Tx(ops)).get().ok());
  }
  const EntityId one = store->Latest()->schema().FindAttribute("m/one")->id;
  auto entities_of = [&](int64_t v) {
    std::vector<EntityId> out;
    auto cursor =
        store->Latest()->View(Basis::Current()).NewCursor(IndexOrder::kAvet);
    std::string prefix;
    AvetKey::EncodePrefix(one, Value::Long(v), &prefix);
    for (cursor->Seek(prefix); cursor->Valid(); cursor->Next()) {
      out.push_back(cursor->datom().e);
    }
    REQUIRE(cursor->status().ok());
    return out;
  };
  for (int pass = 0; pass < 2; ++pass) {
    CAPTURE(pass);
    const std::vector<EntityId> few = entities_of(7), many = entities_of(8);
    CHECK(few.size() == kFew);
    CHECK(many.size() == kMany);
    CHECK(std::is_sorted(few.begin(), few.end()));
    CHECK(std::is_sorted(many.begin(), many.end()));
  }
  // The shared-by-300 value is held whole (its 300 keys), the other only
  // as a marker that sends its readers to RocksDB.
  const CacheCounters c = store->value_cache_counters();
  CHECK(c.entries == 2);
  CHECK(c.bytes > kFew * 24);
  CHECK(c.bytes < kMany * 24);
}

// A prefix read at the latest basis, then as of an earlier one, then at
// both again, through the cache `counters` describes: `now_right` and
// `then_right` read it and say whether they read the right datoms. The
// first read keeps a record without history; the first earlier-basis read
// reads it again with its history (more bytes), once; later readers of
// either basis use that record.
void CheckHistoryReadOnce(const std::function<bool()>& now_right,
                          const std::function<bool()>& then_right,
                          const std::function<CacheCounters()>& counters) {
  CHECK(now_right());
  const CacheCounters current_only = counters();
  CHECK(current_only.entries == 1);
  CHECK(then_right());
  const CacheCounters whole = counters();
  CHECK(whole.entries == 1);
  CHECK(whole.bytes > current_only.bytes);
  CHECK(then_right());
  CHECK(now_right());
  const CacheCounters after = counters();
  CHECK(after.bytes == whole.bytes);
  CHECK(after.misses == whole.misses);
  CHECK(after.hits == whole.hits + 2);
}

TEST_CASE(
    "an entity read at the latest basis, then as of an earlier one: its "
    "history is read once, when first needed") {
  TempDir dir;
  auto store = *Store::Open(dir.path(), StoreOptions());
  REQUIRE(store->Transact(Tx(SchemaOps())).get().ok());
  const EntityId e = NewEntity(*store, 1);
  const EntityId first = store->Latest()->basis_tx();
  SetOne(*store, e, 2);
  SetOne(*store, e, 3);
  auto one_at = [&](Basis basis) {
    return ValuesOf(store->Latest()->View(basis), e, "m/one");
  };
  CheckHistoryReadOnce(
      [&] { return one_at(Basis::Current()) == std::vector{Value::Long(3)}; },
      [&] { return one_at(Basis::AsOf(first)) == std::vector{Value::Long(1)}; },
      [&] { return store->entity_cache_counters(); });
}

TEST_CASE(
    "a value read at the latest basis, then as of an earlier one: its "
    "history is read once, when first needed") {
  // The workload's as_of q2 reads the issues of one assignee this way
  // (AVET under the attribute and the user): once the record holds the
  // value's history it answers every earlier basis from memory, where
  // each read went to RocksDB's merged current and history iterators.
  TempDir dir;
  auto store = *Store::Open(dir.path(), StoreOptions());
  REQUIRE(store->Transact(Tx(SchemaOps())).get().ok());
  const EntityId moved = NewEntity(*store, 1);
  const EntityId stayed = NewEntity(*store, 1);
  const EntityId first = store->Latest()->basis_tx();
  SetOne(*store, moved, 2);
  const EntityId one = store->Latest()->schema().FindAttribute("m/one")->id;
  auto holders_of_1 = [&](Basis basis) {
    std::vector<EntityId> out;
    auto cursor = store->Latest()->View(basis).NewCursor(IndexOrder::kAvet);
    std::string prefix;
    AvetKey::EncodePrefix(one, Value::Long(1), &prefix);
    for (cursor->Seek(prefix); cursor->Valid(); cursor->Next()) {
      out.push_back(cursor->datom().e);
    }
    REQUIRE(cursor->status().ok());
    return out;
  };
  const std::vector<EntityId> now = {stayed};
  const std::vector<EntityId> then = {moved, stayed};
  CheckHistoryReadOnce([&] { return holders_of_1(Basis::Current()) == now; },
                       [&] { return holders_of_1(Basis::AsOf(first)) == then; },
                       [&] { return store->value_cache_counters(); });
}

TEST_CASE("an entity too big for the cache reads from RocksDB") {
  TempDir dir;
  auto store = *Store::Open(dir.path(), StoreOptions());
  REQUIRE(store->Transact(Tx(SchemaOps())).get().ok());
  const EntityId e = NewEntity(*store, 1);
  std::vector<TxOp> ops;
  for (int i = 0; i < 3000; ++i) {
    ops.push_back(Add(E(e), "m/many", Value::Long(i)));
  }
  REQUIRE(store->Transact(Tx(ops)).get().ok());
  for (int pass = 0; pass < 2; ++pass) {
    auto values =
        ValuesOf(store->Latest()->View(Basis::Current()), e, "m/many");
    REQUIRE(values.size() == 3000);
    CHECK(values.front() == Value::Long(0));
    CHECK(values.back() == Value::Long(2999));
  }
}

TEST_CASE("an entity changed more often than a record keeps reads right") {
  TempDir dir;
  auto store = *Store::Open(dir.path(), StoreOptions());
  REQUIRE(store->Transact(Tx(SchemaOps())).get().ok());
  const EntityId e = NewEntity(*store, 0);
  std::vector<EntityId> txs;
  for (int64_t v = 1; v <= 100; ++v) {
    auto r = store->Transact(Tx({Add(E(e), "m/one", Value::Long(v))})).get();
    REQUIRE(r.ok());
    txs.push_back(r->tx);
  }
  auto latest = store->Latest();
  for (int pass = 0; pass < 2; ++pass) {
    CHECK(ValuesOf(latest->View(Basis::Current()), e, "m/one") ==
          std::vector<Value>{Value::Long(100)});
    for (size_t i : {size_t{0}, size_t{41}, size_t{98}}) {
      CHECK(ValuesOf(latest->View(Basis::AsOf(txs[i])), e, "m/one") ==
            std::vector<Value>{Value::Long(static_cast<int64_t>(i) + 1)});
    }
  }
}

TEST_CASE("readers racing a writer always see the value of their basis") {
  TempDir dir;
  auto store = *Store::Open(dir.path(), StoreOptions());
  REQUIRE(store->Transact(Tx(SchemaOps())).get().ok());
  const EntityId e = NewEntity(*store, 0);
  absl::Mutex mu;
  std::map<EntityId, int64_t> value_at;  // tx -> the value it wrote
  value_at[store->Latest()->basis_tx()] = 0;
  std::atomic<bool> stop{false};
  std::atomic<int> wrong{0}, reads{0};
  auto reader = [&] {
    while (!stop.load()) {
      auto db = store->Latest();
      auto values = ValuesOf(db->View(Basis::Current()), e, "m/one");
      // The writer records a tx after the commit is published: wait for it.
      int64_t expected = -1;
      for (;;) {
        absl::MutexLock lock(&mu);
        auto it = value_at.upper_bound(db->basis_tx());
        if (it != value_at.end() ||
            value_at.rbegin()->first == db->basis_tx()) {
          expected = std::prev(it)->second;
          break;
        }
      }
      if (values.size() != 1 || values[0] != Value::Long(expected)) wrong++;
      reads++;
    }
  };
  std::vector<std::thread> readers;
  for (int i = 0; i < 3; ++i) readers.emplace_back(reader);
  for (int64_t v = 1; v <= 300; ++v) {
    auto r = store->Transact(Tx({Add(E(e), "m/one", Value::Long(v))})).get();
    REQUIRE(r.ok());
    absl::MutexLock lock(&mu);
    value_at[r->tx] = v;
  }
  stop = true;
  for (std::thread& t : readers) t.join();
  CHECK(reads.load() > 0);
  CHECK(wrong.load() == 0);
}

// The cache's own bookkeeping, without a store: records of 100 entries
// each, so that a small capacity holds a few per shard.
internal::RecordRef RecordOf(int n) {
  const std::string prefix = StrCat("p", n);
  std::vector<internal::IndexRecord::Entry> entries(100);
  for (size_t i = 0; i < entries.size(); ++i) {
    entries[i] = {0, static_cast<uint32_t>(prefix.size()),
                  static_cast<EntityId>(i + 1), 0};
  }
  return internal::IndexRecord::Make(prefix, entries, prefix);
}

TEST_CASE("the record cache evicts within its capacity and keeps hit records") {
  const size_t capacity = size_t{32} << 15;  // 32 KiB a shard
  internal::RecordCache cache(capacity);
  auto find = [&](int n) {
    const std::string prefix = StrCat("p", n);
    internal::RecordRef r = cache.Find(prefix);
    return r != nullptr && r->prefix() == prefix && r->size() == 100;
  };
  // Hot records are hit after every insert: the hand always finds them
  // flagged and passes them by.
  constexpr int kHot = 16;
  for (int n = 0; n < kHot; ++n) cache.Insert(1, RecordOf(n));
  int invalidated = 0;
  for (int n = kHot; n < 20000; ++n) {
    cache.Insert(1, RecordOf(n));
    for (int h = 0; h < kHot; ++h) REQUIRE(find(h));
    // Dropping records in between moves others around the ring.
    if (n % 7 == 0) {
      cache.Invalidate(StrCat("p", n - 3), 1);
      ++invalidated;
    }
  }
  const CacheCounters c = cache.counters();
  CHECK(c.bytes <= capacity);
  CHECK(c.entries < 20000 - invalidated);
  CHECK(c.entries > 0);
  // Every record the counters count can be found under its own prefix.
  uint64_t found = 0;
  for (int n = 0; n < 20000; ++n) found += find(n) ? 1 : 0;
  CHECK(found == c.entries);
}

TEST_CASE("prefetching a record changes nothing a reader sees") {
  internal::RecordCache cache(size_t{1} << 20);
  cache.Insert(1, RecordOf(1));
  const CacheCounters before = cache.counters();
  for (int step : {0, 1}) {
    cache.Prefetch("p1", step);
    cache.Prefetch("p2", step);  // not there
  }
  const CacheCounters after = cache.counters();
  CHECK(after.hits == before.hits);
  CHECK(after.misses == before.misses);
  CHECK(after.entries == 1);
  CHECK(cache.Find("p1") != nullptr);
  CHECK(cache.Find("p2") == nullptr);
}

}  // namespace
}  // namespace mentat::storage

namespace mentat::storage {
namespace {

TEST_CASE("bulk reads use the cache's records but keep none of their own") {
  TempDir dir;
  auto store = *Store::Open(dir.path(), StoreOptions());
  REQUIRE(store->Transact(Tx(SchemaOps())).get().ok());
  std::vector<EntityId> entities;
  for (int i = 0; i < 20; ++i) entities.push_back(NewEntity(*store, i));
  auto read = [&](bool bulk, size_t from, size_t to) {
    auto cursor =
        store->Latest()->View(Basis::Current()).NewCursor(IndexOrder::kEavt);
    cursor->SetBulk(bulk);
    std::vector<int64_t> out;
    for (size_t i = from; i < to; ++i) {
      std::string prefix;
      EavtKey::EncodePrefix(entities[i], &prefix);
      for (cursor->Seek(prefix); cursor->Valid(); cursor->Next()) {
        out.push_back(cursor->datom().v.as_long());
      }
      REQUIRE(cursor->status().ok());
    }
    return out;
  };
  // Entities 0-4 are read one at a time and cached.
  CHECK(read(false, 0, 5) == std::vector<int64_t>{0, 1, 2, 3, 4});
  const CacheCounters cached = store->entity_cache_counters();
  CHECK(cached.entries == 5);
  // A bulk read of all of them: the same datoms, nothing more cached.
  std::vector<int64_t> all;
  for (int i = 0; i < 20; ++i) all.push_back(i);
  CHECK(read(true, 0, 20) == all);
  const CacheCounters after = store->entity_cache_counters();
  CHECK(after.entries == 5);
  CHECK(after.hits == cached.hits + 5);
}

}  // namespace
}  // namespace mentat::storage
