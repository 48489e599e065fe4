#ifndef MENTAT_STORAGE_INTERNAL_COLUMN_DELTA_H_
#define MENTAT_STORAGE_INTERNAL_COLUMN_DELTA_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "internal/key_run.h"

namespace mentat::storage::internal {

// The changes committed to a column since its base was read: for each
// key a commit added or removed, its last state (tx, or 0 for removed), in
// key order. The keys sit in chunks of up to about 2 * kChunkKeys: a
// commit makes the next version by copying the few chunks its changes
// fall in, and the list of chunk pointers, instead of the whole delta.
//
// A value type: copies share the chunks, which are immutable. Readers
// walk it with a Pos; any thread may read it.
class ColumnDelta {
 public:
  static constexpr size_t kChunkKeys = 128;

  // A position: a chunk and a key in it; past the end when chunk ==
  // chunk count.
  struct Pos {
    uint32_t chunk = 0;
    uint32_t off = 0;
  };

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t chunk_count() const { return chunks_.size(); }
  const KeyRun& chunk(size_t i) const { return *chunks_[i]; }

  // This delta with `changes` applied (in key order, each key once; tx 0
  // removes). The chunks no change falls in are shared with this one.
  ColumnDelta With(const KeyRun& changes, bool with_entities) const;

  bool Valid(Pos p) const { return p.chunk < chunks_.size(); }
  std::string_view key(Pos p) const { return chunks_[p.chunk]->key(p.off); }
  EntityId tx(Pos p) const { return chunks_[p.chunk]->txs[p.off]; }
  // AEVT deltas only.
  uint64_t entity(Pos p) const { return chunks_[p.chunk]->entities[p.off]; }
  void Next(Pos* p) const {
    if (++p->off == chunks_[p->chunk]->size()) {
      ++p->chunk;
      p->off = 0;
    }
  }
  // The first entry >= target, searching from `near` (the last answer)
  // outwards.
  Pos LowerBound(std::string_view target, Pos near) const;
  // AEVT: the first entry whose entity is >= e, at or after `from`
  // (lookups by entity come in ascending order).
  Pos SeekEntity(uint64_t e, Pos from) const;

  // Memory held by the chunks (shared ones count fully in every copy).
  size_t charge() const {
    return sizeof(ColumnDelta) + chunks_.capacity() * sizeof(chunks_[0]) +
           bytes_;
  }

  // Appends to *out the keys of `base` with this delta applied (removed
  // keys dropped): the base of the next fold.
  void FoldInto(const KeyRun& base, bool with_entities, KeyRun* out) const;

 private:
  // Appends `run` to chunks_, split into pieces of kChunkKeys when big.
  void AddChunk(std::shared_ptr<const KeyRun> run, bool with_entities);

  std::vector<std::shared_ptr<const KeyRun>> chunks_;
  size_t size_ = 0;
  size_t bytes_ = 0;
};

}  // namespace mentat::storage::internal

#endif  // MENTAT_STORAGE_INTERNAL_COLUMN_DELTA_H_
