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
  CHECK(busy_cost.tombstones_skipped <= quiet_cost.tombstones_skipped + 2);
  CHECK(busy_cost.keys_skipped <= quiet_cost.keys_skipped + 2);

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

}  // namespace
}  // namespace mentat::storage
