#include "internal/record_cache.h"

namespace mentat::storage::internal {
namespace {
// Debian's abseil has its own string_view: heterogeneous lookups in a map
// of std::string take that one.
absl::string_view Key(std::string_view s) {
  return absl::string_view(s.data(), s.size());
}
}  // namespace

RecordCache::RecordCache(size_t capacity_bytes)
    : shard_capacity_(capacity_bytes / kShards) {}

RecordCache::Shard& RecordCache::ShardOf(std::string_view prefix) {
  // The top bits: the map inside the shard hashes the same key and uses
  // the low ones.
  const size_t h = absl::Hash<absl::string_view>()(Key(prefix));
  return shards_[(static_cast<uint64_t>(h) * 0x9E3779B97F4A7C15ull) >> 59];
}

std::shared_ptr<const IndexRecord> RecordCache::Find(std::string_view prefix) {
  Shard& shard = ShardOf(prefix);
  std::lock_guard<std::mutex> lock(shard.mu);
  auto it = shard.map.find(Key(prefix));
  if (it == shard.map.end()) {
    misses_.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  // A hit moves its record to the front only once it has drifted into the
  // older half: most hits then touch the slot alone, not three list nodes
  // (a cache miss each), and eviction still takes the least recent half.
  Node& node = it->second;
  if (shard.tick - node.touched > shard.map.size() / 2) {
    shard.lru.splice(shard.lru.begin(), shard.lru, node.lru);
    node.touched = ++shard.tick;
  }
  hits_.fetch_add(1, std::memory_order_relaxed);
  return node.record;
}

void RecordCache::EraseLocked(Shard& shard, std::string_view prefix) {
  auto it = shard.map.find(Key(prefix));
  if (it == shard.map.end()) return;
  shard.bytes -= it->second.charge;
  shard.lru.erase(it->second.lru);
  shard.map.erase(it);
}

void RecordCache::Insert(std::string_view prefix, EntityId read_at,
                         std::shared_ptr<const IndexRecord> record) {
  const size_t charge = record->charge() + 2 * prefix.size();
  if (charge > shard_capacity_) return;
  Shard& shard = ShardOf(prefix);
  std::lock_guard<std::mutex> lock(shard.mu);
  // A commit after read_at may have changed the prefix: what was read is
  // stale for readers of later bases.
  if (read_at < shard.floor) return;
  EraseLocked(shard, prefix);
  shard.lru.emplace_front(prefix);
  shard.map.emplace(
      std::string(prefix),
      Node{std::move(record), shard.lru.begin(), charge, ++shard.tick});
  shard.bytes += charge;
  while (shard.bytes > shard_capacity_ && !shard.lru.empty()) {
    const std::string victim = shard.lru.back();
    EraseLocked(shard, victim);
  }
}

void RecordCache::Invalidate(std::string_view prefix, EntityId tx) {
  Shard& shard = ShardOf(prefix);
  std::lock_guard<std::mutex> lock(shard.mu);
  EraseLocked(shard, prefix);
  if (tx > shard.floor) shard.floor = tx;
}

void RecordCache::InvalidateAll(EntityId tx) {
  for (Shard& shard : shards_) {
    std::lock_guard<std::mutex> lock(shard.mu);
    shard.map.clear();
    shard.lru.clear();
    shard.bytes = 0;
    if (tx > shard.floor) shard.floor = tx;
  }
}

CacheCounters RecordCache::counters() const {
  CacheCounters c;
  c.hits = hits_.load(std::memory_order_relaxed);
  c.misses = misses_.load(std::memory_order_relaxed);
  for (const Shard& shard : shards_) {
    std::lock_guard<std::mutex> lock(shard.mu);
    c.bytes += shard.bytes;
    c.entries += shard.map.size();
  }
  return c;
}

}  // namespace mentat::storage::internal
