// KeyOrderedBatch: a commit group's batch sorted by column family and key
// before its write, entries of one key in their order, and batches it
// cannot reorder left alone.

#include "internal/key_ordered_batch.h"

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "rocksdb/db.h"
#include "test_support.h"

namespace mentat::storage::internal {
namespace {

using testing::TempDir;

// A RocksDB with the default family and two more, "a" and "b".
struct ThreeFamilies {
  TempDir dir;
  std::unique_ptr<rocksdb::DB> db;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;

  ThreeFamilies() {
    rocksdb::DBOptions options;
    options.create_if_missing = true;
    options.create_missing_column_families = true;
    std::vector<rocksdb::ColumnFamilyDescriptor> families = {
        {rocksdb::kDefaultColumnFamilyName, {}}, {"a", {}}, {"b", {}}};
    rocksdb::DB* raw = nullptr;
    REQUIRE(
        rocksdb::DB::Open(options, dir.path(), families, &handles, &raw).ok());
    db.reset(raw);
  }
  ~ThreeFamilies() {
    for (auto* h : handles)
      db->DestroyColumnFamilyHandle(h).PermitUncheckedError();
  }
};

// The batch's entries as "family-id op key=value" lines, in order.
std::vector<std::string> Entries(const rocksdb::WriteBatch& batch) {
  struct Lines final : rocksdb::WriteBatch::Handler {
    std::vector<std::string> out;
    rocksdb::Status PutCF(uint32_t cf, const rocksdb::Slice& k,
                          const rocksdb::Slice& v) override {
      out.push_back(std::to_string(cf) + " put " + k.ToString() + "=" +
                    v.ToString());
      return rocksdb::Status::OK();
    }
    rocksdb::Status DeleteCF(uint32_t cf, const rocksdb::Slice& k) override {
      out.push_back(std::to_string(cf) + " delete " + k.ToString());
      return rocksdb::Status::OK();
    }
    rocksdb::Status SingleDeleteCF(uint32_t cf,
                                   const rocksdb::Slice& k) override {
      out.push_back(std::to_string(cf) + " single-delete " + k.ToString());
      return rocksdb::Status::OK();
    }
  } lines;
  REQUIRE(batch.Iterate(&lines).ok());
  return lines.out;
}

TEST_CASE(
    "key ordered batch: sorted by family then key, one key's entries "
    "in their order") {
  ThreeFamilies f;
  auto* def = f.handles[0];
  auto* a = f.handles[1];
  auto* b = f.handles[2];
  rocksdb::WriteBatch batch;
  // Two small transactions' writes as a commit group interleaves them.
  REQUIRE(batch.Put(b, "k7", "tx1").ok());
  REQUIRE(batch.Put(a, "k5", "tx1").ok());
  REQUIRE(batch.Put(a, "k1", "tx1").ok());
  REQUIRE(batch.Put(def, "z", "meta").ok());
  // The second asserts, retracts and asserts again one key of the first.
  REQUIRE(batch.SingleDelete(a, "k5").ok());
  REQUIRE(batch.Put(b, "k2", "tx2").ok());
  REQUIRE(batch.Put(a, "k5", "tx2").ok());
  REQUIRE(batch.Delete(a, "k3").ok());

  rocksdb::WriteBatch ordered;
  REQUIRE(KeyOrderedBatch(batch, f.handles, &ordered));
  const std::vector<std::string> want = {
      std::to_string(def->GetID()) + " put z=meta",
      std::to_string(a->GetID()) + " put k1=tx1",
      std::to_string(a->GetID()) + " delete k3",
      std::to_string(a->GetID()) + " put k5=tx1",
      std::to_string(a->GetID()) + " single-delete k5",
      std::to_string(a->GetID()) + " put k5=tx2",
      std::to_string(b->GetID()) + " put k2=tx2",
      std::to_string(b->GetID()) + " put k7=tx1",
  };
  CHECK(Entries(ordered) == want);
  CHECK(ordered.Count() == batch.Count());

  // Written, it is the same commit as the batch: the last entry of a key
  // wins.
  REQUIRE(f.db->Write(rocksdb::WriteOptions(), &ordered).ok());
  std::string v;
  REQUIRE(f.db->Get(rocksdb::ReadOptions(), a, "k5", &v).ok());
  CHECK(v == "tx2");
  CHECK(f.db->Get(rocksdb::ReadOptions(), a, "k3", &v).IsNotFound());

  SUBCASE("the output batch is cleared first") {
    rocksdb::WriteBatch one;
    REQUIRE(one.Put(b, "only", "x").ok());
    REQUIRE(KeyOrderedBatch(one, f.handles, &ordered));
    CHECK(Entries(ordered) ==
          std::vector<std::string>{std::to_string(b->GetID()) + " put only=x"});
  }
}

TEST_CASE("key ordered batch: entries it cannot reorder refuse the copy") {
  ThreeFamilies f;
  auto* a = f.handles[1];
  rocksdb::WriteBatch batch;
  REQUIRE(batch.Put(a, "k2", "v").ok());
  rocksdb::WriteBatch ordered;
  SUBCASE("a range deletion") {
    REQUIRE(batch.DeleteRange(a, "k0", "k9").ok());
    CHECK_FALSE(KeyOrderedBatch(batch, f.handles, &ordered));
  }
  SUBCASE("a merge, into the default family too") {
    REQUIRE(batch.Merge(f.handles[0], "k1", "v").ok());
    CHECK_FALSE(KeyOrderedBatch(batch, f.handles, &ordered));
  }
  SUBCASE("log data") {
    REQUIRE(batch.PutLogData("note").ok());
    CHECK_FALSE(KeyOrderedBatch(batch, f.handles, &ordered));
  }
  SUBCASE("a family it was not given") {
    CHECK_FALSE(KeyOrderedBatch(batch, {f.handles[0], f.handles[2]}, &ordered));
  }
}

}  // namespace
}  // namespace mentat::storage::internal
