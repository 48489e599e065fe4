#ifndef MENTAT_STORAGE_CACHE_COUNTERS_H_
#define MENTAT_STORAGE_CACHE_COUNTERS_H_

#include <cstdint>

namespace mentat::storage {

// What one of a store's caches did since the store opened, and what it
// holds now. All zero when the cache is off.
struct CacheCounters {
  // Reads answered by the cache.
  uint64_t hits = 0;
  // Reads that went to RocksDB and filled the cache (record caches: records
  // read; column cache: columns built).
  uint64_t misses = 0;
  uint64_t bytes = 0;
  // Records (record caches) or columns (column cache) held.
  uint64_t entries = 0;
  // Column cache only: deltas folded into new bases.
  uint64_t folds = 0;
  // Column cache only: columns refused because each would take more than
  // half the cache (not tried again while the store is open).
  uint64_t refused = 0;
};

}  // namespace mentat::storage

#endif  // MENTAT_STORAGE_CACHE_COUNTERS_H_
