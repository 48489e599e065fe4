#ifndef MENTAT_STORAGE_INTERNAL_HASH_SLOTS_H_
#define MENTAT_STORAGE_INTERNAL_HASH_SLOTS_H_

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace mentat::storage::internal {

// A map from nonzero 64-bit hashes (already mixed: their low bits pick the
// slot) to values of V, by linear probing in one array of {hash, value}
// slots, kept at most half full. A lookup whose hash sits where it points
// (most of them) reads one cache line, and Prefetch fetches that line;
// absl's flat_hash_map reads its control bytes first and the slot after,
// two dependent waits where the record cache's probes (RecordCache) are
// spread over far more memory than the CPU's caches hold.
//
// Not thread-safe: RecordCache's shards hold it under their mutex.
template <typename V>
class HashSlots {
 public:
  HashSlots() : slots_(kMinSlots) {}

  // The value of `hash`, or null.
  V* Find(uint64_t hash) {
    for (size_t i = Home(hash);; i = Next(i)) {
      Slot& s = slots_[i];
      if (s.hash == hash) return &s.value;
      if (s.hash == 0) return nullptr;
    }
  }
  // Inserts `value` under `hash`, or replaces the value there.
  void Put(uint64_t hash, V value) {
    if (V* v = Find(hash)) {
      *v = std::move(value);
      return;
    }
    if (2 * (size_ + 1) > slots_.size()) Grow();
    PutNew(hash, std::move(value));
    ++size_;
  }
  // Removes `hash`; false if it was not there.
  bool Erase(uint64_t hash) {
    size_t i = Home(hash);
    while (slots_[i].hash != hash) {
      if (slots_[i].hash == 0) return false;
      i = Next(i);
    }
    // Backward shift: each later entry of the run that may sit at i (its
    // home is not after i in probe order) moves into the hole.
    for (size_t j = Next(i);; j = Next(j)) {
      Slot& s = slots_[j];
      if (s.hash == 0) break;
      const size_t home = Home(s.hash);
      const bool stays =
          i <= j ? (i < home && home <= j) : (i < home || home <= j);
      if (stays) continue;
      slots_[i] = std::move(s);
      i = j;
    }
    slots_[i] = Slot();
    --size_;
    return true;
  }
  // Starts fetching the line a Find(hash) reads first.
  void Prefetch(uint64_t hash) const {
    __builtin_prefetch(&slots_[Home(hash)]);
  }

  size_t size() const { return size_; }
  void Clear() {
    slots_.assign(kMinSlots, Slot());
    size_ = 0;
  }

 private:
  static constexpr size_t kMinSlots = 16;
  struct Slot {
    uint64_t hash = 0;  // 0: empty
    V value{};
  };

  size_t Home(uint64_t hash) const { return hash & (slots_.size() - 1); }
  size_t Next(size_t i) const { return (i + 1) & (slots_.size() - 1); }
  void PutNew(uint64_t hash, V value) {
    size_t i = Home(hash);
    while (slots_[i].hash != 0) i = Next(i);
    slots_[i].hash = hash;
    slots_[i].value = std::move(value);
  }
  void Grow() {
    std::vector<Slot> old(2 * slots_.size());
    old.swap(slots_);
    for (Slot& s : old) {
      if (s.hash != 0) PutNew(s.hash, std::move(s.value));
    }
  }

  std::vector<Slot> slots_;  // a power of two of them
  size_t size_ = 0;
};

}  // namespace mentat::storage::internal

#endif  // MENTAT_STORAGE_INTERNAL_HASH_SLOTS_H_
