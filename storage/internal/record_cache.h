#ifndef MENTAT_STORAGE_INTERNAL_RECORD_CACHE_H_
#define MENTAT_STORAGE_INTERNAL_RECORD_CACHE_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "mentat/storage/cache_counters.h"
#include "mentat/storage/datom.h"

namespace mentat::storage::internal {

// Every key under one prefix of an index (EAVT: one entity; AVET: one
// attribute and value), current and retracted, as read from one snapshot:
// enough to answer the prefix's datoms at any basis up to the snapshot's
// (current, or as of an earlier t). Immutable once made.
class IndexRecord {
 public:
  struct Entry {
    uint32_t key_offset;  // into the keys
    uint32_t key_size;
    EntityId asserted;
    EntityId retracted;  // 0: still current
  };

  // `entries` in EAVT key order (for one key, its retracted intervals,
  // oldest first, before its current assertion, as the merged cursors
  // order them), their key bytes in `keys`.
  IndexRecord(std::string_view prefix, const std::vector<Entry>& entries,
              std::string_view keys);

  // The basis of the snapshot the record was read from.
  EntityId read_at = 0;
  // False when the prefix has more retracted datoms than a record keeps:
  // then entries hold its current datoms only, which answer reads at
  // read_at or later, and earlier reads go to RocksDB.
  bool history_complete = true;
  // Set when the prefix has more current datoms than a record keeps:
  // readers go to RocksDB for it (and the record holds no entries).
  bool oversized = false;

  size_t size() const { return count_; }
  const Entry& entry(size_t i) const {
    return reinterpret_cast<const Entry*>(data_.get())[i];
  }
  // The prefix whose keys it holds (the cache's key).
  std::string_view prefix() const {
    return std::string_view(data_.get() + count_ * sizeof(Entry), prefix_size_);
  }
  std::string_view key(const Entry& entry) const {
    return std::string_view(
        data_.get() + count_ * sizeof(Entry) + prefix_size_ + entry.key_offset,
        entry.key_size);
  }
  // Memory charged against the cache's capacity.
  size_t charge() const { return sizeof(IndexRecord) + bytes_ + 64; }

 private:
  // The entries, the prefix and the keys in one block: a probe reads the
  // record and one allocation, not one for each part.
  std::unique_ptr<char[]> data_;
  size_t bytes_ = 0;
  uint32_t count_ = 0;
  uint32_t prefix_size_ = 0;
};

// A cache of IndexRecords shared by every reader of a store, so that
// reading one entity's attributes (EAVT with e bound: entity fetches, pull,
// joins on a bound entity) or finding the entities of one value (AVET with
// a and v bound: unique lookups, input bindings) costs a hash probe instead
// of a RocksDB seek through every level. Datomic's peers keep the same
// kind of cache.
//
// Records never go stale: the transactor calls Invalidate for every prefix
// a commit touches before it publishes the commit, and a record read at a
// basis older than an invalidation of its shard is not kept (Insert), so a
// reader that loaded a prefix just before a commit cannot put back what
// the commit changed. Least recently used records go first once the
// charges pass the capacity.
//
// Thread-safe (one mutex per shard).
class RecordCache {
 public:
  explicit RecordCache(size_t capacity_bytes);

  // The record of `prefix`, or null.
  std::shared_ptr<const IndexRecord> Find(std::string_view prefix);
  // Keeps `record` (under record->prefix), read from a snapshot at
  // `read_at`, unless a commit after read_at invalidated anything in the
  // prefix's shard.
  void Insert(EntityId read_at, std::shared_ptr<const IndexRecord> record);
  // Transactor: drops the prefix's record; reads older than `tx` can no
  // longer insert into its shard.
  void Invalidate(std::string_view prefix, EntityId tx);
  // Transactor: drops every record (bulk import).
  void InvalidateAll(EntityId tx);

  CacheCounters counters() const;

 private:
  static constexpr int kShards = 32;
  // Records are found by a 64-bit hash of their prefix, and a hit is
  // confirmed against record->prefix: the slot holds no string, so a probe
  // touches the slot and the record, not a third block for the key. Two
  // prefixes with one hash share a slot (the later insert wins).
  struct Node {
    std::shared_ptr<const IndexRecord> record;
    std::list<uint64_t>::iterator lru;
    size_t charge;
    uint64_t touched;  // the shard's tick when last moved to the front
  };
  struct Shard {
    mutable std::mutex mu;
    absl::flat_hash_map<uint64_t, Node> map;
    std::list<uint64_t> lru;  // front: most recently used
    size_t bytes = 0;
    uint64_t tick = 0;   // counts moves to the front
    EntityId floor = 0;  // the last tx that invalidated anything here
  };
  static uint64_t HashOf(std::string_view prefix);
  Shard& ShardOf(uint64_t hash);
  void EraseLocked(Shard& shard, uint64_t hash);

  const size_t shard_capacity_;
  std::array<Shard, kShards> shards_;
  std::atomic<uint64_t> hits_{0};
  std::atomic<uint64_t> misses_{0};
};

}  // namespace mentat::storage::internal

#endif  // MENTAT_STORAGE_INTERNAL_RECORD_CACHE_H_
