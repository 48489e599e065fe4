#ifndef MENTAT_STORAGE_INTERNAL_RECORD_CACHE_H_
#define MENTAT_STORAGE_INTERNAL_RECORD_CACHE_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/hash/hash.h"
#include "absl/synchronization/mutex.h"
#include "boost/smart_ptr/intrusive_ptr.hpp"
#include "internal/hash_slots.h"
#include "mentat/storage/cache_counters.h"
#include "mentat/storage/datom.h"

namespace mentat::storage::internal {

class IndexRecord;

// An entity with more current datoms than this has no record: its reads
// go to RocksDB each time (one read of a huge cardinality-many attribute
// should not flush the cache).
inline constexpr size_t kMaxEntityEntries = 1024;
// Shared ownership of a record: the count lives in the record's own block,
// so taking a reference touches nothing a probe has not touched already.
using RecordRef = boost::intrusive_ptr<const IndexRecord>;

// Every key under one prefix of an index (EAVT: one entity; AVET: one
// attribute and value), current and retracted, as read from one snapshot:
// enough to answer the prefix's datoms at any basis up to the snapshot's
// (current, or as of an earlier t). Immutable once shared.
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
  // order them), their key bytes in `keys`. One allocation holds the
  // record, its prefix, entries and keys: a probe that confirms the prefix
  // has read the first entries too.
  static boost::intrusive_ptr<IndexRecord> Make(
      std::string_view prefix, const std::vector<Entry>& entries,
      std::string_view keys);
  // Adds `key`, asserted at `asserted` and retracted at `retracted` (0:
  // still current), to the entries and key bytes of a record to Make.
  static void AppendEntry(std::string_view key, EntityId asserted,
                          EntityId retracted, std::vector<Entry>* entries,
                          std::string* keys) {
    entries->push_back(Entry{static_cast<uint32_t>(keys->size()),
                             static_cast<uint32_t>(key.size()), asserted,
                             retracted});
    keys->append(key);
  }

  IndexRecord(const IndexRecord&) = delete;
  IndexRecord& operator=(const IndexRecord&) = delete;

  // The basis of the snapshot the record was read from.
  EntityId read_at = 0;
  // False when the prefix has more retracted datoms than a record keeps:
  // then entries hold its current datoms only, which answer reads at
  // read_at or later, and earlier reads go to RocksDB.
  bool history_complete = true;
  // Set when the record was read for a reader of the latest basis, which
  // never needs history: its history was not read (history_complete is
  // false). A reader of an earlier basis reads the record again whole and
  // replaces it, rather than going to RocksDB every time.
  bool current_only = false;
  // Set when the prefix has more current datoms than a record keeps:
  // readers go to RocksDB for it (and the record holds no entries).
  bool oversized = false;

  size_t size() const { return count_; }
  const Entry& entry(size_t i) const {
    return reinterpret_cast<const Entry*>(block() + entries_offset_)[i];
  }
  // The prefix whose keys it holds (the cache's key).
  std::string_view prefix() const {
    return std::string_view(block(), prefix_size_);
  }
  std::string_view key(const Entry& entry) const {
    return std::string_view(block() + keys_offset_ + entry.key_offset,
                            entry.key_size);
  }
  // The position of the first entry whose key is not less than `key`
  // (size() if none).
  size_t LowerBound(std::string_view key) const {
    size_t lo = 0, hi = size();
    while (lo < hi) {
      const size_t mid = lo + (hi - lo) / 2;
      if (this->key(entry(mid)) < key) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }
  // Memory charged against the cache's capacity.
  size_t charge() const { return sizeof(IndexRecord) + bytes_ + 32; }

 private:
  IndexRecord(size_t bytes, uint32_t count, uint32_t prefix_size,
              uint32_t entries_offset, uint32_t keys_offset)
      : bytes_(bytes),
        count_(count),
        prefix_size_(prefix_size),
        entries_offset_(entries_offset),
        keys_offset_(keys_offset) {}
  ~IndexRecord() = default;

  // The bytes after the record: prefix, entries (8-aligned), keys.
  const char* block() const { return reinterpret_cast<const char*>(this + 1); }

  friend void intrusive_ptr_add_ref(const IndexRecord* r) {
    r->refs_.fetch_add(1, std::memory_order_relaxed);
  }
  friend void intrusive_ptr_release(const IndexRecord* r) {
    if (r->refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) Destroy(r);
  }
  static void Destroy(const IndexRecord* r);

  mutable std::atomic<uint32_t> refs_{0};
  size_t bytes_;
  uint32_t count_;
  uint32_t prefix_size_;
  uint32_t entries_offset_;
  uint32_t keys_offset_;
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
// the commit changed. Once the charges pass the capacity, records go in
// CLOCK order: a sweeping hand skips (once) the records hit since it last
// passed, and evicts the first that was not. A hit only sets a flag in the
// slot it has read anyway; a least-recently-used list would move a node
// and touch its two neighbours, a cache miss each.
//
// Thread-safe (one mutex per shard).
class RecordCache {
 public:
  explicit RecordCache(size_t capacity_bytes);

  // The record of `prefix`, or null.
  RecordRef Find(std::string_view prefix);
  // Find for the transactor's own checks: counts neither a hit nor a miss
  // and leaves the record's reference flag alone (readers' use decides
  // what stays).
  RecordRef Peek(std::string_view prefix);
  // Starts fetching what Find(prefix) will read: step 0 its slot, step 1
  // (once the slot is in cache) its record (DatomCursor::Prefetch).
  void Prefetch(std::string_view prefix, int step);
  // Keeps `record` (under record->prefix), read from a snapshot at
  // `read_at`, unless a commit after read_at invalidated anything in the
  // prefix's shard.
  void Insert(EntityId read_at, RecordRef record);
  // Keeps `record` as Insert does, but only when its prefix has no record
  // (a reader's may hold history this one lacks) and its shard has room
  // for it without evicting anything. Counts neither a hit nor a miss.
  // False when the shard had no room (the cache warmer stops filling).
  bool InsertIfRoom(EntityId read_at, RecordRef record);
  // Transactor: drops the prefix's record; reads older than `tx` can no
  // longer insert into its shard.
  void Invalidate(std::string_view prefix, EntityId tx);
  // Transactor: drops every record (bulk import).
  void InvalidateAll(EntityId tx);

  CacheCounters counters() const;

  // What keeping `record` adds to counters().bytes: its charge, its slot
  // and its place in the eviction ring.
  static size_t ChargeOf(const IndexRecord& record) {
    return record.charge() + kSlotOverhead;
  }

 private:
  static constexpr int kShards = 32;

  // Records are found by a 64-bit hash of their prefix, and a hit is
  // confirmed against record->prefix: the slot holds no string, so a probe
  // touches the slot and the record, not a third block for the key. Two
  // prefixes with one hash share a slot (the later insert wins).
  struct Node {
    RecordRef record;
    uint32_t charge;
    uint32_t ring;    // its position in Shard::ring
    bool referenced;  // hit since the hand last passed
  };
  // What a record's slot and ring entry add to its charge: a slot is its
  // hash and Node, in an array HashSlots keeps at least half empty, so
  // two slots' room.
  static constexpr size_t kSlotOverhead =
      2 * (sizeof(uint64_t) + sizeof(Node)) + sizeof(uint64_t);
  // A cache line each: readers on different cores lock different shards
  // without taking each other's lines (the counters are per shard for the
  // same reason: one atomic counter for the whole cache was written by
  // every probe of every core).
  struct alignas(64) Shard {
    mutable absl::Mutex mu;
    HashSlots<Node> map ABSL_GUARDED_BY(mu);
    // The map's keys, swept by `hand`.
    std::vector<uint64_t> ring ABSL_GUARDED_BY(mu);
    size_t hand ABSL_GUARDED_BY(mu) = 0;
    size_t bytes ABSL_GUARDED_BY(mu) = 0;
    // The last tx that invalidated anything here.
    EntityId floor ABSL_GUARDED_BY(mu) = 0;
    uint64_t hits ABSL_GUARDED_BY(mu) = 0;
    uint64_t misses ABSL_GUARDED_BY(mu) = 0;
  };

  // Most bytes of a record Prefetch's second step hints.
  static constexpr size_t kPrefetchRecordBytes = 512;

  static uint64_t HashOf(std::string_view prefix);
  Shard& ShardOf(uint64_t hash);
  // The node of `prefix` (of `hash`), or null (none, or another prefix's
  // under the same hash).
  Node* FindLocked(Shard& shard, uint64_t hash, std::string_view prefix)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(shard.mu);
  void EraseLocked(Shard& shard, uint64_t hash)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(shard.mu);
  void EvictOneLocked(Shard& shard) ABSL_EXCLUSIVE_LOCKS_REQUIRED(shard.mu);
  // Puts `record` (of `hash`, costing `charge`) in the shard, and last in
  // its eviction ring.
  void KeepLocked(Shard& shard, uint64_t hash, RecordRef record, size_t charge)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(shard.mu);

  const size_t shard_capacity_;
  std::array<Shard, kShards> shards_;
};

}  // namespace mentat::storage::internal

#endif  // MENTAT_STORAGE_INTERNAL_RECORD_CACHE_H_
