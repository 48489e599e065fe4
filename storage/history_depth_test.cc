// Current reads must not slow down with history: an entity whose attribute
// changed 10,000 times reads like one that never changed. Timing is the
// benchmark's job; here we count the work RocksDB does for the read
// (internal keys and tombstones stepped over), which is deterministic.

#include <doctest/doctest.h>

#include "mentat/storage/store.h"
#include "rocksdb/perf_context.h"
#include "rocksdb/perf_level.h"
#include "test_support.h"

namespace mentat::storage {
namespace {

using testing::Add;
using testing::Attr;
using testing::E;
using testing::Retract;
using testing::RetractEntity;
using testing::TempDir;
using testing::Tx;

struct ReadCost {
  uint64_t keys_skipped = 0;
  uint64_t tombstones_skipped = 0;
  uint64_t nexts = 0;
  size_t datoms = 0;
};

ReadCost ReadEntity(Store& store, EntityId e) {
  auto db = store.Latest();
  DbView view = db->View(Basis::Current());
  std::string prefix;
  EavtKey::EncodePrefix(e, &prefix);
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kEnableCount);
  rocksdb::get_perf_context()->Reset();
  auto datoms = view.Datoms(IndexOrder::kEavt, prefix);
  ReadCost cost;
  cost.keys_skipped = rocksdb::get_perf_context()->internal_key_skipped_count;
  cost.tombstones_skipped =
      rocksdb::get_perf_context()->internal_delete_skipped_count;
  cost.nexts = rocksdb::get_perf_context()->internal_recent_skipped_count;
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kDisable);
  REQUIRE(datoms.ok());
  cost.datoms = datoms->size();
  return cost;
}

TEST_CASE("10,000 changes leave an entity's current read as cheap as new") {
  TempDir dir;
  StoreOptions options;
  options.sync_commits = false;  // 10,000 fsyncs would only slow the test
  // What is measured is the RocksDB layout (SingleDelete), not the entity
  // cache in front of it (record_cache_test.cc covers busy entities).
  options.entity_cache_bytes = 0;
  auto store = *Store::Open(dir.path(), options);
  auto schema = Attr("h/n", "db.type/long");
  auto name = Attr("h/name", "db.type/string");
  schema.insert(schema.end(), name.begin(), name.end());
  REQUIRE(store->Transact(Tx(schema)).get().ok());
  auto r = store
               ->Transact(Tx({Add(E("busy"), "h/n", Value::Long(0)),
                              Add(E("busy"), "h/name", Value::String("b")),
                              Add(E("quiet"), "h/n", Value::Long(0)),
                              Add(E("quiet"), "h/name", Value::String("q"))}))
               .get();
  REQUIRE(r.ok());
  const EntityId busy = r->tempids["busy"], quiet = r->tempids["quiet"];
  std::vector<std::future<absl::StatusOr<TxReport>>> pending;
  for (int i = 1; i <= 10000; ++i) {
    pending.push_back(
        store->Transact(Tx({Add(E(busy), "h/n", Value::Long(i))})));
  }
  for (auto& f : pending) REQUIRE(f.get().ok());
  // Each change deletes the old value's key and puts the new one; until a
  // flush cancels the pairs, a commit's scan of the entity steps over all
  // of them. The transactor flushes when a scan steps over more than
  // CommitBatch::kClogSkips: without that, the 10,000 commits took 30 s
  // (the last ones 6 ms each) instead of about one.
  const uint64_t flushes = store->transactor_counters().clog_flushes;
  CHECK(flushes >= 1);
  // Memtables flush as they fill in normal operation; flush now so the
  // test sees the steady state.
  REQUIRE(store->Flush().ok());

  ReadCost busy_cost = ReadEntity(*store, busy);
  ReadCost quiet_cost = ReadEntity(*store, quiet);
  CHECK(busy_cost.datoms == 2);
  CHECK(quiet_cost.datoms == 2);
  MESSAGE("busy entity: ", busy_cost.keys_skipped, " keys and ",
          busy_cost.tombstones_skipped,
          " tombstones skipped; quiet entity: ", quiet_cost.keys_skipped,
          " and ", quiet_cost.tombstones_skipped);
  // Each of those flushes can leave one SingleDelete whose Put is in an
  // older file, until compaction brings the two together: the cost grows
  // with the flushes (a handful), not with the 10,000 changes.
  CHECK(busy_cost.tombstones_skipped <=
        quiet_cost.tombstones_skipped + flushes + 2);
  CHECK(busy_cost.keys_skipped <= quiet_cost.keys_skipped + 2 * flushes + 2);

  // The history is all there for as_of reads.
  auto db = store->Latest();
  CHECK(testing::ValuesOf(db->View(Basis::AsOf(r->tx)), busy, "h/n") ==
        std::vector{Value::Long(0)});
  std::string prefix;
  EavtKey::EncodePrefix(busy, &prefix);
  auto history = db->View(Basis::History()).Datoms(IndexOrder::kEavt, prefix);
  REQUIRE(history.ok());
  CHECK(history->size() == 1 + 2 * 10000 + 1);  // h/n changes, plus h/name
}

TEST_CASE("scans over a busy entity's piled-up tombstones stay exact") {
  // Commits queued together form large groups, whose scans of the busy
  // entity step over more than CommitBatch::kClogSkips deleted keys: they
  // go on unbounded, and later scans of the group read the kept rows.
  // Whatever path a scan takes, the replaced values, a unique value moved
  // between entities and the entity retracted at the end must be exact.
  TempDir dir;
  StoreOptions options;
  options.sync_commits = false;
  options.entity_cache_bytes = 0;
  auto store = *Store::Open(dir.path(), options);
  auto schema = Attr("h/n", "db.type/long");
  for (auto& op : Attr("h/tag", "db.type/long", /*many=*/true)) {
    schema.push_back(op);
  }
  for (auto& op :
       Attr("h/key", "db.type/string", false, "db.unique/identity")) {
    schema.push_back(op);
  }
  REQUIRE(store->Transact(Tx(schema)).get().ok());
  auto r = store
               ->Transact(Tx({Add(E("a"), "h/n", Value::Long(0)),
                              Add(E("b"), "h/n", Value::Long(0))}))
               .get();
  REQUIRE(r.ok());
  const EntityId a = r->tempids["a"], b = r->tempids["b"];
  constexpr int kChanges = 3000;
  std::vector<std::future<absl::StatusOr<TxReport>>> pending;
  for (int i = 1; i <= kChanges; ++i) {
    std::vector<TxOp> ops = {Add(E(a), "h/n", Value::Long(i)),
                             Add(E(a), "h/tag", Value::Long(i))};
    if (i % 2 == 0) ops.push_back(Add(E(b), "h/n", Value::Long(-i)));
    // Every tenth tag stays; the others are retracted by the next change.
    if (i > 1 && (i - 1) % 10 != 0) {
      ops.push_back(Retract(E(a), "h/tag", Value::Long(i - 1)));
    }
    // The identity moves between a and b: the unique check scans AVET.
    ops.push_back(Add(E(i % 2 == 0 ? b : a), "h/key",
                      Value::String("k" + std::to_string(i % 7))));
    pending.push_back(store->Transact(Tx(std::move(ops))));
  }
  for (auto& f : pending) REQUIRE(f.get().ok());
  // The scans did clog (else this test would prove nothing of that path).
  CHECK(store->transactor_counters().clog_flushes >= 1);
  auto db = store->Latest();
  DbView now = db->View(Basis::Current());
  CHECK(testing::ValuesOf(now, a, "h/n") == std::vector{Value::Long(kChanges)});
  CHECK(testing::ValuesOf(now, b, "h/n") ==
        std::vector{Value::Long(-kChanges)});
  std::vector<Value> tags;
  for (int i = 1; i <= kChanges; ++i) {
    if (i % 10 == 0 || i == kChanges) tags.push_back(Value::Long(i));
  }
  CHECK(testing::ValuesOf(now, a, "h/tag") == tags);
  CHECK(testing::ValuesOf(now, b, "h/key") ==
        std::vector{Value::String("k" + std::to_string(kChanges % 7))});
  CHECK(testing::ValuesOf(now, a, "h/key") ==
        std::vector{Value::String("k" + std::to_string((kChanges - 1) % 7))});

  // Retracting the busy entity scans all of it, tombstones and all.
  REQUIRE(store->Transact(Tx({RetractEntity(E(a))})).get().ok());
  db = store->Latest();
  now = db->View(Basis::Current());
  CHECK(testing::ValuesOf(now, a, "h/n").empty());
  CHECK(testing::ValuesOf(now, a, "h/tag").empty());
  CHECK(testing::ValuesOf(now, b, "h/n") ==
        std::vector{Value::Long(-kChanges)});
}

}  // namespace
}  // namespace mentat::storage
