#include "internal/column_delta.h"

#include <algorithm>

namespace mentat::storage::internal {

ColumnDelta ColumnDelta::With(const KeyRun& changes, bool with_entities) const {
  if (changes.empty()) return *this;
  ColumnDelta out;
  if (chunks_.empty()) {
    out.AddChunk(std::make_shared<const KeyRun>(changes), with_entities);
    return out;
  }
  out.chunks_.reserve(chunks_.size() + 2);
  size_t c = 0;  // the first change not yet placed
  for (size_t i = 0; i < chunks_.size(); ++i) {
    const KeyRun& chunk = *chunks_[i];
    // A chunk takes the changes up to its last key; the last chunk takes
    // the rest.
    size_t end = changes.size();
    if (i + 1 < chunks_.size()) {
      const std::string_view last = chunk.key(chunk.size() - 1);
      end = GallopLowerBound(c, c, changes.size(),
                             [&](size_t k) { return changes.key(k) <= last; });
    }
    if (end == c) {
      out.chunks_.push_back(chunks_[i]);
      out.size_ += chunk.size();
      out.bytes_ += chunk.charge();
      continue;
    }
    auto merged = std::make_shared<KeyRun>();
    size_t pos = 0;
    MergeRunPart(chunk, &pos, changes, c, end, /*keep_removed=*/true,
                 with_entities, merged.get());
    merged->AppendRange(chunk, pos, chunk.size());
    out.AddChunk(std::move(merged), with_entities);
    c = end;
  }
  return out;
}

void ColumnDelta::AddChunk(std::shared_ptr<const KeyRun> run,
                           bool with_entities) {
  (void)with_entities;
  const size_t n = run->size();
  if (n <= 2 * kChunkKeys) {
    size_ += n;
    bytes_ += run->charge();
    chunks_.push_back(std::move(run));
    return;
  }
  for (size_t begin = 0; begin < n; begin += kChunkKeys) {
    auto piece = std::make_shared<KeyRun>();
    piece->AppendRange(*run, begin, std::min(n, begin + kChunkKeys));
    size_ += piece->size();
    bytes_ += piece->charge();
    chunks_.push_back(std::move(piece));
  }
}

ColumnDelta::Pos ColumnDelta::LowerBound(std::string_view target,
                                         Pos near) const {
  const size_t n = chunks_.size();
  const size_t i = GallopLowerBound(near.chunk, 0, n, [&](size_t k) {
    const KeyRun& chunk = *chunks_[k];
    return chunk.key(chunk.size() - 1) < target;
  });
  if (i == n) return Pos{static_cast<uint32_t>(n), 0};
  const KeyRun& chunk = *chunks_[i];
  const size_t off =
      RunLowerBound(chunk, i == near.chunk ? near.off : 0, 0, target);
  return Pos{static_cast<uint32_t>(i), static_cast<uint32_t>(off)};
}

ColumnDelta::Pos ColumnDelta::SeekEntity(uint64_t e, Pos from) const {
  const size_t n = chunks_.size();
  if (from.chunk >= n) return from;
  size_t i = from.chunk;
  size_t near = from.off;
  if (chunks_[i]->entities.back() < e) {
    i = GallopLowerBound(i + 1, i + 1, n, [&](size_t k) {
      return chunks_[k]->entities.back() < e;
    });
    if (i == n) return Pos{static_cast<uint32_t>(n), 0};
    near = 0;
  }
  const RunArray<uint64_t>& entities = chunks_[i]->entities;
  const size_t off = GallopLowerBound(
      near, near, entities.size(), [&](size_t k) { return entities[k] < e; });
  return Pos{static_cast<uint32_t>(i), static_cast<uint32_t>(off)};
}

void ColumnDelta::FoldInto(const KeyRun& base, bool with_entities,
                           KeyRun* out) const {
  const size_t n = base.size() + size_;
  out->keys.reserve(base.keys.size() + bytes_);
  out->ends.reserve(n);
  out->txs.reserve(n);
  if (with_entities) out->entities.reserve(n);
  size_t pos = 0;
  for (const auto& chunk : chunks_) {
    MergeRunPart(base, &pos, *chunk, 0, chunk->size(),
                 /*keep_removed=*/false, with_entities, out);
  }
  out->AppendRange(base, pos, base.size());
}

}  // namespace mentat::storage::internal
