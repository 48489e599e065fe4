#include "internal/column_cache.h"

#include <algorithm>

namespace mentat::storage::internal {

ColumnCache::ColumnCache(size_t capacity_bytes, uint64_t build_after_rows,
                         std::chrono::milliseconds quiet_time)
    : capacity_(capacity_bytes),
      build_after_rows_(build_after_rows),
      quiet_time_(quiet_time) {}

EntityId ColumnCache::TouchedLocked(EntityId attribute) const {
  auto it = attributes_.find(attribute);
  const EntityId touched = it == attributes_.end() ? 0 : it->second.touched;
  return std::max(touched, touched_all_);
}

std::shared_ptr<const AttributeColumn> ColumnCache::Find(IndexOrder order,
                                                         EntityId attribute,
                                                         EntityId t) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = slots_.find(SlotKey(order, attribute));
  if (it == slots_.end() || !it->second.column) return nullptr;
  // A column exists only while no commit after read_at wrote its
  // attribute, so it holds the attribute's state at every basis from
  // read_at to the latest; an older reader goes to RocksDB.
  if (t < it->second.column->read_at) return nullptr;
  it->second.used = ++tick_;
  hits_.fetch_add(1, std::memory_order_relaxed);
  return it->second.column;
}

bool ColumnCache::ClaimBuild(IndexOrder order, EntityId attribute) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = slots_.find(SlotKey(order, attribute));
  if (it == slots_.end()) return false;
  Slot& slot = it->second;
  if (slot.column || slot.building || slot.too_big ||
      slot.scanned < build_after_rows_) {
    return false;
  }
  const Clock::time_point now = Clock::now();
  if (now - touched_all_at_ < quiet_time_) return false;
  auto a = attributes_.find(attribute);
  if (a != attributes_.end() && now - a->second.touched_at < quiet_time_) {
    return false;
  }
  slot.building = true;
  return true;
}

void ColumnCache::Insert(std::shared_ptr<const AttributeColumn> column) {
  std::lock_guard<std::mutex> lock(mu_);
  Slot& slot = slots_[SlotKey(column->order, column->attribute)];
  slot.building = false;
  // A commit after read_at may have changed the attribute.
  if (column->read_at < TouchedLocked(column->attribute)) return;
  const size_t charge = column->charge();
  if (charge > max_column_bytes()) {
    slot.too_big = true;
    return;
  }
  DropLocked(slot);
  slot.column = std::move(column);
  slot.used = ++tick_;
  slot.scanned = 0;
  bytes_ += charge;
  ++builds_;
  EvictLocked();
}

void ColumnCache::Abandon(IndexOrder order, EntityId attribute, bool too_big) {
  std::lock_guard<std::mutex> lock(mu_);
  Slot& slot = slots_[SlotKey(order, attribute)];
  slot.building = false;
  if (too_big) slot.too_big = true;
  slot.scanned = 0;
}

void ColumnCache::CountScanned(IndexOrder order, EntityId attribute,
                               uint64_t rows) {
  std::lock_guard<std::mutex> lock(mu_);
  slots_[SlotKey(order, attribute)].scanned += rows;
}

void ColumnCache::DropLocked(Slot& slot) {
  if (!slot.column) return;
  bytes_ -= slot.column->charge();
  slot.column.reset();
}

void ColumnCache::ForgetLocked(Slot& slot) {
  DropLocked(slot);
  slot.scanned = 0;
}

void ColumnCache::EvictLocked() {
  while (bytes_ > capacity_) {
    Slot* oldest = nullptr;
    for (auto& [key, slot] : slots_) {
      if (slot.column && (oldest == nullptr || slot.used < oldest->used)) {
        oldest = &slot;
      }
    }
    if (oldest == nullptr) return;
    DropLocked(*oldest);
  }
}

void ColumnCache::Touch(const absl::flat_hash_set<EntityId>& attributes,
                        EntityId tx) {
  const Clock::time_point now = Clock::now();
  std::lock_guard<std::mutex> lock(mu_);
  for (EntityId attribute : attributes) {
    AttributeState& state = attributes_[attribute];
    state.touched = std::max(state.touched, tx);
    state.touched_at = now;
    for (IndexOrder order : {IndexOrder::kAevt, IndexOrder::kAvet}) {
      auto it = slots_.find(SlotKey(order, attribute));
      if (it == slots_.end()) continue;
      ForgetLocked(it->second);
    }
  }
}

void ColumnCache::TouchAll(EntityId tx) {
  std::lock_guard<std::mutex> lock(mu_);
  touched_all_ = std::max(touched_all_, tx);
  touched_all_at_ = Clock::now();
  for (auto& [key, slot] : slots_) ForgetLocked(slot);
}

CacheCounters ColumnCache::counters() const {
  std::lock_guard<std::mutex> lock(mu_);
  CacheCounters c;
  c.hits = hits_.load(std::memory_order_relaxed);
  c.misses = builds_;
  c.bytes = bytes_;
  for (const auto& [key, slot] : slots_) c.entries += slot.column ? 1 : 0;
  return c;
}

}  // namespace mentat::storage::internal
