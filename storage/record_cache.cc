#include "internal/record_cache.h"

#include <algorithm>
#include <cstring>

#include "absl/synchronization/mutex.h"

namespace mentat::storage::internal {

boost::intrusive_ptr<IndexRecord> IndexRecord::Make(
    std::string_view prefix, const std::vector<Entry>& entries,
    std::string_view keys) {
  const size_t entries_offset = (prefix.size() + 7) & ~size_t{7};
  const size_t keys_offset = entries_offset + entries.size() * sizeof(Entry);
  const size_t bytes = keys_offset + keys.size();
  static_assert(sizeof(IndexRecord) % alignof(Entry) == 0);
  void* block = ::operator new(sizeof(IndexRecord) + bytes);
  auto* record =
      new (block) IndexRecord(bytes, static_cast<uint32_t>(entries.size()),
                              static_cast<uint32_t>(prefix.size()),
                              static_cast<uint32_t>(entries_offset),
                              static_cast<uint32_t>(keys_offset));
  char* out = reinterpret_cast<char*>(record + 1);
  if (!prefix.empty()) std::memcpy(out, prefix.data(), prefix.size());
  if (!entries.empty()) {
    std::memcpy(out + entries_offset, entries.data(),
                entries.size() * sizeof(Entry));
  }
  if (!keys.empty()) std::memcpy(out + keys_offset, keys.data(), keys.size());
  return boost::intrusive_ptr<IndexRecord>(record);
}

void IndexRecord::Destroy(const IndexRecord* r) {
  r->~IndexRecord();
  ::operator delete(const_cast<IndexRecord*>(r));
}

RecordCache::RecordCache(size_t capacity_bytes)
    : shard_capacity_(capacity_bytes / kShards) {}

uint64_t RecordCache::HashOf(std::string_view prefix) {
  // Debian's abseil has its own string_view.
  const auto h = static_cast<uint64_t>(absl::Hash<absl::string_view>()(
      absl::string_view(prefix.data(), prefix.size())));
  return h == 0 ? 1 : h;  // 0 marks an empty slot (HashSlots)
}

RecordCache::Shard& RecordCache::ShardOf(uint64_t hash) {
  // The top bits: the map inside the shard hashes the same number and uses
  // the low ones.
  return shards_[(hash * 0x9E3779B97F4A7C15ull) >> 59];
}

RecordCache::Node* RecordCache::FindLocked(Shard& shard, uint64_t hash,
                                           std::string_view prefix) {
  Node* node = shard.map.Find(hash);
  return node != nullptr && node->record->prefix() == prefix ? node : nullptr;
}

RecordRef RecordCache::Find(std::string_view prefix) {
  const uint64_t hash = HashOf(prefix);
  Shard& shard = ShardOf(hash);
  absl::MutexLock lock(&shard.mu);
  Node* node = FindLocked(shard, hash, prefix);
  if (node == nullptr) {
    ++shard.misses;
    return nullptr;
  }
  // Written only when it changes: a hot record's slot then stays clean in
  // every core's cache.
  if (!node->referenced) node->referenced = true;
  ++shard.hits;
  return node->record;
}

RecordRef RecordCache::Peek(std::string_view prefix) {
  const uint64_t hash = HashOf(prefix);
  Shard& shard = ShardOf(hash);
  absl::MutexLock lock(&shard.mu);
  const Node* node = FindLocked(shard, hash, prefix);
  return node != nullptr ? node->record : nullptr;
}

void RecordCache::Prefetch(std::string_view prefix, int step) {
  const uint64_t hash = HashOf(prefix);
  Shard& shard = ShardOf(hash);
  absl::MutexLock lock(&shard.mu);
  if (step == 0) {
    shard.map.Prefetch(hash);
    return;
  }
  const Node* node = shard.map.Find(hash);
  if (node == nullptr) return;
  // The whole record, up to kPrefetchRecordBytes: a fetch decodes the
  // entries and keys up to its attributes, most of a small entity's lines
  // (an issue of the workload: about 500 bytes). Its size is the slot's
  // charge less what Insert added, so the record is not read to learn it.
  const char* record = reinterpret_cast<const char*>(node->record.get());
  const size_t bytes =
      std::min<size_t>(node->charge - kSlotOverhead, kPrefetchRecordBytes);
  for (size_t off = 0; off < bytes; off += 64) __builtin_prefetch(record + off);
}

void RecordCache::EraseLocked(Shard& shard, uint64_t hash) {
  const Node* node = shard.map.Find(hash);
  if (node == nullptr) return;
  const uint32_t pos = node->ring;
  shard.bytes -= node->charge;
  shard.map.Erase(hash);
  // The ring's last key fills the hole (the hand examines it next if it
  // stood there).
  const uint64_t moved = shard.ring.back();
  shard.ring.pop_back();
  if (pos < shard.ring.size()) {
    shard.ring[pos] = moved;
    shard.map.Find(moved)->ring = pos;
  }
}

void RecordCache::EvictOneLocked(Shard& shard) {
  // Each pass clears the flags it skips, so at most one lap finds a record
  // to evict.
  while (!shard.ring.empty()) {
    if (shard.hand >= shard.ring.size()) shard.hand = 0;
    const uint64_t hash = shard.ring[shard.hand];
    Node& node = *shard.map.Find(hash);
    if (node.referenced) {
      node.referenced = false;
      ++shard.hand;
      continue;
    }
    EraseLocked(shard, hash);
    return;
  }
}

void RecordCache::KeepLocked(Shard& shard, uint64_t hash, RecordRef record,
                             size_t charge) {
  shard.map.Put(hash, Node{std::move(record), static_cast<uint32_t>(charge),
                           static_cast<uint32_t>(shard.ring.size()),
                           /*referenced=*/false});
  shard.ring.push_back(hash);
  shard.bytes += charge;
}

void RecordCache::Insert(EntityId read_at, RecordRef record) {
  const size_t charge = ChargeOf(*record);
  if (charge > shard_capacity_ || charge > UINT32_MAX) return;
  const uint64_t hash = HashOf(record->prefix());
  Shard& shard = ShardOf(hash);
  absl::MutexLock lock(&shard.mu);
  // A commit after read_at may have changed the prefix: what was read is
  // stale for readers of later bases.
  if (read_at < shard.floor) return;
  EraseLocked(shard, hash);
  KeepLocked(shard, hash, std::move(record), charge);
  while (shard.bytes > shard_capacity_ && !shard.ring.empty()) {
    EvictOneLocked(shard);
  }
}

bool RecordCache::InsertIfRoom(EntityId read_at, RecordRef record) {
  const size_t charge = ChargeOf(*record);
  if (charge > UINT32_MAX) return true;  // never kept; not a full shard
  const uint64_t hash = HashOf(record->prefix());
  Shard& shard = ShardOf(hash);
  absl::MutexLock lock(&shard.mu);
  if (shard.bytes + charge > shard_capacity_) return false;
  if (read_at < shard.floor || shard.map.Find(hash) != nullptr) return true;
  KeepLocked(shard, hash, std::move(record), charge);
  return true;
}

void RecordCache::Invalidate(std::string_view prefix, EntityId tx) {
  const uint64_t hash = HashOf(prefix);
  Shard& shard = ShardOf(hash);
  absl::MutexLock lock(&shard.mu);
  // Whatever prefix holds the slot goes: at worst another one with the
  // same hash is read again.
  EraseLocked(shard, hash);
  if (tx > shard.floor) shard.floor = tx;
}

void RecordCache::InvalidateAll(EntityId tx) {
  for (Shard& shard : shards_) {
    absl::MutexLock lock(&shard.mu);
    shard.map.Clear();
    shard.ring.clear();
    shard.hand = 0;
    shard.bytes = 0;
    if (tx > shard.floor) shard.floor = tx;
  }
}

CacheCounters RecordCache::counters() const {
  CacheCounters c;
  for (const Shard& shard : shards_) {
    absl::MutexLock lock(&shard.mu);
    c.hits += shard.hits;
    c.misses += shard.misses;
    c.bytes += shard.bytes;
    c.entries += shard.map.size();
  }
  return c;
}

}  // namespace mentat::storage::internal
