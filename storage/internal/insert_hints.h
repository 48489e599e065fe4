#ifndef MENTAT_STORAGE_INTERNAL_INSERT_HINTS_H_
#define MENTAT_STORAGE_INTERNAL_INSERT_HINTS_H_

#include <rocksdb/slice_transform.h>

#include <cstddef>

namespace mentat::storage::internal {

// Memtable insert hints, on for the writes that gain from them.
//
// Given this as ColumnFamilyOptions::memtable_insert_with_hint_prefix_
// extractor, RocksDB's memtable remembers for each 8-byte key prefix where
// its last insert went, and starts the next insert of that prefix there.
// A transaction of many datoms of one entity or attribute (a bulk load
// through Transact) inserts runs of keys of one prefix: hints make it 12%
// faster. Small transactions (a datom or two from each of many clients)
// insert keys far from their prefix's last: a hint then costs a hash map
// lookup and a search started in the wrong place, 16% of the transactor's
// time at 64 writers. So keys are in the transform's domain only while a
// HintedInserts scope that asked for hints lives on the writing thread.
//
// Thread safety: the scope is per thread. RocksDB may insert one thread's
// batch on another (a write group's leader): that write then goes with
// or without hints by the other thread's scope, which costs time, never
// correctness (a hint is only where a search starts).
class InsertHintTransform final : public rocksdb::SliceTransform {
 public:
  static constexpr size_t kPrefixBytes = 8;

  const char* Name() const override { return "mentat.InsertHint8"; }
  rocksdb::Slice Transform(const rocksdb::Slice& key) const override {
    return rocksdb::Slice(key.data(), kPrefixBytes);
  }
  bool InDomain(const rocksdb::Slice& key) const override;
};

// Turns memtable insert hints on (`on`) or off for this thread's writes
// while it lives; they are off outside any scope.
class HintedInserts {
 public:
  explicit HintedInserts(bool on);
  ~HintedInserts();
  HintedInserts(const HintedInserts&) = delete;
  HintedInserts& operator=(const HintedInserts&) = delete;

  // Whether a write of `entries` batch entries for `transactions`
  // transactions has runs enough to gain from hints.
  static bool Gains(size_t entries, size_t transactions);

 private:
  const bool was_;
};

}  // namespace mentat::storage::internal

#endif  // MENTAT_STORAGE_INTERNAL_INSERT_HINTS_H_
