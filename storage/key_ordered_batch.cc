#include "internal/key_ordered_batch.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace mentat::storage::internal {
namespace {

enum class Op : uint8_t { kPut, kDelete, kSingleDelete };

struct Entry {
  uint32_t cf;
  Op op;
  rocksdb::Slice key;
  rocksdb::Slice value;
};

// Collects the entries; the slices point into the batch being iterated.
class Collector final : public rocksdb::WriteBatch::Handler {
 public:
  std::vector<Entry> entries;
  bool unordered = false;

  rocksdb::Status PutCF(uint32_t cf, const rocksdb::Slice& key,
                        const rocksdb::Slice& value) override {
    entries.push_back(Entry{cf, Op::kPut, key, value});
    return rocksdb::Status::OK();
  }
  rocksdb::Status DeleteCF(uint32_t cf, const rocksdb::Slice& key) override {
    entries.push_back(Entry{cf, Op::kDelete, key, rocksdb::Slice()});
    return rocksdb::Status::OK();
  }
  rocksdb::Status SingleDeleteCF(uint32_t cf,
                                 const rocksdb::Slice& key) override {
    entries.push_back(Entry{cf, Op::kSingleDelete, key, rocksdb::Slice()});
    return rocksdb::Status::OK();
  }
  // Every other entry stops the copy (Handler's defaults fail the rest):
  // its place in the batch is kept by writing the batch unsorted. A merge
  // into the default family would pass Handler's default unseen.
  rocksdb::Status MergeCF(uint32_t, const rocksdb::Slice&,
                          const rocksdb::Slice&) override {
    return rocksdb::Status::NotSupported("merge");
  }
  void LogData(const rocksdb::Slice&) override { unordered = true; }
};

}  // namespace

bool KeyOrderedBatch(const rocksdb::WriteBatch& batch,
                     const std::vector<rocksdb::ColumnFamilyHandle*>& families,
                     rocksdb::WriteBatch* ordered) {
  std::vector<rocksdb::ColumnFamilyHandle*> by_id;
  for (rocksdb::ColumnFamilyHandle* f : families) {
    const uint32_t id = f->GetID();
    if (id >= by_id.size()) by_id.resize(id + 1, nullptr);
    by_id[id] = f;
  }
  Collector collector;
  collector.entries.reserve(batch.Count());
  if (!batch.Iterate(&collector).ok() || collector.unordered) return false;
  std::vector<Entry>& entries = collector.entries;
  std::stable_sort(entries.begin(), entries.end(),
                   [](const Entry& a, const Entry& b) {
                     if (a.cf != b.cf) return a.cf < b.cf;
                     return a.key.compare(b.key) < 0;
                   });
  ordered->Clear();
  for (const Entry& e : entries) {
    rocksdb::ColumnFamilyHandle* f =
        e.cf < by_id.size() ? by_id[e.cf] : nullptr;
    if (f == nullptr) return false;
    rocksdb::Status s;
    switch (e.op) {
      case Op::kPut:
        s = ordered->Put(f, e.key, e.value);
        break;
      case Op::kDelete:
        s = ordered->Delete(f, e.key);
        break;
      case Op::kSingleDelete:
        s = ordered->SingleDelete(f, e.key);
        break;
    }
    if (!s.ok()) return false;
  }
  return true;
}

}  // namespace mentat::storage::internal
