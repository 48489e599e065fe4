#ifndef MENTAT_STORAGE_INTERNAL_CACHE_WARMER_H_
#define MENTAT_STORAGE_INTERNAL_CACHE_WARMER_H_

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "mentat/storage/db.h"

namespace mentat::storage::internal {

class RecordCache;

// Fills the entity cache (internal/record_cache.h) in the background after
// the store opens (StoreOptions::warm_entity_cache). A freshly started
// server otherwise pays a RocksDB seek, and often a block read and its
// decompression, for the first read of every entity: a served pull of a
// random issue at scale s cost about 12 µs more in its first minutes than
// once its entities were cached.
//
// It reads the current EAVT family in key order and keeps each entity's
// record (its current datoms, as a reader of the latest basis reads them)
// unless the cache has one already. Every kChunkEntities entities it takes
// the store's latest state again, so its records are never older than a
// moment (and the cache refuses any that a commit since made stale). It
// stops at the last entity, once the cache holds `target_bytes`, when a
// shard of the cache has no room left, or on Stop. Its reads do not fill
// RocksDB's block cache: the records are what later reads use.
//
// The thread runs at SCHED_IDLE: it takes only CPU time nothing else
// wants, so it never delays a query or a commit for its own sake.
//
// Thread safety: Stop and Wait may be called from any thread.
class CacheWarmer {
 public:
  // Entities read between two states of the store.
  static constexpr size_t kChunkEntities = 1024;

  // `latest` returns the store's latest state; `cache` must outlive the
  // warmer. The thread starts at once.
  CacheWarmer(std::function<std::shared_ptr<const Db>()> latest,
              RecordCache* cache, size_t target_bytes);
  ~CacheWarmer();
  CacheWarmer(const CacheWarmer&) = delete;
  CacheWarmer& operator=(const CacheWarmer&) = delete;

  // Ends the walk early and joins the thread. Idempotent.
  void Stop();
  // Blocks until the walk has ended (done or stopped).
  void Wait() const;

 private:
  void Run();
  // Reads up to kChunkEntities entities from `start` on (an EAVT key;
  // empty: the first) in one state of the store. Sets *next to the key
  // the next chunk starts from; false when the walk is over.
  bool WarmChunk(std::string* start);

  std::function<std::shared_ptr<const Db>()> latest_;
  RecordCache* cache_;
  const size_t target_bytes_;
  std::atomic<bool> stopping_{false};
  mutable absl::Mutex mu_;
  bool done_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace mentat::storage::internal

#endif  // MENTAT_STORAGE_INTERNAL_CACHE_WARMER_H_
