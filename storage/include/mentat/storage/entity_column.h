#ifndef MENTAT_STORAGE_ENTITY_COLUMN_H_
#define MENTAT_STORAGE_ENTITY_COLUMN_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "mentat/storage/datom.h"

namespace mentat::storage {

namespace internal {
struct AttributeColumn;
}

// The current datoms of one attribute in AEVT order (by entity, then
// value), held in memory by the store's column cache
// (StoreOptions::column_cache_bytes), for joins that read the attribute of
// many entities at once.
//
// A column is a base read at some basis plus the changes committed since
// (until the store folds them into a new base). An entity the changes do
// not name has its datoms in the base, known by their positions: Seek
// finds an entity's first datom, Read decodes one. Looking up entities in
// ascending order walks the base forward, and a caller that knows the
// positions of the next lookups can Prefetch them, so that their memory
// arrives while it works on the current one. An entity the changes name
// (Changed) is read whole with ReadChanged instead.
//
// Immutable and thread-safe. It keeps its column alive after the cache
// drops it, and answers reads at the basis of the DbView that gave it.
class EntityColumn {
 public:
  explicit EntityColumn(
      std::shared_ptr<const internal::AttributeColumn> column);

  EntityId attribute() const;
  // How many datoms the base holds; positions are [0, size()).
  size_t size() const { return size_; }
  // The first base position whose entity is >= `e`, or size(). `near` is
  // where to start looking (the answer for the entity before, say): a
  // nearby answer costs a few comparisons.
  size_t Seek(EntityId e, size_t near = 0) const;
  // Seek(es[i]) into pos[i] for each of `n` entities (in any order, any
  // repeated), all at once: the searches go down the base in lockstep,
  // each step fetching the next entity of every search before comparing
  // any, so that lookups spread over a large base wait for their cache
  // misses together. Seek from the answer before costs a dependent miss
  // per galloping step: cheaper when the entities lie close together,
  // slower when they lie hundreds of datoms apart (SeekEachPays).
  void SeekEach(const EntityId* es, size_t n, size_t* pos) const;
  // True when SeekEach is the faster way to find `n` entities in
  // ascending order: when they lie far apart in a base too big for the
  // CPU's caches (where Seek's dependent misses add up).
  bool SeekEachPays(size_t n) const {
    return size_ >= kSeekEachMinSize && size_ >= n * kSeekEachGap;
  }
  // The entity of the base datom at `pos`.
  EntityId entity(size_t pos) const {
    return static_cast<EntityId>(entities_[pos]);
  }
  // Fetches the base datom at `pos` into the CPU's cache (a hint; it
  // changes nothing). Needs the position's end offset, so hint positions
  // some lookups ahead.
  void Prefetch(size_t pos) const;
  // Decodes the base datom at `pos` into *d, reusing d->v's buffer, with
  // its asserting tx and added = true. With skip_value, d->v is left
  // alone. DataLoss on a malformed key. Only for entities not Changed.
  [[nodiscard]] absl::Status Read(size_t pos, bool skip_value, Datom* d) const;

  // True if commits changed the attribute since the base was read.
  bool has_changes() const { return has_changes_; }
  // A place in the changes; a default one is their start.
  struct ChangePos {
    uint32_t chunk = 0;
    uint32_t off = 0;
  };
  // Whether the changes name entity `e`, in which case its datoms come
  // from ReadChanged and not from the base. Moves *pos to the first change
  // of an entity >= e: entities must come in ascending order for one pos.
  bool Changed(EntityId e, ChangePos* pos) const;
  // The datoms of entity `e` (one Changed named at `pos`) into *out, in
  // value order: the base's, from `base_pos` (Seek's answer for e), with
  // the changes applied. DataLoss on a malformed key.
  [[nodiscard]] absl::Status ReadChanged(EntityId e, size_t base_pos,
                                         ChangePos pos,
                                         std::vector<Datom>* out) const;

 private:
  // Mean distance between sorted lookups past which SeekEach beats a
  // walk with Seek: Seek walks 16 datoms (two cache lines) before it
  // gallops, so lookups nearer than that cost a line or two each.
  static constexpr size_t kSeekEachGap = 256;
  // Below this many datoms (1 MB of entity ids) the base stays in the
  // CPU's caches: at m (50K users) SeekEach measured 7-10% slower for
  // input bindings, at xl (500K) 17-21% faster.
  static constexpr size_t kSeekEachMinSize = size_t{1} << 17;

  std::shared_ptr<const internal::AttributeColumn> column_;
  // The base's entities, one per datom, in order.
  const uint64_t* entities_;
  size_t size_;
  bool has_changes_;
};

}  // namespace mentat::storage

#endif  // MENTAT_STORAGE_ENTITY_COLUMN_H_
