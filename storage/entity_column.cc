#include "mentat/storage/entity_column.h"

#include "internal/column_cache.h"
#include "mentat/storage/keys.h"

namespace mentat::storage {

EntityColumn::EntityColumn(
    std::shared_ptr<const internal::AttributeColumn> column)
    : column_(std::move(column)),
      entities_(column_->entities.data()),
      size_(column_->entities.size()) {}

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

void EntityColumn::Prefetch(size_t pos) const {
  const internal::AttributeColumn& c = *column_;
  const uint32_t begin = pos == 0 ? 0 : c.ends[pos - 1];
  const char* key = c.keys.data() + begin;
  __builtin_prefetch(key);
  // A key with a string value often runs into the next line.
  __builtin_prefetch(key + 64);
  __builtin_prefetch(&c.txs[pos]);
}

absl::Status EntityColumn::Read(size_t pos, bool skip_value, Datom* d) const {
  const internal::AttributeColumn& c = *column_;
  const std::string_view key = c.key(pos);
  absl::Status s = skip_value ? DecodeKeyIds(IndexOrder::kAevt, key, d)
                              : DecodeKey(IndexOrder::kAevt, key, d);
  if (!s.ok()) return s;
  d->tx = c.txs[pos];
  d->added = true;
  return absl::OkStatus();
}

}  // namespace mentat::storage
