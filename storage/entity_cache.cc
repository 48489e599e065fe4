#include "internal/entity_cache.h"

namespace mentat::storage::internal {

EntityCache::EntityCache(size_t capacity_bytes)
    : shard_capacity_(capacity_bytes / kShards) {}

std::shared_ptr<const EntityRecord> EntityCache::Find(EntityId e) {
  Shard& shard = ShardOf(e);
  std::lock_guard<std::mutex> lock(shard.mu);
  auto it = shard.map.find(e);
  if (it == shard.map.end()) {
    misses_.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  shard.lru.splice(shard.lru.begin(), shard.lru, it->second.lru);
  hits_.fetch_add(1, std::memory_order_relaxed);
  return it->second.record;
}

void EntityCache::EraseLocked(Shard& shard, EntityId e) {
  auto it = shard.map.find(e);
  if (it == shard.map.end()) return;
  shard.bytes -= it->second.charge;
  shard.lru.erase(it->second.lru);
  shard.map.erase(it);
}

void EntityCache::Insert(EntityId e, EntityId read_at,
                         std::shared_ptr<const EntityRecord> record) {
  const size_t charge = record->charge();
  if (charge > shard_capacity_) return;
  Shard& shard = ShardOf(e);
  std::lock_guard<std::mutex> lock(shard.mu);
  // A commit after read_at may have changed e: what was read is stale for
  // readers of later bases.
  if (read_at < shard.floor) return;
  EraseLocked(shard, e);
  shard.lru.push_front(e);
  shard.map.emplace(e, Node{std::move(record), shard.lru.begin(), charge});
  shard.bytes += charge;
  while (shard.bytes > shard_capacity_ && !shard.lru.empty()) {
    EraseLocked(shard, shard.lru.back());
  }
}

void EntityCache::Invalidate(EntityId e, EntityId tx) {
  Shard& shard = ShardOf(e);
  std::lock_guard<std::mutex> lock(shard.mu);
  EraseLocked(shard, e);
  if (tx > shard.floor) shard.floor = tx;
}

void EntityCache::InvalidateAll(EntityId tx) {
  for (Shard& shard : shards_) {
    std::lock_guard<std::mutex> lock(shard.mu);
    shard.map.clear();
    shard.lru.clear();
    shard.bytes = 0;
    if (tx > shard.floor) shard.floor = tx;
  }
}

EntityCache::Counters EntityCache::counters() const {
  Counters c;
  c.hits = hits_.load(std::memory_order_relaxed);
  c.misses = misses_.load(std::memory_order_relaxed);
  for (const Shard& shard : shards_) {
    std::lock_guard<std::mutex> lock(shard.mu);
    c.bytes += shard.bytes;
    c.records += shard.map.size();
  }
  return c;
}

}  // namespace mentat::storage::internal
