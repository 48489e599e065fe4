// The column cache (internal/column_cache.h) behind AEVT and AVET scans of
// attributes read in bulk: what a column answers must be exactly what
// RocksDB answers, whatever commits come between its build and its reads.
// Images of columns on disk: column_image_store_test.cc.

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <random>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "column_test_support.h"
#include "mentat/base/str_cat.h"
#include "mentat/storage/store.h"
#include "test_support.h"

namespace mentat::storage {
namespace {

using testing::Add;
using testing::Attr;
using testing::E;
using testing::Retract;
using testing::TempDir;
using testing::Tx;

using testing::EagerColumns;
using testing::NoColumns;
using testing::Scan;
using testing::SchemaOps;

TEST_CASE("column scans equal RocksDB's while commits change the columns") {
  TempDir plain_dir, column_dir;
  auto plain = *Store::Open(plain_dir.path(), NoColumns());
  auto columns = *Store::Open(column_dir.path(), EagerColumns());
  std::mt19937 rng(11);
  auto pick = [&](int n) {
    return std::uniform_int_distribution<int>(0, n - 1)(rng);
  };
  std::vector<EntityId> entities, txs;
  auto both = [&](const std::vector<TxOp>& ops) {
    auto a = plain->Transact(Tx(ops)).get();
    auto b = columns->Transact(Tx(ops)).get();
    REQUIRE(a.ok() == b.ok());
    if (!a.ok()) return;
    REQUIRE(a->tx == b->tx);
    txs.push_back(a->tx);
    if (a->tempids.count("x") != 0) entities.push_back(a->tempids.at("x"));
  };
  both(SchemaOps());
  for (int i = 0; i < 30; ++i) {
    both({Add(E("x"), "c/one", Value::Long(i % 5)),
          Add(E("x"), "c/name", Value::String(StrCat("n", i)))});
  }
  const Schema& schema = columns->Latest()->schema();
  const EntityId one = schema.FindAttribute("c/one")->id;
  const EntityId many = schema.FindAttribute("c/many")->id;
  for (int round = 0; round < 150; ++round) {
    CAPTURE(round);
    // Readers of an older basis, taken before this round's commit, must
    // keep reading what was true at their basis.
    auto old_plain = plain->Latest();
    auto old_columns = columns->Latest();
    const EntityId e = entities[pick(static_cast<int>(entities.size()))];
    switch (pick(4)) {
      case 0:
        both({Add(E(e), "c/one", Value::Long(pick(5)))});
        break;
      case 1:
        both({Add(E(e), "c/many", Value::Long(pick(4)))});
        break;
      case 2:
        both({Retract(E(e), "c/many", Value::Long(pick(4)))});
        break;
      default:
        // Rounds without a commit let the columns live.
        break;
    }
    // Now and then the builds and folds the reads queued finish.
    if (pick(3) == 0) columns->WaitForColumns();
    const EntityId t = txs[pick(static_cast<int>(txs.size()))];
    for (const EntityId attr : {one, many}) {
      for (const Basis basis : {Basis::Current(), Basis::AsOf(t)}) {
        CHECK(Scan(columns->Latest()->View(basis), attr, e) ==
              Scan(plain->Latest()->View(basis), attr, e));
      }
      CHECK(Scan(old_columns->View(Basis::Current()), attr, e) ==
            Scan(old_plain->View(Basis::Current()), attr, e));
    }
  }
  // Columns were built, kept under the commits, and read.
  const CacheCounters c = columns->column_cache_counters();
  CHECK(c.misses > 0);
  CHECK(c.hits > 0);
}

TEST_CASE("a column is built after bulk reads and kept under commits") {
  TempDir dir;
  auto store = *Store::Open(dir.path(), EagerColumns());
  REQUIRE(store->Transact(Tx(SchemaOps())).get().ok());
  std::vector<TxOp> ops;
  for (int i = 0; i < 400; ++i) {
    const std::string tempid = StrCat("e", i);
    ops.push_back(Add(E(tempid.c_str()), "c/one", Value::Long(i)));
  }
  REQUIRE(store->Transact(Tx(ops)).get().ok());
  const EntityId one = store->Latest()->schema().FindAttribute("c/one")->id;
  auto count = [&](const Db& db) {
    auto cursor = db.View(Basis::Current()).NewCursor(IndexOrder::kAevt);
    std::string prefix;
    AevtKey::EncodePrefix(one, &prefix);
    size_t n = 0;
    for (cursor->Seek(prefix); cursor->Valid(); cursor->Next()) ++n;
    REQUIRE(cursor->status().ok());
    return n;
  };
  // The first scan reads RocksDB and queues the build, which the
  // store's column thread does.
  CHECK(count(*store->Latest()) == 400);
  store->WaitForColumns();
  CHECK(store->column_cache_counters().misses == 1);
  CHECK(store->column_cache_counters().entries == 1);
  CHECK(store->column_cache_counters().bytes > 400 * 16);
  const uint64_t hits = store->column_cache_counters().hits;
  auto before = store->Latest();
  CHECK(count(*before) == 400);
  CHECK(store->column_cache_counters().hits == hits + 1);

  // A commit to the attribute makes a new version: the reader of the
  // older basis still counts 400 from the column, the new one 401.
  REQUIRE(store->Transact(Tx({Add(E("new"), "c/one", Value::Long(-1))}))
              .get()
              .ok());
  CHECK(store->column_cache_counters().entries == 1);
  CHECK(count(*before) == 400);
  CHECK(count(*store->Latest()) == 401);
  CHECK(store->column_cache_counters().hits == hits + 3);
  CHECK(store->column_cache_counters().misses == 1);
}

// The schema, then `n` entities, the i-th with c/one i and i % `period`
// values of c/many (none, one or several); their ids, in order.
std::vector<EntityId> WriteManyValues(Store& store, int n, int period) {
  REQUIRE(store.Transact(Tx(SchemaOps())).get().ok());
  std::vector<EntityId> entities;
  for (int i = 0; i < n; ++i) {
    std::vector<TxOp> ops = {Add(E("x"), "c/one", Value::Long(i))};
    for (int k = 0; k < i % period; ++k) {
      ops.push_back(Add(E("x"), "c/many", Value::Long(100 - k)));
    }
    auto r = store.Transact(Tx(ops)).get();
    REQUIRE(r.ok());
    entities.push_back(r->tempids.at("x"));
  }
  return entities;
}

TEST_CASE("an entity column finds each entity's datoms as AEVT does") {
  TempDir plain_dir, column_dir;
  auto plain = *Store::Open(plain_dir.path(), NoColumns());
  auto columns = *Store::Open(column_dir.path(), EagerColumns());
  const std::vector<EntityId> entities = WriteManyValues(*plain, 40, 4);
  REQUIRE(WriteManyValues(*columns, 40, 4) == entities);
  const EntityId many = columns->Latest()->schema().FindAttribute("c/many")->id;
  const DbView view = columns->Latest()->View(Basis::Current());
  // No reads yet: no column.
  CHECK(view.EntityColumnOf(many) == nullptr);
  view.NoteColumnDemand(IndexOrder::kAevt, many, 1000);
  columns->WaitForColumns();
  std::shared_ptr<const EntityColumn> column = view.EntityColumnOf(many);
  REQUIRE(column != nullptr);
  CHECK(column->attribute() == many);
  CHECK(column->size() == 60);  // 10 entities each of 0 + 1 + 2 + 3 values
  CHECK(columns->Latest()->View(Basis::History()).EntityColumnOf(many) ==
        nullptr);

  // Every entity, from every starting point: before it, at the end, and
  // at the answer for the entity before (the way joins walk it).
  const DbView truth = plain->Latest()->View(Basis::Current());
  std::vector<EntityId> probes = entities;
  probes.push_back(1);                       // before every entity
  probes.push_back(entities.back() + 1000);  // after every entity
  size_t last = 0;
  for (const EntityId e : probes) {
    CAPTURE(e);
    std::string prefix;
    AevtKey::EncodePrefix(many, e, &prefix);
    std::vector<std::string> want;
    auto datoms = truth.Datoms(IndexOrder::kAevt, prefix);
    REQUIRE(datoms.ok());
    for (const Datom& d : *datoms) {
      want.push_back(StrCat(d.e, " ", d.v.DebugString(), " ", d.tx));
    }
    for (const size_t near : {size_t{0}, last, column->size()}) {
      std::vector<std::string> got;
      size_t pos = column->Seek(e, near);
      if (near == last) last = pos;
      if (pos < column->size()) column->Prefetch(pos);
      for (; pos < column->size() && column->entity(pos) == e; ++pos) {
        Datom d;
        REQUIRE(column->Read(pos, false, &d).ok());
        CHECK(d.a == many);
        CHECK(d.added);
        got.push_back(StrCat(d.e, " ", d.v.DebugString(), " ", d.tx));
        // Without the value, the rest is the same and v is left alone.
        Datom ids;
        ids.v = Value::String("untouched");
        REQUIRE(column->Read(pos, true, &ids).ok());
        CHECK(ids.e == d.e);
        CHECK(ids.tx == d.tx);
        CHECK(ids.v == Value::String("untouched"));
      }
      CHECK(got == want);
    }
  }
}

TEST_CASE("an entity column's SeekEach finds what Seek finds") {
  TempDir dir;
  auto store = *Store::Open(dir.path(), EagerColumns());
  const std::vector<EntityId> entities = WriteManyValues(*store, 300, 3);
  const EntityId many = store->Latest()->schema().FindAttribute("c/many")->id;
  const DbView view = store->Latest()->View(Basis::Current());
  view.NoteColumnDemand(IndexOrder::kAevt, many, 1000);
  store->WaitForColumns();
  std::shared_ptr<const EntityColumn> column = view.EntityColumnOf(many);
  REQUIRE(column != nullptr);
  REQUIRE(column->size() == 300);  // 100 entities each of 0 + 1 + 2 values
  // Entities with datoms and without, before and after all of them,
  // repeated, in batches of every size up to past two lanes' worth, in
  // ascending order and not.
  std::vector<EntityId> probes = {1, entities.back() + 1000};
  for (size_t i = 0; i < entities.size(); i += 7) probes.push_back(entities[i]);
  probes.push_back(entities[9]);
  probes.push_back(entities[9]);
  std::mt19937 rng(7);
  for (const bool sorted : {true, false}) {
    if (sorted) {
      std::sort(probes.begin(), probes.end());
    } else {
      std::shuffle(probes.begin(), probes.end(), rng);
    }
    for (size_t n = 0; n <= probes.size(); n += (n < 40 ? 1 : 9)) {
      CAPTURE(n);
      std::vector<size_t> got(n, 12345);
      column->SeekEach(probes.data(), n, got.data());
      for (size_t i = 0; i < n; ++i) {
        CAPTURE(probes[i]);
        CHECK(got[i] == column->Seek(probes[i]));
      }
    }
  }
  // 300 datoms stay in the CPU's caches: Seek's walk is the faster.
  CHECK_FALSE(column->SeekEachPays(1));
}

TEST_CASE("a column over its share of the cache is not kept") {
  TempDir dir;
  StoreOptions options = EagerColumns();
  options.column_cache_bytes = 4096;  // a column may take 2 KB
  absl::Mutex mu;
  std::vector<std::string> notices;  // from the column thread
  options.on_notice = [&](std::string_view message) {
    absl::MutexLock lock(&mu);
    notices.emplace_back(message);
  };
  auto store = *Store::Open(dir.path(), options);
  REQUIRE(store->Transact(Tx(SchemaOps())).get().ok());
  std::vector<TxOp> ops;
  for (int i = 0; i < 500; ++i) {
    const std::string tempid = StrCat("e", i);
    ops.push_back(Add(E(tempid.c_str()), "c/one", Value::Long(i)));
  }
  REQUIRE(store->Transact(Tx(ops)).get().ok());
  const EntityId one = store->Latest()->schema().FindAttribute("c/one")->id;
  for (int pass = 0; pass < 3; ++pass) {
    store->WaitForColumns();
    auto cursor =
        store->Latest()->View(Basis::Current()).NewCursor(IndexOrder::kAvet);
    std::string prefix;
    AvetKey::EncodePrefix(one, &prefix);
    int64_t expect = 0;
    for (cursor->Seek(prefix); cursor->Valid(); cursor->Next()) {
      CHECK(cursor->datom().v == Value::Long(expect++));
    }
    CHECK(expect == 500);
  }
  store->WaitForColumns();
  CHECK(store->column_cache_counters().entries == 0);
  // Refused once, and said so once, naming the column and the cache.
  CHECK(store->column_cache_counters().refused == 1);
  absl::MutexLock lock(&mu);
  REQUIRE(notices.size() == 1);
  CHECK(notices[0].starts_with(
      "the avet column of :c/one would take more than 2 KiB, half of the "
      "column cache (4 KiB): it is not kept"));
}

TEST_CASE("readers racing a writer see a consistent attribute") {
  // The writer moves amounts between entities, two datoms per commit, and
  // records what each commit left. Readers read the whole attribute
  // through AEVT and AVET, while columns are built and dropped under them,
  // and must find exactly what their basis holds: no torn commit, no
  // column older or newer than the basis. The deltas fold every few
  // commits, under the readers too.
  TempDir dir;
  StoreOptions options = EagerColumns();
  options.column_fold_min_keys = 4;
  auto store = *Store::Open(dir.path(), options);
  REQUIRE(store->Transact(Tx(SchemaOps())).get().ok());
  constexpr int kEntities = 50;
  std::vector<TxOp> ops;
  for (int i = 0; i < kEntities; ++i) {
    const std::string tempid = StrCat("e", i);
    ops.push_back(Add(E(tempid.c_str()), "c/one", Value::Long(100)));
  }
  auto created = store->Transact(Tx(ops)).get();
  REQUIRE(created.ok());
  std::vector<EntityId> entities;
  std::vector<int64_t> amounts(kEntities, 100);
  for (int i = 0; i < kEntities; ++i) {
    entities.push_back(created->tempids.at(StrCat("e", i)));
  }
  const EntityId one = store->Latest()->schema().FindAttribute("c/one")->id;
  absl::Mutex mu;
  std::map<EntityId, std::map<EntityId, int64_t>> state_at;  // tx -> e -> v
  auto record = [&](EntityId tx) {
    absl::MutexLock lock(&mu);
    for (int i = 0; i < kEntities; ++i) {
      state_at[tx][entities[i]] = amounts[i];
    }
  };
  record(created->tx);
  // The AEVT column is there from the start, so that the writer's
  // commits fold its delta; the others build while the writer runs.
  {
    auto cursor =
        store->Latest()->View(Basis::Current()).NewCursor(IndexOrder::kAevt);
    std::string prefix;
    AevtKey::EncodePrefix(one, &prefix);
    for (cursor->Seek(prefix); cursor->Valid(); cursor->Next()) {
    }
    store->WaitForColumns();
  }
  std::atomic<bool> stop{false};
  std::atomic<int> wrong{0}, reads{0};
  auto reader = [&](IndexOrder order) {
    while (!stop.load()) {
      auto db = store->Latest();
      auto cursor = db->View(Basis::Current()).NewCursor(order);
      std::string prefix;
      AevtKey::EncodePrefix(one, &prefix);  // the same bytes for AVET
      std::map<EntityId, int64_t> seen;
      for (cursor->Seek(prefix); cursor->Valid(); cursor->Next()) {
        seen[cursor->datom().e] = cursor->datom().v.as_long();
      }
      // The writer records a commit after it is published: wait for it.
      std::map<EntityId, int64_t> expected;
      for (bool found = false; !found;) {
        absl::MutexLock lock(&mu);
        auto it = state_at.find(db->basis_tx());
        if (it != state_at.end()) {
          expected = it->second;
          found = true;
        }
      }
      if (!cursor->status().ok() || seen != expected) wrong++;
      reads++;
    }
  };
  std::vector<std::thread> readers;
  readers.emplace_back(reader, IndexOrder::kAevt);
  readers.emplace_back(reader, IndexOrder::kAvet);
  readers.emplace_back(reader, IndexOrder::kAevt);
  std::mt19937 rng(5);
  for (int round = 0; round < 300; ++round) {
    const int from = static_cast<int>(rng() % kEntities);
    const int to =
        (from + 1 + static_cast<int>(rng() % (kEntities - 1))) % kEntities;
    amounts[from] -= 7;
    amounts[to] += 7;
    auto r =
        store
            ->Transact(
                Tx({Add(E(entities[from]), "c/one", Value::Long(amounts[from])),
                    Add(E(entities[to]), "c/one", Value::Long(amounts[to]))}))
            .get();
    REQUIRE(r.ok());
    record(r->tx);
  }
  stop = true;
  for (std::thread& t : readers) t.join();
  CHECK(reads.load() > 0);
  CHECK(wrong.load() == 0);
  // The readers' scans queued columns (built while the writer ran, or
  // now).
  store->WaitForColumns();
  CHECK(store->column_cache_counters().misses > 0);
  CHECK(store->column_cache_counters().folds > 0);
}

}  // namespace
}  // namespace mentat::storage
