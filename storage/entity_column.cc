#include "mentat/storage/entity_column.h"

#include <algorithm>

#include "internal/column_cache.h"
#include "mentat/storage/keys.h"

namespace mentat::storage {

EntityColumn::EntityColumn(
    std::shared_ptr<const internal::AttributeColumn> column)
    : column_(std::move(column)),
      entities_(column_->base->entities.data()),
      size_(column_->base->entities.size()),
      has_changes_(!column_->delta.empty()) {}

EntityId EntityColumn::attribute() const { return column_->attribute; }

size_t EntityColumn::Seek(EntityId e, size_t near) const {
  const auto target = static_cast<uint64_t>(e);
  if (near < size_ && entities_[near] < target) {
    // The next entity of a sorted batch is usually a few datoms on: a
    // short walk costs less than galloping there.
    const size_t end = std::min(size_, near + 16);
    size_t i = near + 1;
    for (; i < end; ++i) {
      if (entities_[i] >= target) return i;
    }
    if (i == size_) return size_;
    near = i;
  }
  return internal::GallopLowerBound(
      near, 0, size_, [&](size_t k) { return entities_[k] < target; });
}

void EntityColumn::SeekEach(const EntityId* es, size_t n, size_t* pos) const {
  // Lanes searched together: about as many misses as a core keeps in
  // flight.
  constexpr size_t kLanes = 16;
  for (size_t first = 0; first < n; first += kLanes) {
    const size_t lanes = std::min(kLanes, n - first);
    const EntityId* targets = es + first;
    size_t lo[kLanes] = {};
    // Every lane halves the same length, so the steps stay in lockstep;
    // the answer lies in [lo, lo + len].
    size_t len = size_;
    while (len > 1) {
      const size_t half = len / 2;
      for (size_t j = 0; j < lanes; ++j) {
        __builtin_prefetch(&entities_[lo[j] + half - 1]);
      }
      for (size_t j = 0; j < lanes; ++j) {
        const bool below =
            entities_[lo[j] + half - 1] < static_cast<uint64_t>(targets[j]);
        lo[j] += below ? half : 0;
      }
      len -= half;
    }
    for (size_t j = 0; j < lanes; ++j) {
      const bool below =
          size_ > 0 && entities_[lo[j]] < static_cast<uint64_t>(targets[j]);
      pos[first + j] = lo[j] + (below ? 1 : 0);
    }
  }
}

void EntityColumn::Prefetch(size_t pos) const {
  const internal::KeyRun& c = *column_->base;
  const uint32_t begin = pos == 0 ? 0 : c.ends[pos - 1];
  const char* key = c.keys.data() + begin;
  __builtin_prefetch(key);
  // A key with a string value often runs into the next line.
  __builtin_prefetch(key + 64);
  __builtin_prefetch(&c.txs[pos]);
}

absl::Status EntityColumn::Read(size_t pos, bool skip_value, Datom* d) const {
  const internal::KeyRun& c = *column_->base;
  const std::string_view key = c.key(pos);
  absl::Status s = skip_value ? DecodeKeyIds(IndexOrder::kAevt, key, d)
                              : DecodeKey(IndexOrder::kAevt, key, d);
  if (!s.ok()) return s;
  d->tx = c.txs[pos];
  d->added = true;
  return absl::OkStatus();
}

bool EntityColumn::Changed(EntityId e, ChangePos* pos) const {
  const internal::ColumnDelta& delta = column_->delta;
  internal::ColumnDelta::Pos p{pos->chunk, pos->off};
  p = delta.SeekEntity(static_cast<uint64_t>(e), p);
  pos->chunk = p.chunk;
  pos->off = p.off;
  return delta.Valid(p) && delta.entity(p) == static_cast<uint64_t>(e);
}

absl::Status EntityColumn::ReadChanged(EntityId e, size_t base_pos,
                                       ChangePos pos,
                                       std::vector<Datom>* out) const {
  out->clear();
  const internal::KeyRun& base = *column_->base;
  const internal::ColumnDelta& delta = column_->delta;
  const auto target = static_cast<uint64_t>(e);
  size_t b = base_pos;
  internal::ColumnDelta::Pos d{pos.chunk, pos.off};
  auto emit = [&](std::string_view key, EntityId tx) {
    out->emplace_back();
    Datom& datom = out->back();
    absl::Status s = DecodeKey(IndexOrder::kAevt, key, &datom);
    datom.tx = tx;
    datom.added = true;
    return s;
  };
  for (;;) {
    const bool in_base = b < size_ && entities_[b] == target;
    const bool in_delta = delta.Valid(d) && delta.entity(d) == target;
    if (!in_base && !in_delta) return absl::OkStatus();
    std::string_view key;
    EntityId tx;
    if (in_delta && (!in_base || delta.key(d) <= base.key(b))) {
      key = delta.key(d);
      tx = delta.tx(d);
      if (in_base && base.key(b) == key) ++b;  // replaced or removed
      delta.Next(&d);
      if (tx == 0) continue;
    } else {
      key = base.key(b);
      tx = base.txs[b];
      ++b;
    }
    absl::Status s = emit(key, tx);
    if (!s.ok()) return s;
  }
}

}  // namespace mentat::storage
