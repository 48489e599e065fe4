#ifndef MENTAT_STORAGE_INTERNAL_KEY_RUN_H_
#define MENTAT_STORAGE_INTERNAL_KEY_RUN_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "mentat/storage/datom.h"

namespace mentat::storage::internal {

// An array a KeyRun fills (owned, growing like a vector), or a read-only
// view of memory someone else keeps alive (a mapped column image:
// KeyRun::mapping). Reads go through one pointer either way, with no
// branch: the hot loops index it millions of times a query.
template <typename T>
class RunArray {
 public:
  RunArray() = default;
  RunArray(const RunArray& other) { *this = other; }
  RunArray(RunArray&& other) noexcept { *this = std::move(other); }
  RunArray& operator=(const RunArray& other) {
    if (this == &other) return *this;
    own_ = other.own_;
    Sync();
    if (other.viewing()) View(other.data_, other.size_);
    return *this;
  }
  RunArray& operator=(RunArray&& other) noexcept {
    if (this == &other) return *this;
    const bool view = other.viewing();
    const T* data = other.data_;
    const size_t size = other.size_;
    own_ = std::move(other.own_);
    Sync();
    if (view) View(data, size);
    other.own_.clear();
    other.Sync();
    return *this;
  }

  const T* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const T& operator[](size_t i) const { return data_[i]; }
  const T& back() const { return data_[size_ - 1]; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  // Bytes of memory it stands for (owned or viewed).
  size_t bytes() const {
    return (viewing() ? size_ : own_.capacity()) * sizeof(T);
  }

  // Growing: owned arrays only.
  void push_back(const T& v) {
    own_.push_back(v);
    Sync();
  }
  void append(const T* first, const T* last) {
    own_.insert(own_.end(), first, last);
    Sync();
  }
  void resize(size_t n) {
    own_.resize(n);
    Sync();
  }
  void reserve(size_t n) {
    own_.reserve(n);
    Sync();
  }
  void shrink_to_fit() {
    own_.shrink_to_fit();
    Sync();
  }
  T* mutable_data() { return own_.data(); }
  // Makes it a view of [data, data + size), dropping what it owned.
  void View(const T* data, size_t size) {
    own_ = std::vector<T>();
    data_ = data;
    size_ = size;
  }

 private:
  bool viewing() const { return data_ != own_.data() && size_ > 0; }
  void Sync() {
    data_ = own_.data();
    size_ = own_.size();
  }

  std::vector<T> own_;
  const T* data_ = nullptr;
  size_t size_ = 0;
};

// Keys of one index order in key order, each with a tx, packed into a few
// flat arrays: the base of an attribute's column, a chunk of its delta, a
// commit's changes, an order of a since() index. A scan over one steps
// through memory (about 10x fewer instructions per key than RocksDB's
// merging iterator), and copying a stretch of one is a few memcpys.
//
// In a base, every tx is the key's asserting tx. In a list of changes (a
// delta, a commit's), a tx of 0 says the key was removed; any other tx
// says it is present, asserted by that tx.
//
// Not thread-safe while it is filled; immutable and shared once published
// (through shared_ptr<const KeyRun>). A run read from a column image
// views the mapped file, which `mapping` keeps mapped.
struct KeyRun {
  RunArray<char> keys;      // the keys, back to back
  RunArray<uint32_t> ends;  // ends[i]: where key i ends in `keys`
  RunArray<EntityId> txs;   // the tx of key i; 0: removed (changes)
  // AEVT runs of one attribute only: the entity of key i (its bytes 8-16,
  // as an unsigned number), so that seeks by entity search a dense array
  // of integers.
  RunArray<uint64_t> entities;
  std::shared_ptr<const void> mapping;  // what views point into, if any

  size_t size() const { return ends.size(); }
  bool empty() const { return ends.empty(); }
  std::string_view key(size_t i) const {
    const uint32_t begin = i == 0 ? 0 : ends[i - 1];
    return std::string_view(keys.data() + begin, ends[i] - begin);
  }
  // Appends one key. With `with_entity`, it must be an AEVT key (at least
  // 16 bytes).
  void Append(std::string_view key, EntityId tx, bool with_entity);
  // Appends keys [begin, end) of `from` (same order and entity layout).
  void AppendRange(const KeyRun& from, size_t begin, size_t end);
  // Releases the spare capacity of a run that is done growing.
  void ShrinkToFit();
  // Memory held, for cache accounting (a mapped run's file too: it is in
  // memory once read).
  size_t charge() const {
    return sizeof(KeyRun) + keys.bytes() + ends.bytes() + txs.bytes() +
           entities.bytes();
  }
};

// The first index in [lo, hi) whose element is not below the target
// (`below(i)`), for elements in order. Joins look up keys in order, and a
// range seek lands next to the one before it, so the search first gallops
// from `near` (the last answer), forward or back: a target near it costs a
// few comparisons instead of a binary search's twenty cache lines.
template <typename Below>
size_t GallopLowerBound(size_t near, size_t lo, size_t hi, Below below) {
  if (near >= lo && near < hi) {
    size_t step = 1;
    if (below(near)) {
      lo = near + 1;
      while (lo + step < hi && below(lo + step)) {
        lo += step + 1;
        step *= 2;
      }
      hi = std::min(hi, lo + step + 1);
    } else {
      hi = near;  // the answer is at most near
      while (hi - lo > step) {
        if (below(hi - step)) {
          lo = hi - step + 1;
          break;
        }
        hi -= step;
        step *= 2;
      }
    }
  }
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (below(mid)) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

// The first key of `run` at or after `from` that is >= `target`
// (galloping from `near`). A run with entities must hold one attribute.
size_t RunLowerBound(const KeyRun& run, size_t near, size_t from,
                     std::string_view target);

// Appends to *out the keys of `run` with `changes` [changes_begin,
// changes_end) applied (keys in order, no key twice): a change replaces
// the key it names, or adds it. A change with tx 0 removes its key; with
// `keep_removed` (a delta taking newer changes) it is kept as an entry
// with tx 0, without (folding a delta into a base) it is dropped. Starts
// at run key *pos and stops after the last change, leaving *pos at the
// first key of `run` not yet consumed: the caller appends the rest, or
// merges more changes. Costs the size of the output, mostly in memcpys.
// With `with_entity`, the runs are AEVT.
void MergeRunPart(const KeyRun& run, size_t* pos, const KeyRun& changes,
                  size_t changes_begin, size_t changes_end, bool keep_removed,
                  bool with_entity, KeyRun* out);

// MergeRunPart over all of `run` and `changes`, into an empty *out.
void MergeRun(const KeyRun& run, const KeyRun& changes, bool keep_removed,
              bool with_entity, KeyRun* out);

// Sorts `keys` (with their txs) and keeps, for a key given more than
// once, the last one given: the list of changes of a commit whose datoms
// touched the keys in that order.
class ChangeListBuilder {
 public:
  explicit ChangeListBuilder(bool with_entity) : with_entity_(with_entity) {}
  void Add(std::string_view key, EntityId tx);
  bool empty() const { return offsets_.empty(); }
  // The changes in key order; the builder is left empty.
  KeyRun Finish();

 private:
  struct Entry {
    uint32_t offset, size;
    EntityId tx;
  };
  bool with_entity_;
  std::string keys_;
  std::vector<Entry> offsets_;
};

}  // namespace mentat::storage::internal

#endif  // MENTAT_STORAGE_INTERNAL_KEY_RUN_H_
