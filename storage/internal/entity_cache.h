#ifndef MENTAT_STORAGE_INTERNAL_ENTITY_CACHE_H_
#define MENTAT_STORAGE_INTERNAL_ENTITY_CACHE_H_

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
#include "mentat/storage/datom.h"

namespace mentat::storage::internal {

// Every EAVT key of one entity, current and retracted, as read from one
// snapshot: enough to answer the entity's datoms at any basis up to the
// snapshot's (current, or as of an earlier t).
struct EntityRecord {
  struct Entry {
    uint32_t key_offset;  // into keys
    uint32_t key_size;
    EntityId asserted;
    EntityId retracted;  // 0: still current
  };
  std::string keys;
  // In EAVT key order; for one key, its retracted intervals (oldest first)
  // before its current assertion, as the merged cursors order them.
  std::vector<Entry> entries;
  // The basis of the snapshot the record was read from.
  EntityId read_at = 0;
  // False when the entity has more retracted datoms than a record keeps:
  // then entries hold its current datoms only, which answer reads at
  // read_at or later, and earlier reads go to RocksDB.
  bool history_complete = true;
  // Set when the entity has more current datoms than a record keeps:
  // readers go to RocksDB for it (and the record holds no entries).
  bool oversized = false;

  std::string_view key(const Entry& entry) const {
    return std::string_view(keys.data() + entry.key_offset, entry.key_size);
  }
  // Memory charged against the cache's capacity.
  size_t charge() const {
    return sizeof(EntityRecord) + keys.capacity() +
           entries.capacity() * sizeof(Entry) + 64;
  }
};

// A cache of EntityRecords shared by every reader of a store, so that
// looking up an entity's attributes (EAVT with e bound: entity fetches,
// pull, joins on a bound entity) costs a hash probe instead of a RocksDB
// seek through every level. Datomic's peers keep the same kind of cache.
//
// Records never go stale: the transactor calls Invalidate for every entity
// a commit touches before it publishes the commit, and a record read at a
// basis older than an invalidation of its shard is not kept (Insert), so a
// reader that loaded an entity just before a commit cannot put back what
// the commit changed. Least recently used records go first once the
// charges pass the capacity.
//
// Thread-safe (one mutex per shard).
class EntityCache {
 public:
  explicit EntityCache(size_t capacity_bytes);

  // The record of `e`, or null.
  std::shared_ptr<const EntityRecord> Find(EntityId e);
  // Keeps `record`, read from a snapshot at `read_at`, unless a commit
  // after read_at invalidated anything in e's shard.
  void Insert(EntityId e, EntityId read_at,
              std::shared_ptr<const EntityRecord> record);
  // Transactor: drops e's record; reads older than `tx` can no longer
  // insert into its shard.
  void Invalidate(EntityId e, EntityId tx);
  // Transactor: drops every record (bulk import).
  void InvalidateAll(EntityId tx);

  struct Counters {
    uint64_t hits = 0;
    uint64_t misses = 0;
    uint64_t bytes = 0;
    uint64_t records = 0;
  };
  Counters counters() const;

 private:
  static constexpr int kShards = 32;
  struct Node {
    std::shared_ptr<const EntityRecord> record;
    std::list<EntityId>::iterator lru;
    size_t charge;
  };
  struct Shard {
    mutable std::mutex mu;
    absl::flat_hash_map<EntityId, Node> map;
    std::list<EntityId> lru;  // front: most recently used
    size_t bytes = 0;
    EntityId floor = 0;  // the last tx that invalidated anything here
  };
  Shard& ShardOf(EntityId e) {
    // Entity ids are sequential: mix the bits so neighbours spread.
    const uint64_t h = static_cast<uint64_t>(e) * 0x9E3779B97F4A7C15ull;
    return shards_[h >> 59];
  }
  void EraseLocked(Shard& shard, EntityId e);

  const size_t shard_capacity_;
  std::array<Shard, kShards> shards_;
  std::atomic<uint64_t> hits_{0};
  std::atomic<uint64_t> misses_{0};
};

}  // namespace mentat::storage::internal

#endif  // MENTAT_STORAGE_INTERNAL_ENTITY_CACHE_H_
