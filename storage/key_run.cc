#include "internal/key_run.h"

#include <algorithm>

#include "internal/coding.h"

namespace mentat::storage::internal {
namespace {

// Every key of an attribute's run starts with the attribute's id; an AEVT
// key's entity id follows.
constexpr size_t kIdBytes = 8;

}  // namespace

void KeyRun::Append(std::string_view key, EntityId tx, bool with_entity) {
  keys.append(key.data(), key.data() + key.size());
  ends.push_back(static_cast<uint32_t>(keys.size()));
  txs.push_back(tx);
  if (with_entity) {
    entities.push_back(DecodeFixed64BE(key.substr(kIdBytes, 8)));
  }
}

void KeyRun::AppendRange(const KeyRun& from, size_t begin, size_t end) {
  if (begin >= end) return;
  const uint32_t from_begin = begin == 0 ? 0 : from.ends[begin - 1];
  const uint32_t from_end = from.ends[end - 1];
  // Key i's end moves by the difference of where the stretch starts.
  const uint32_t shift = static_cast<uint32_t>(keys.size()) - from_begin;
  keys.append(from.keys.data() + from_begin, from.keys.data() + from_end);
  const size_t at = ends.size();
  ends.resize(at + (end - begin));
  uint32_t* out = ends.mutable_data() + at;
  for (size_t i = begin; i < end; ++i) out[i - begin] = from.ends[i] + shift;
  txs.append(from.txs.data() + begin, from.txs.data() + end);
  if (!from.entities.empty()) {
    entities.append(from.entities.data() + begin, from.entities.data() + end);
  }
}

void KeyRun::ShrinkToFit() {
  keys.shrink_to_fit();
  ends.shrink_to_fit();
  txs.shrink_to_fit();
  entities.shrink_to_fit();
}

size_t RunLowerBound(const KeyRun& run, size_t near, size_t from,
                     std::string_view target) {
  constexpr size_t kEntityEnd = 2 * kIdBytes;
  if (!run.entities.empty() && target.size() >= kEntityEnd) {
    // AEVT: every key starts with the attribute, so the entity decides
    // up to the keys of the target's own entity, which are few.
    const uint64_t e = DecodeFixed64BE(target.substr(kIdBytes, 8));
    size_t i = GallopLowerBound(near, from, run.size(),
                                [&](size_t k) { return run.entities[k] < e; });
    // A target of attribute and entity alone is below all of them.
    if (target.size() == kEntityEnd) return i;
    while (i < run.size() && run.entities[i] == e && run.key(i) < target) ++i;
    return i;
  }
  return GallopLowerBound(near, from, run.size(),
                          [&](size_t k) { return run.key(k) < target; });
}

void MergeRunPart(const KeyRun& run, size_t* pos, const KeyRun& changes,
                  size_t changes_begin, size_t changes_end, bool keep_removed,
                  bool with_entity, KeyRun* out) {
  for (size_t c = changes_begin; c < changes_end; ++c) {
    const std::string_view key = changes.key(c);
    const size_t at = RunLowerBound(run, *pos, *pos, key);
    out->AppendRange(run, *pos, at);
    *pos = at;
    if (*pos < run.size() && run.key(*pos) == key) ++*pos;  // replaced
    if (changes.txs[c] != 0 || keep_removed) {
      out->Append(key, changes.txs[c], with_entity);
    }
  }
}

void MergeRun(const KeyRun& run, const KeyRun& changes, bool keep_removed,
              bool with_entity, KeyRun* out) {
  const size_t n = run.size() + changes.size();
  out->keys.reserve(run.keys.size() + changes.keys.size());
  out->ends.reserve(n);
  out->txs.reserve(n);
  if (with_entity) out->entities.reserve(n);
  size_t pos = 0;
  MergeRunPart(run, &pos, changes, 0, changes.size(), keep_removed, with_entity,
               out);
  out->AppendRange(run, pos, run.size());
}

void ChangeListBuilder::Add(std::string_view key, EntityId tx) {
  offsets_.push_back(Entry{static_cast<uint32_t>(keys_.size()),
                           static_cast<uint32_t>(key.size()), tx});
  keys_.append(key);
}

KeyRun ChangeListBuilder::Finish() {
  auto key_of = [&](const Entry& e) {
    return std::string_view(keys_).substr(e.offset, e.size);
  };
  // Stable: of one key's entries, the last given stays last.
  std::stable_sort(
      offsets_.begin(), offsets_.end(),
      [&](const Entry& a, const Entry& b) { return key_of(a) < key_of(b); });
  KeyRun out;
  for (size_t i = 0; i < offsets_.size(); ++i) {
    if (i + 1 < offsets_.size() &&
        key_of(offsets_[i]) == key_of(offsets_[i + 1])) {
      continue;  // a later change of the same key wins
    }
    out.Append(key_of(offsets_[i]), offsets_[i].tx, with_entity_);
  }
  keys_.clear();
  offsets_.clear();
  return out;
}

}  // namespace mentat::storage::internal
