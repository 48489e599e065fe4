// Column images of a store (internal/column_image.h): a reopened store
// finds its columns in their images at once, and an image that is stale,
// outside the store or damaged is never read; a bulk import builds the
// columns its first reads will want. Every column read is compared with
// the same reads of a store without columns.

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "column_test_support.h"
#include "internal/column_image.h"
#include "mentat/base/str_cat.h"
#include "mentat/storage/store.h"
#include "rocksdb/file_checksum.h"
#include "test_support.h"

namespace mentat::storage {
namespace {

using testing::Add;
using testing::E;
using testing::EagerColumns;
using testing::NoColumns;
using testing::Retract;
using testing::Scan;
using testing::SchemaOps;
using testing::TempDir;
using testing::Tx;

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
