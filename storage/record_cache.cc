#include "internal/record_cache.h"

#include <cstring>

namespace mentat::storage::internal {

IndexRecord::IndexRecord(std::string_view prefix,
                         const std::vector<Entry>& entries,
                         std::string_view keys)
    : bytes_(entries.size() * sizeof(Entry) + prefix.size() + keys.size()),
      count_(static_cast<uint32_t>(entries.size())),
      prefix_size_(static_cast<uint32_t>(prefix.size())) {
  data_ = std::make_unique_for_overwrite<char[]>(bytes_);
  char* out = data_.get();
  if (!entries.empty()) {
    std::memcpy(out, entries.data(), entries.size() * sizeof(Entry));
  }
  out += entries.size() * sizeof(Entry);
  if (!prefix.empty()) std::memcpy(out, prefix.data(), prefix.size());
  out += prefix.size();
  if (!keys.empty()) std::memcpy(out, keys.data(), keys.size());
}

RecordCache::RecordCache(size_t capacity_bytes)
    : shard_capacity_(capacity_bytes / kShards) {}

uint64_t RecordCache::HashOf(std::string_view prefix) {
  // Debian's abseil has its own string_view.
  return static_cast<uint64_t>(absl::Hash<absl::string_view>()(
      absl::string_view(prefix.data(), prefix.size())));
}

RecordCache::Shard& RecordCache::ShardOf(uint64_t hash) {
  // The top bits: the map inside the shard hashes the same number and uses
  // the low ones.
  return shards_[(hash * 0x9E3779B97F4A7C15ull) >> 59];
}

std::shared_ptr<const IndexRecord> RecordCache::Find(std::string_view prefix) {
  const uint64_t hash = HashOf(prefix);
  Shard& shard = ShardOf(hash);
  std::lock_guard<std::mutex> lock(shard.mu);
  auto it = shard.map.find(hash);
  if (it == shard.map.end() || it->second.record->prefix() != prefix) {
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

void RecordCache::EraseLocked(Shard& shard, uint64_t hash) {
  auto it = shard.map.find(hash);
  if (it == shard.map.end()) return;
  shard.bytes -= it->second.charge;
  shard.lru.erase(it->second.lru);
  shard.map.erase(it);
}

void RecordCache::Insert(EntityId read_at,
                         std::shared_ptr<const IndexRecord> record) {
  const size_t charge = record->charge() + sizeof(Node) + 3 * sizeof(void*);
  if (charge > shard_capacity_) return;
  const uint64_t hash = HashOf(record->prefix());
  Shard& shard = ShardOf(hash);
  std::lock_guard<std::mutex> lock(shard.mu);
  // A commit after read_at may have changed the prefix: what was read is
  // stale for readers of later bases.
  if (read_at < shard.floor) return;
  EraseLocked(shard, hash);
  shard.lru.push_front(hash);
  shard.map.emplace(
      hash, Node{std::move(record), shard.lru.begin(), charge, ++shard.tick});
  shard.bytes += charge;
  while (shard.bytes > shard_capacity_ && !shard.lru.empty()) {
    EraseLocked(shard, shard.lru.back());
  }
}

void RecordCache::Invalidate(std::string_view prefix, EntityId tx) {
  const uint64_t hash = HashOf(prefix);
  Shard& shard = ShardOf(hash);
  std::lock_guard<std::mutex> lock(shard.mu);
  // Whatever prefix holds the slot goes: at worst another one with the
  // same hash is read again.
  EraseLocked(shard, hash);
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
