// The column cache (internal/column_cache.h) behind AEVT and AVET scans of
// attributes read in bulk: what a column answers must be exactly what
// RocksDB answers, whatever commits come between its build and its reads.

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <random>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "internal/column_image.h"
#include "mentat/base/str_cat.h"
#include "mentat/storage/store.h"
#include "rocksdb/file_checksum.h"
#include "test_support.h"

namespace mentat::storage {
namespace {

using testing::Add;
using testing::Attr;
using testing::E;
using testing::Retract;
using testing::TempDir;
using testing::Tx;

std::vector<TxOp> SchemaOps() {
  std::vector<TxOp> ops;
  for (auto attr :
       {Attr("c/one", "db.type/long"), Attr("c/many", "db.type/long", true),
        Attr("c/name", "db.type/string")}) {
    ops.insert(ops.end(), attr.begin(), attr.end());
  }
  return ops;
}

// Options that queue a column's build at the first bulk read.
StoreOptions EagerColumns() {
  StoreOptions options;
  options.column_build_after_rows = 1;
  return options;
}

StoreOptions NoColumns() {
  StoreOptions options;
  options.column_cache_bytes = 0;
  return options;
}

// Every datom of `attr` through AEVT and AVET: whole scans, a seek to one
// entity (AEVT) and to one value (AVET), and a range from a value on.
std::vector<std::string> Scan(const DbView& view, EntityId attr,
                              EntityId some_entity) {
  std::vector<std::string> out;
  auto dump = [&](DatomCursor& cursor, const char* what) {
    for (; cursor.Valid(); cursor.Next()) {
      const Datom& d = cursor.datom();
      out.push_back(StrCat(what, " ", d.e, " ", d.a, " ", d.v.DebugString(),
                           " ", d.tx, " ", d.added));
    }
    REQUIRE(cursor.status().ok());
  };
  auto aevt = view.NewCursor(IndexOrder::kAevt);
  std::string prefix;
  AevtKey::EncodePrefix(attr, &prefix);
  aevt->Seek(prefix);
  dump(*aevt, "aevt");
  std::string entity;
  AevtKey::EncodePrefix(attr, some_entity, &entity);
  aevt->Seek(entity);
  dump(*aevt, "aevt entity");
  aevt->Seek(prefix);
  aevt->SeekWithin(entity);
  dump(*aevt, "aevt within");

  auto avet = view.NewCursor(IndexOrder::kAvet);
  prefix.clear();
  AvetKey::EncodePrefix(attr, &prefix);
  avet->Seek(prefix);
  dump(*avet, "avet");
  std::string value;
  AvetKey::EncodePrefix(attr, Value::Long(2), &value);
  avet->Seek(value);
  dump(*avet, "avet value");
  avet->Seek(prefix);
  avet->SeekWithin(value);
  dump(*avet, "avet range");
  // Keys only (counting) must see the same keys.
  avet->SetKeysOnly(true);
  size_t keys = 0;
  for (avet->Seek(prefix); avet->Valid(); avet->Next()) ++keys;
  out.push_back(StrCat("avet keys ", keys));
  // Skipping counts what stepping counts: runs of one value (AVET) and of
  // one entity (AEVT), in lots of 1, 2 and 3 and whole, and the attribute.
  for (DatomCursor* cursor : {avet.get(), aevt.get()}) {
    const bool by_value = cursor == avet.get();
    std::string attr_prefix;
    if (by_value) {
      AvetKey::EncodePrefix(attr, &attr_prefix);
    } else {
      AevtKey::EncodePrefix(attr, &attr_prefix);
    }
    for (const uint64_t lot : {uint64_t{1}, uint64_t{2}, uint64_t{3},
                               std::numeric_limits<uint64_t>::max()}) {
      std::string runs;
      cursor->Seek(attr_prefix);
      while (cursor->Valid()) {
        const std::string_view key = cursor->key();
        const std::string run(by_value ? key.substr(0, key.size() - 8)
                                       : key.substr(0, 16));
        uint64_t n = 0, k = 0;
        do {
          k = cursor->SkipPrefix(run, lot);
          n += k;
        } while (k == lot);
        REQUIRE(n > 0);
        StrAppend(&runs, n, " ");
      }
      REQUIRE(cursor->status().ok());
      out.push_back(StrCat(by_value ? "avet" : "aevt", " runs ", runs));
    }
    cursor->Seek(attr_prefix);
    out.push_back(StrCat("skipped ", cursor->SkipPrefix(attr_prefix, keys + 9),
                         " valid after ", cursor->Valid()));
  }
  return out;
}

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

namespace mentat::storage {
namespace {

using testing::VectorImportSource;

// Every datom of `attr` through AEVT and AVET, as Scan reads them, at the
// latest basis of `store`.
std::vector<std::string> ScanLatest(Store& store, EntityId attr,
                                    EntityId some_entity) {
  return Scan(store.Latest()->View(Basis::Current()), attr, some_entity);
}

TEST_CASE("column images' CRC32C is RocksDB's, in one piece or several") {
  // The standard check value of CRC32C.
  const std::string digits = "123456789";
  CHECK(internal::Crc32cExtend(0, digits.data(), digits.size()) == 0xe3069283u);
  std::mt19937 rng(7);
  std::string data(100003, '\0');
  for (char& c : data) c = static_cast<char>(rng());
  auto gen =
      rocksdb::GetFileChecksumGenCrc32cFactory()->CreateFileChecksumGenerator(
          rocksdb::FileChecksumGenContext());
  gen->Update(data.data(), 37);
  gen->Update(data.data() + 37, data.size() - 37);
  gen->Finalize();
  uint32_t want = 0;
  for (const char c : gen->GetChecksum()) {
    want = (want << 8) | static_cast<uint8_t>(c);
  }
  CHECK(internal::Crc32cExtend(0, data.data(), data.size()) == want);
  const uint32_t first = internal::Crc32cExtend(0, data.data(), 5);
  CHECK(internal::Crc32cExtend(first, data.data() + 5, data.size() - 5) ==
        want);
  // Lengths about the three-lane rounds of 3 x 8,192 bytes (column
  // images are megabytes), whole and from an odd start.
  std::string big(3 * 3 * 8192 + 100, '\0');
  for (char& c : big) c = static_cast<char>(rng());
  for (const size_t n :
       {size_t{3 * 8192 - 1}, size_t{3 * 8192}, size_t{3 * 8192 + 1},
        size_t{2 * 3 * 8192 + 7}, big.size() - 1}) {
    for (const size_t start : {size_t{0}, size_t{1}}) {
      CAPTURE(n);
      CAPTURE(start);
      auto g =
          rocksdb::GetFileChecksumGenCrc32cFactory()
              ->CreateFileChecksumGenerator(rocksdb::FileChecksumGenContext());
      g->Update(big.data() + start, n);
      g->Finalize();
      uint32_t expected = 0;
      for (const char c : g->GetChecksum()) {
        expected = (expected << 8) | static_cast<uint8_t>(c);
      }
      CHECK(internal::Crc32cExtend(0, big.data() + start, n) == expected);
      const uint32_t head = internal::Crc32cExtend(0, big.data() + start, 11);
      CHECK(internal::Crc32cExtend(head, big.data() + start + 11, n - 11) ==
            expected);
    }
  }
}

TEST_CASE("a column image is written only inside its store's directory") {
  TempDir dir;
  std::filesystem::create_directories(dir.path());
  internal::KeyRun keys;
  keys.Append(std::string(16, 'k'), 3, /*with_entity=*/true);
  // A store moved away (a replica's diverged copy set aside while open):
  // its old path is not made again.
  const std::string moved = dir.path() + "/moved";
  CHECK_FALSE(
      internal::WriteColumnImage(moved, IndexOrder::kAevt, 70, 3, keys).ok());
  CHECK_FALSE(std::filesystem::exists(moved));
  // The store's directory exists: the image is written and listed.
  std::filesystem::create_directory(moved);
  REQUIRE(
      internal::WriteColumnImage(moved, IndexOrder::kAevt, 70, 3, keys).ok());
  CHECK(internal::ListColumnImages(moved).size() == 1);
}

TEST_CASE("a bulk import builds its big attributes' columns before any read") {
  TempDir plain_dir, column_dir;
  auto plain = *Store::Open(plain_dir.path(), NoColumns());
  StoreOptions options;
  // Above the 41 :db/ident datoms of the bootstrap schema and SchemaOps,
  // which would otherwise earn :db/ident a column too.
  options.column_build_after_rows = 50;
  options.low_cardinality_limit = 10;
  auto columns = *Store::Open(column_dir.path(), options);
  std::vector<TxRequest> txs = {Tx(SchemaOps())};
  // c/one: 60 datoms of 7 values (AEVT and AVET); c/name: 60 distinct
  // strings (AEVT only); c/many: 30 datoms, under the line (none).
  for (int t = 0; t < 6; ++t) {
    std::vector<TxOp> ops;
    for (int i = t * 10; i < t * 10 + 10; ++i) {
      const std::string x = StrCat("x", i);
      ops.push_back(Add(E(x.c_str()), "c/one", Value::Long(i % 7)));
      ops.push_back(Add(E(x.c_str()), "c/name", Value::String(StrCat(i))));
      if (i % 2 == 0)
        ops.push_back(Add(E(x.c_str()), "c/many", Value::Long(i)));
    }
    txs.push_back(Tx(ops));
  }
  VectorImportSource a(txs), b(txs);
  REQUIRE(plain->Import(&a).ok());
  REQUIRE(columns->Import(&b).ok());
  columns->WaitForColumns();
  // Built by the import alone: no reader asked.
  CHECK(columns->column_cache_counters().entries == 3);
  CHECK(columns->column_cache_counters().misses == 3);
  // Their images are on disk: a reopened store has them at once. (Read
  // only after the reopen: a read of c/many before it could earn that
  // attribute a column of its own, built and imaged at close.)
  columns.reset();
  StoreOptions no_builds = options;
  no_builds.column_build_after_rows = uint64_t{1} << 40;
  columns = *Store::Open(column_dir.path(), no_builds);
  CHECK(columns->column_cache_counters().entries == 3);
  const Schema& schema = columns->Latest()->schema();
  for (const char* name : {"c/one", "c/name", "c/many"}) {
    const EntityId attr = schema.FindAttribute(name)->id;
    CHECK(ScanLatest(*columns, attr, 0) == ScanLatest(*plain, attr, 0));
  }
  CHECK(columns->column_cache_counters().hits > 0);
}

// A store without columns and one with eager columns given the same
// transactions, so that the second's scans can be checked against the
// first's. Commit requires both to commit the same transaction, and keeps
// its id and the entity the tempid "x" named.
struct TwinStores {
  TwinStores(const TempDir& plain_dir, const TempDir& column_dir)
      : plain(*Store::Open(plain_dir.path(), NoColumns())),
        columns(*Store::Open(column_dir.path(), EagerColumns())) {}
  void Commit(const std::vector<TxOp>& ops) {
    auto a = plain->Transact(Tx(ops)).get();
    auto b = columns->Transact(Tx(ops)).get();
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    REQUIRE(a->tx == b->tx);
    last_tx = a->tx;
    if (a->tempids.count("x") != 0) entities.push_back(a->tempids.at("x"));
  }
  // The schema and 50 entities with c/one and c/many, then the columns of
  // both attributes built (and imaged) as of the last commit; their ids.
  std::pair<EntityId, EntityId> SeedColumns() {
    Commit(SchemaOps());
    for (int i = 0; i < 50; ++i) {
      Commit({Add(E("x"), "c/one", Value::Long(i % 7)),
              Add(E("x"), "c/many", Value::Long(i % 3))});
    }
    const Schema& schema = columns->Latest()->schema();
    const EntityId one = schema.FindAttribute("c/one")->id;
    const EntityId many = schema.FindAttribute("c/many")->id;
    for (const EntityId attr : {one, many}) ScanLatest(*columns, attr, 0);
    columns->WaitForColumns();
    REQUIRE(columns->column_cache_counters().entries == 4);
    return {one, many};
  }

  std::unique_ptr<Store> plain;
  std::unique_ptr<Store> columns;
  std::vector<EntityId> entities;
  EntityId last_tx = 0;
};

TEST_CASE("a reopened store has its columns at once, from their images") {
  TempDir plain_dir, column_dir, copy_dir;
  TwinStores twins(plain_dir, column_dir);
  auto& [plain, columns, entities, last_tx] = twins;
  auto both = [&](const std::vector<TxOp>& ops) { twins.Commit(ops); };
  const auto [one, many] = twins.SeedColumns();
  // Commits after the images, then a copy of the store as it is now: its
  // images are behind its log.
  for (int i = 0; i < 30; ++i) {
    both({Add(E(entities[i]), "c/one", Value::Long(100 + i)),
          Retract(E(entities[i + 1]), "c/many", Value::Long((i + 1) % 3)),
          Add(E("x"), "c/many", Value::Long(i))});
  }
  std::filesystem::create_directories(copy_dir.path());
  REQUIRE(columns->Checkpoint(copy_dir.path() + "/store").ok());
  std::filesystem::copy(column_dir.path() + "/columns",
                        copy_dir.path() + "/store/columns");
  StoreOptions no_builds = EagerColumns();
  no_builds.column_build_after_rows = uint64_t{1} << 40;
  {
    // The copy replays the log after its images; nothing is built.
    auto copy = *Store::Open(copy_dir.path() + "/store", no_builds);
    CHECK(copy->column_cache_counters().entries == 4);
    // Readers are given the columns once their images' checksums held.
    copy->WaitForColumns();
    for (const EntityId attr : {one, many}) {
      CHECK(ScanLatest(*copy, attr, entities[3]) ==
            ScanLatest(*plain, attr, entities[3]));
    }
    CHECK(copy->column_cache_counters().hits > 0);
    CHECK(copy->column_cache_counters().misses == 0);
  }
  // Closing writes the changed columns' images; the reopened store reads
  // them, and keeps them current under more commits.
  columns.reset();
  columns = *Store::Open(column_dir.path(), no_builds);
  CHECK(columns->column_cache_counters().entries == 4);
  both({Add(E(entities[40]), "c/one", Value::Long(-5)),
        Add(E("x"), "c/many", Value::Long(77))});
  for (const EntityId attr : {one, many}) {
    CHECK(ScanLatest(*columns, attr, entities[40]) ==
          ScanLatest(*plain, attr, entities[40]));
  }
  CHECK(columns->column_cache_counters().misses == 0);
  // A malformed image is dropped: the store reads RocksDB until the
  // column is built again.
  columns.reset();
  for (const auto& f :
       std::filesystem::directory_iterator(column_dir.path() + "/columns")) {
    std::filesystem::resize_file(f.path(), 100);
  }
  columns = *Store::Open(column_dir.path(), no_builds);
  CHECK(columns->column_cache_counters().entries == 0);
  CHECK(ScanLatest(*columns, one, 0) == ScanLatest(*plain, one, 0));
}

TEST_CASE("closing moves an unchanged column's image up to the basis") {
  TempDir plain_dir, column_dir;
  TwinStores twins(plain_dir, column_dir);
  auto& [plain, columns, entities, last_tx] = twins;
  auto both = [&](const std::vector<TxOp>& ops) { twins.Commit(ops); };
  const auto [one, many] = twins.SeedColumns();
  const EntityId imaged_at = last_tx;
  auto image_as_of = [&](IndexOrder order, EntityId attr) {
    auto image = internal::MapColumnImage(
        internal::ColumnImagePath(column_dir.path(), order, attr));
    REQUIRE(image.ok());
    return image->as_of;
  };
  columns.reset();
  CHECK(image_as_of(IndexOrder::kAevt, one) == imaged_at);
  // Commits that write c/many only, across a reopening: c/one's images
  // stay exact, and closing says so instead of leaving the next opening
  // the whole log since them to replay.
  StoreOptions no_builds = EagerColumns();
  no_builds.column_build_after_rows = uint64_t{1} << 40;
  columns = *Store::Open(column_dir.path(), no_builds);
  for (int i = 0; i < 20; ++i) {
    both({Add(E(entities[i]), "c/many", Value::Long(10 + i))});
  }
  columns.reset();
  for (const IndexOrder order : {IndexOrder::kAevt, IndexOrder::kAvet}) {
    CHECK(image_as_of(order, one) == last_tx);
    CHECK(image_as_of(order, many) == last_tx);
  }
  // Reopened from the moved images, the columns answer as RocksDB does,
  // and stay current when c/one is written again.
  columns = *Store::Open(column_dir.path(), no_builds);
  CHECK(columns->column_cache_counters().entries == 4);
  both({Add(E(entities[7]), "c/one", Value::Long(-3)),
        Retract(E(entities[8]), "c/one", Value::Long(8 % 7))});
  columns->WaitForColumns();
  for (const EntityId attr : {one, many}) {
    CHECK(ScanLatest(*columns, attr, entities[5]) ==
          ScanLatest(*plain, attr, entities[5]));
  }
  CHECK(columns->column_cache_counters().misses == 0);
  // A header whose basis is not the one expected is left alone.
  CHECK(internal::AdvanceColumnImage(column_dir.path(), IndexOrder::kAevt, one,
                                     imaged_at, last_tx + 1)
            .code() == absl::StatusCode::kFailedPrecondition);
}

TEST_CASE("a column image with a damaged byte is never read") {
  TempDir plain_dir, column_dir;
  auto plain = *Store::Open(plain_dir.path(), NoColumns());
  auto columns = *Store::Open(column_dir.path(), EagerColumns());
  auto both = [&](const std::vector<TxOp>& ops) {
    REQUIRE(plain->Transact(Tx(ops)).get().ok());
    REQUIRE(columns->Transact(Tx(ops)).get().ok());
  };
  both(SchemaOps());
  for (int i = 0; i < 40; ++i) {
    both({Add(E("x"), "c/one", Value::Long(i)),
          Add(E("x"), "c/many", Value::Long(i % 5))});
  }
  const Schema& schema = columns->Latest()->schema();
  const std::vector<EntityId> attrs = {schema.FindAttribute("c/one")->id,
                                       schema.FindAttribute("c/many")->id};
  for (const EntityId attr : attrs) ScanLatest(*columns, attr, 0);
  columns->WaitForColumns();
  REQUIRE(columns->column_cache_counters().entries == 4);
  columns.reset();

  // A byte of each image's last key (its value) flipped on disk, as a bad
  // sector or a stray write would: the header is intact and the file maps.
  std::vector<std::filesystem::path> images;
  for (const auto& f :
       std::filesystem::directory_iterator(column_dir.path() + "/columns")) {
    images.push_back(f.path());
    std::fstream file(f.path(),
                      std::ios::in | std::ios::out | std::ios::binary);
    file.seekg(-1, std::ios::end);
    const char c = static_cast<char>(file.get());
    file.seekp(-1, std::ios::end);
    file.put(static_cast<char>(c ^ 0x10));
  }
  REQUIRE(images.size() == 4);

  columns = *Store::Open(column_dir.path(), EagerColumns());
  // Whether or not the check has run yet, reads give the stored datoms.
  for (const EntityId attr : attrs) {
    CHECK(ScanLatest(*columns, attr, 0) == ScanLatest(*plain, attr, 0));
  }
  // The check found each damaged image, dropped its column and built it
  // again from the store, and wrote a good image.
  columns->WaitForColumns();
  CHECK(columns->column_cache_counters().entries == 4);
  CHECK(columns->column_cache_counters().misses == 4);
  for (const EntityId attr : attrs) {
    CHECK(ScanLatest(*columns, attr, 0) == ScanLatest(*plain, attr, 0));
  }
  columns.reset();
  StoreOptions no_builds = EagerColumns();
  no_builds.column_build_after_rows = uint64_t{1} << 40;
  columns = *Store::Open(column_dir.path(), no_builds);
  columns->WaitForColumns();
  CHECK(columns->column_cache_counters().entries == 4);
  for (const EntityId attr : attrs) {
    CHECK(ScanLatest(*columns, attr, 0) == ScanLatest(*plain, attr, 0));
  }
  CHECK(columns->column_cache_counters().hits > 0);
  CHECK(columns->column_cache_counters().misses == 0);
}

}  // namespace
}  // namespace mentat::storage
