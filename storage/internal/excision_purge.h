#ifndef MENTAT_STORAGE_INTERNAL_EXCISION_PURGE_H_
#define MENTAT_STORAGE_INTERNAL_EXCISION_PURGE_H_

#include "absl/status/status.h"
#include "internal/store_core.h"

namespace mentat::storage::internal {

// Flushes every family's memtable and compacts every family down to its
// last level, so that no file of the store keeps a deleted key's bytes
// (an excision's). Blocks for as long as that takes (the whole store is
// rewritten); writes and reads go on meanwhile. Unavailable when RocksDB
// fails or the store is closing (a compaction cancelled).
[[nodiscard]] absl::Status PurgeDeletedBytes(StoreCore* core);

}  // namespace mentat::storage::internal

#endif  // MENTAT_STORAGE_INTERNAL_EXCISION_PURGE_H_
