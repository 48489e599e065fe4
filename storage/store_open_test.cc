// Opening a store with table files RocksDB has not opened yet
// (StoreOptions::max_open_table_files): the open reads few of them, and
// every read still finds every datom, in the files opened later too.

#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "internal/presized_log.h"
#include "internal/store_core.h"
#include "internal/wal_retire.h"
#include "mentat/storage/store.h"
#include "mentat/storage/tx_log.h"
#include "rocksdb/statistics.h"
#include "rocksdb/table_properties.h"
#include "test_support.h"

namespace mentat::storage {
namespace {

using testing::Add;
using testing::AddRef;
using testing::Attr;
using testing::Concat;
using testing::E;
using testing::MustTransact;
using testing::TempDir;
using testing::ValuesOf;

// Reads through RocksDB only: no cache answers in its place.
StoreOptions Uncached() {
  StoreOptions o;
  o.entity_cache_bytes = 0;
  o.value_cache_bytes = 0;
  o.column_cache_bytes = 0;
  return o;
}

// Write-ahead log files in `dir`, alive or not yet deleted.
size_t WalFiles(const std::string& dir) {
  size_t n = 0;
  for (const auto& f : std::filesystem::directory_iterator(dir)) {
    if (internal::IsWriteAheadLogName(f.path().filename().string())) ++n;
  }
  return n;
}

// Table files of `dir` this process holds open.
int OpenSstFiles(const std::string& dir) {
  int n = 0;
  const std::string prefix = std::filesystem::canonical(dir).string() + "/";
  for (const auto& f : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    const std::filesystem::path target =
        std::filesystem::read_symlink(f.path(), ec);
    if (ec) continue;
    const std::string t = target.string();
    if (t.rfind(prefix, 0) == 0 && target.extension() == ".sst") ++n;
  }
  return n;
}

int SstFiles(const std::string& dir) {
  int n = 0;
  for (const auto& f : std::filesystem::directory_iterator(dir)) {
    if (f.path().extension() == ".sst") ++n;
  }
  return n;
}

// A store whose every family has three table files (three flushes, under
// RocksDB's trigger of four for a compaction): schema, current and
// history keys, refs, fulltext postings, the log and meta.
struct Written {
  std::map<std::string, EntityId> ids;  // name -> entity
  std::map<std::string, int64_t> size;  // name -> current size
  EntityId first_tx = 0;                // the first data transaction
};

Written WriteInThreeFlushes(const std::string& dir) {
  Written w;
  auto store = *Store::Open(dir, Uncached());
  MustTransact(
      *store,
      Concat({Attr("o/name", "db.type/string", false, "db.unique/identity"),
              Attr("o/size", "db.type/long"),
              Attr("o/parent", "db.type/ref"),
              {Add(E("attr-o/name"), "db/fulltext", Value::Boolean(true))}}));
  for (int round = 0; round < 3; ++round) {
    std::vector<TxOp> ops;
    for (int i = 0; i < 50; ++i) {
      const std::string name = "n-" + std::to_string(round * 50 + i);
      const std::string tempid = "t" + std::to_string(i);
      ops.push_back(Add(E(tempid.c_str()), "o/name", Value::String(name)));
      ops.push_back(Add(E(tempid.c_str()), "o/size", Value::Long(i)));
      if (round > 0) {
        ops.push_back(AddRef(E(tempid.c_str()), "o/parent",
                             E(w.ids["n-" + std::to_string(i)])));
      }
      w.size[name] = i;
    }
    // A change of every earlier entity: history keys in this flush too.
    for (auto& [name, size] : w.size) {
      if (w.ids.count(name) == 0) continue;
      size += 1000;
      ops.push_back(Add(E(w.ids[name]), "o/size", Value::Long(size)));
    }
    const TxReport report = MustTransact(*store, ops);
    if (round == 0) w.first_tx = report.tx;
    for (int i = 0; i < 50; ++i) {
      w.ids["n-" + std::to_string(round * 50 + i)] =
          report.tempids.at("t" + std::to_string(i));
    }
    REQUIRE(store->Flush().ok());
  }
  return w;
}

// Every entity's size through EAVT, its id through AVET, its past size
// through history: each as written.
void CheckReads(const Store& store, const Written& w) {
  std::shared_ptr<const Db> db = store.Latest();
  const DbView now = db->View(Basis::Current());
  const EntityId name_attr = db->schema().FindAttribute("o/name")->id;
  for (const auto& [name, e] : w.ids) {
    const std::vector<Value> size = ValuesOf(now, e, "o/size");
    REQUIRE(size.size() == 1);
    CHECK(size[0] == Value::Long(w.size.at(name)));
    auto found = now.LookupUnique(name_attr, Value::String(name));
    REQUIRE(found.ok());
    CHECK(*found == std::optional<EntityId>(e));
  }
  // As of the first data transaction, its entities had their first sizes
  // and were found by name (current and history families); none was
  // anyone's parent yet, as each is of two later ones now (VAET).
  const DbView then = db->View(Basis::AsOf(w.first_tx));
  const EntityId parent_attr = db->schema().FindAttribute("o/parent")->id;
  for (int i = 0; i < 50; ++i) {
    const std::string name = "n-" + std::to_string(i);
    const EntityId e = w.ids.at(name);
    const std::vector<Value> size = ValuesOf(then, e, "o/size");
    REQUIRE(size.size() == 1);
    CHECK(size[0] == Value::Long(i));
    auto found = then.LookupUnique(name_attr, Value::String(name));
    REQUIRE(found.ok());
    CHECK(*found == std::optional<EntityId>(e));
    std::string prefix;
    VaetKey::EncodePrefix(e, parent_attr, &prefix);
    auto children = now.Datoms(IndexOrder::kVaet, prefix);
    REQUIRE(children.ok());
    CHECK(children->size() == 2);
    auto before = then.Datoms(IndexOrder::kVaet, prefix);
    REQUIRE(before.ok());
    CHECK(before->empty());
  }
}

TEST_CASE("a store opens few of its table files and reads all of them") {
  TempDir dir;
  const Written w = WriteInThreeFlushes(dir.path());
  const int files = SstFiles(dir.path());
  REQUIRE(files >= 24);

  SUBCASE("by default, the open leaves most files to the reads") {
    auto store = *Store::Open(dir.path(), Uncached());
    const uint64_t at_open = store->RocksDbTicker(rocksdb::NO_FILE_OPENS);
    CHECK(at_open < static_cast<uint64_t>(files));
    CheckReads(*store, w);
    CHECK(store->RocksDbTicker(rocksdb::NO_FILE_OPENS) > at_open);
    // Once opened, a file stays open: reading again opens none.
    const uint64_t after_reads = store->RocksDbTicker(rocksdb::NO_FILE_OPENS);
    CheckReads(*store, w);
    CHECK(store->RocksDbTicker(rocksdb::NO_FILE_OPENS) == after_reads);
  }
  SUBCASE("with -1, the open opens every file") {
    StoreOptions o = Uncached();
    o.max_open_table_files = -1;
    auto store = *Store::Open(dir.path(), o);
    const uint64_t at_open = store->RocksDbTicker(rocksdb::NO_FILE_OPENS);
    CHECK(at_open >= static_cast<uint64_t>(files));
    CheckReads(*store, w);
    CHECK(store->RocksDbTicker(rocksdb::NO_FILE_OPENS) == at_open);
  }
  SUBCASE("with fewer open files allowed than the store has") {
    // RocksDB's least, 20, keeps 10 table files open: the others are
    // closed as reads go on, and opened again when read again. (In
    // RocksDB's 64 shards of one file each, up to 64 stayed open, and
    // whether a read opened a file again hung on its number's shard.)
    StoreOptions o = Uncached();
    o.max_open_table_files = 20;
    auto store = *Store::Open(dir.path(), o);
    CheckReads(*store, w);
    CHECK(OpenSstFiles(dir.path()) <= 10);
    const uint64_t after_reads = store->RocksDbTicker(rocksdb::NO_FILE_OPENS);
    CheckReads(*store, w);
    CHECK(store->RocksDbTicker(rocksdb::NO_FILE_OPENS) > after_reads);
    CHECK(OpenSstFiles(dir.path()) <= 10);
  }
  // Writes after such an open land beside the unopened files and are
  // read with them.
  auto store = *Store::Open(dir.path(), Uncached());
  Written more = w;
  const EntityId e = w.ids.at("n-7");
  MustTransact(*store, {Add(E(e), "o/size", Value::Long(-7))});
  more.size["n-7"] = -7;
  CheckReads(*store, more);
}

TEST_CASE("opens without writes do not pile up write-ahead logs") {
  TempDir dir;
  const Written w = WriteInThreeFlushes(dir.path());
  // Each open makes a log; one that nothing was written to stays alive
  // until a memtable switch. Twelve opens would leave thirteen.
  for (int open = 0; open < 12; ++open) {
    auto store = *Store::Open(dir.path(), Uncached());
    CHECK(WalFiles(dir.path()) <= internal::kMaxLiveWals);
    if (open % 4 == 3) CheckReads(*store, w);
  }
  CHECK(WalFiles(dir.path()) <= internal::kMaxLiveWals);

  // A commit that is in a log only (never flushed) survives the opens
  // after it, the one that retires the older logs included.
  Written more = w;
  {
    auto store = *Store::Open(dir.path(), Uncached());
    MustTransact(*store, {Add(E(w.ids.at("n-3")), "o/size", Value::Long(-3))});
    more.size["n-3"] = -3;
  }
  for (int open = 0; open < 6; ++open) {
    auto store = *Store::Open(dir.path(), Uncached());
    CHECK(WalFiles(dir.path()) <= internal::kMaxLiveWals);
    CheckReads(*store, more);
  }
}

TEST_CASE("the log's last level is kept with ZSTD, the indexes' with LZ4") {
  TempDir dir;
  const Written w = WriteInThreeFlushes(dir.path());
  auto store = *Store::Open(dir.path(), Uncached());
  REQUIRE(store->CompactAll().ok());
  const internal::StoreCore& core = store->Latest()->core();
  auto compressions = [&](internal::Cf cf) {
    rocksdb::TablePropertiesCollection props;
    REQUIRE(core.db->GetPropertiesOfAllTables(core.cf(cf), &props).ok());
    std::map<std::string, int> names;
    for (const auto& [file, p] : props) names[p->compression_name]++;
    return names;
  };
  const std::map<std::string, int> log = compressions(internal::Cf::kLog);
  REQUIRE(!log.empty());
  CHECK(log.size() == 1);
  CHECK(log.count("ZSTD") == 1);
  for (internal::Cf cf :
       {internal::Cf::kEavt, internal::Cf::kAvet, internal::Cf::kEavtHist}) {
    const std::map<std::string, int> index = compressions(cf);
    REQUIRE(!index.empty());
    CHECK(index.count("LZ4") == 1);
    CHECK(index.count("ZSTD") == 0);
  }
  // Read back through the log and the indexes.
  CheckReads(*store, w);
  int transactions = 0, datoms = 0;
  REQUIRE(ReadTxLog(*store->Latest(), w.first_tx, 0,
                    [&](EntityId, const std::vector<Datom>& d) {
                      ++transactions;
                      datoms += static_cast<int>(d.size());
                      return true;
                    })
              .ok());
  CHECK(transactions == 3);
  // Three rounds of 50 names and sizes, 100 parents, 50 + 100 size
  // changes (each a retraction and an assertion), three instants.
  CHECK(datoms == 3 * 100 + 100 + 2 * 150 + 3);
}

}  // namespace
}  // namespace mentat::storage
