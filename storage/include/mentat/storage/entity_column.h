#ifndef MENTAT_STORAGE_ENTITY_COLUMN_H_
#define MENTAT_STORAGE_ENTITY_COLUMN_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "mentat/storage/datom.h"

namespace mentat::storage {

namespace internal {
struct AttributeColumn;
}

// The current datoms of one attribute in AEVT order (by entity, then
// value), held in memory by the store's column cache
// (StoreOptions::column_cache_bytes), for joins that read the attribute of
// many entities at once. A datom is known by its position: Seek finds an
// entity's first datom, Read decodes one. Looking up entities in
// ascending order walks the column forward, and a caller that knows the
// positions of the next lookups can Prefetch them, so that their memory
// arrives while it works on the current one.
//
// Immutable and thread-safe. It keeps its column alive after the cache
// drops it, and answers reads at the basis of the DbView that gave it.
class EntityColumn {
 public:
  explicit EntityColumn(
      std::shared_ptr<const internal::AttributeColumn> column);

  EntityId attribute() const;
  // How many datoms; positions are [0, size()).
  size_t size() const { return size_; }
  // The first position whose entity is >= `e`, or size(). `near` is where
  // to start looking (the answer for the entity before, say): a nearby
  // answer costs a few comparisons.
  size_t Seek(EntityId e, size_t near = 0) const;
  // The entity of the datom at `pos`.
  EntityId entity(size_t pos) const {
    return static_cast<EntityId>(entities_[pos]);
  }
  // Fetches the datom at `pos` into the CPU's cache (a hint; it changes
  // nothing). Needs the position's end offset, so hint positions some
  // lookups ahead.
  void Prefetch(size_t pos) const;
  // Decodes the datom at `pos` into *d, reusing d->v's buffer, with its
  // asserting tx and added = true. With skip_value, d->v is left alone.
  // DataLoss on a malformed key.
  absl::Status Read(size_t pos, bool skip_value, Datom* d) const;

 private:
  std::shared_ptr<const internal::AttributeColumn> column_;
  // The column's entities, one per datom, in order.
  const uint64_t* entities_;
  size_t size_;
};

}  // namespace mentat::storage

#endif  // MENTAT_STORAGE_ENTITY_COLUMN_H_
