// After an excision: rewriting the files that still hold what it removed.
// The excision's deletes hide the datoms from every read at once, but
// RocksDB keeps the deleted bytes in its memtables, write-ahead log and SST
// files until compaction drops them.

#include "internal/excision_purge.h"

#include <algorithm>

#include "mentat/base/str_cat.h"
#include "mentat/storage/store.h"

namespace mentat::storage::internal {

absl::Status PurgeDeletedBytes(StoreCore* core) {
  const uint64_t seen = core->unpurged_excisions.load();
  std::vector<rocksdb::ColumnFamilyHandle*> families;
  for (int i = 0; i < static_cast<int>(Cf::kCount); ++i) {
    families.push_back(core->cf(static_cast<Cf>(i)));
  }
  // The flush moves the memtables to files (so the next compaction sees
  // them), after which RocksDB deletes the write-ahead logs they held.
  rocksdb::FlushOptions flush;
  flush.allow_write_stall = true;
  rocksdb::Status s = core->db->Flush(flush, families);
  rocksdb::CompactRangeOptions options;
  // Every level, the last included: a delete drops its key's older
  // versions only in a compaction that reaches them.
  options.bottommost_level_compaction =
      rocksdb::BottommostLevelCompaction::kForce;
  options.exclusive_manual_compaction = false;
  for (size_t i = 0; s.ok() && i < families.size(); ++i) {
    s = core->db->CompactRange(options, families[i], nullptr, nullptr);
  }
  if (!s.ok()) {
    return absl::UnavailableError(
        StrCat("purging excised bytes (flush and compaction): ", s.ToString()));
  }
  // Two purges may overlap (the transactor's and a checkpoint's): each
  // takes away at most what is left.
  uint64_t left = core->unpurged_excisions.load();
  while (!core->unpurged_excisions.compare_exchange_weak(
      left, left - std::min(left, seen))) {
  }
  return absl::OkStatus();
}

}  // namespace mentat::storage::internal

namespace mentat::storage {

absl::Status Store::PurgeExcised() {
  return internal::PurgeDeletedBytes(core_.get());
}

}  // namespace mentat::storage
