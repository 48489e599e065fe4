#ifndef MENTAT_STORAGE_INTERNAL_IMPORT_COMPACTION_H_
#define MENTAT_STORAGE_INTERNAL_IMPORT_COMPACTION_H_

#include <vector>

#include "absl/status/status.h"
#include "internal/store_core.h"
#include "rocksdb/db.h"

namespace mentat::storage::internal {

// True for the families whose chunk files overlap one another: every chunk
// of an import holds keys of every attribute's values (AVET) or of every
// value (VAET), and of their history. RocksDB places such files in L0
// once the levels below are taken, so after a long import they are what
// ImportCompaction merges. The entity families' files are split by
// partition, AEVT's by attribute (within an attribute, fresh entities
// follow the earlier chunks'), and the log's are in tx order: those lie
// beside or above everything ingested before and go to the last level,
// compressed, with no merge (FamiliesCrowdedInL0 still catches an import
// whose later chunks change earlier entities).
bool ChunksOverlap(Cf cf);

// Pauses automatic compactions of the data families while it lives.
// Compacting the overlapping chunk files chunk by chunk would rewrite the
// growing lower level once per chunk; the import instead merges them once
// at its end (CompactImportedFamilies). Ingestion does not stall on L0
// files while compactions are off. It also turns off RocksDB's check of
// the key order of compaction outputs (check_flush_compaction_key_order)
// for that merge: its inputs are files SstFileWriter wrote, which refuses
// keys out of order, and the check cost about 300 instructions a key, a
// sixth of the merge (callgrind, storage-bench import --scale xs).
// Transactor thread only; `core` must outlive it.
class CompactionPause {
 public:
  explicit CompactionPause(const StoreCore* core);
  ~CompactionPause();
  CompactionPause(const CompactionPause&) = delete;
  CompactionPause& operator=(const CompactionPause&) = delete;

 private:
  const StoreCore* core_;
  std::vector<rocksdb::ColumnFamilyHandle*> paused_;
};

// Merges every file of each family in `families` into sorted,
// non-overlapping files of the last level (one compaction per family,
// compressed as the family's last level is; `threads` families at once),
// so that the family leaves the import with no L0 file and takes writes
// at once. Families with no file are skipped. Call it with automatic
// compactions paused (nothing else compacts the family meanwhile). Blocks
// until every family is done; costs about one read and one write of the
// families' data. Errors: as ImportFailure (a full disk names the store's
// directory).
[[nodiscard]] absl::Status CompactImportedFamilies(
    const StoreCore* core, const std::vector<Cf>& families, int threads);

// The data families the import left in a state that may stall writes: with at
// least `level0_file_num_compaction_trigger` files in L0 (automatic
// compactions would take them one trigger's worth at a time, while writes
// slow down).
std::vector<Cf> FamiliesCrowdedInL0(const StoreCore* core);

}  // namespace mentat::storage::internal

#endif  // MENTAT_STORAGE_INTERNAL_IMPORT_COMPACTION_H_
