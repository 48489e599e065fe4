#ifndef MENTAT_QUERY_EXECUTION_BATCH_H_
#define MENTAT_QUERY_EXECUTION_BATCH_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "mentat/storage/value.h"

namespace mentat::query::execution {

// Rows handed from one operator to the next: `width` values per row (one
// per variable slot of the scope; slots not bound yet hold junk), stored
// row-major in one vector.
//
// Clear() keeps the values, so that the strings of the next rows reuse
// their buffers: an operator that fills the same batch again and again
// allocates only while its rows grow longer than before. The same holds
// from query to query: a batch's values go to its thread's spares when it
// is destroyed, and the thread's next batch starts from them (a served
// query builds its pipeline, and so its batches, anew: without the spares
// each row's strings were allocated and freed once per operator). A
// thread keeps at most kMaxSpareCells values, each with at most
// kMaxSpareText bytes of text buffer.
//
// Thread safety: one thread at a time; a batch may be destroyed on another
// thread than the one that made it (its values go to that thread's spares).
class Batch {
 public:
  static constexpr size_t kDefaultRows = 1024;
  static constexpr size_t kMaxSpareCells = 4096;
  static constexpr size_t kMaxSpareText = 128;

  explicit Batch(int width = 0, size_t capacity = kDefaultRows)
      : width_(width), capacity_(capacity == 0 ? 1 : capacity) {}
  ~Batch() { GiveBackCells(); }
  Batch(Batch&& other) noexcept { *this = std::move(other); }
  Batch& operator=(Batch&& other) noexcept {
    if (this != &other) {
      GiveBackCells();
      width_ = other.width_;
      capacity_ = other.capacity_;
      size_ = std::exchange(other.size_, 0);
      rows_held_ = std::exchange(other.rows_held_, 0);
      touched_rows_ = std::exchange(other.touched_rows_, 0);
      cells_ = std::move(other.cells_);
      other.cells_.clear();
    }
    return *this;
  }
  Batch(const Batch&) = delete;
  Batch& operator=(const Batch&) = delete;

  // The values the calling thread keeps, and a way to free them.
  static size_t ThreadSpareCells();
  static void ReleaseThreadSpares();

  int width() const { return width_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  bool full() const { return size_ >= capacity_; }

  storage::Value* row(size_t i) { return cells_.data() + i * width_; }
  const storage::Value* row(size_t i) const {
    return cells_.data() + i * width_;
  }

  // A new row at the end; its values are whatever the storage held.
  storage::Value* Append() {
    if (size_ == rows_held_) Grow();
    return row(size_++);
  }
  // A new row holding a copy of `src` (width values).
  storage::Value* AppendCopy(const storage::Value* src) {
    storage::Value* dst = Append();
    for (int i = 0; i < width_; ++i) dst[i] = src[i];
    return dst;
  }
  // A new row holding `src`'s values at `slots`; its other values are
  // whatever the storage held. For operators that know which slots of
  // their input rows are bound: copying the rest would copy junk.
  storage::Value* AppendCopy(const storage::Value* src,
                             const std::vector<int32_t>& slots) {
    storage::Value* dst = Append();
    for (const int32_t s : slots) dst[s] = src[s];
    return dst;
  }
  // Drops the last row (a row appended, then rejected by a filter).
  void PopBack() {
    Touched();
    --size_;
  }
  void Clear() {
    Touched();
    size_ = 0;
  }
  // Keeps rows [0, n).
  void Truncate(size_t n) {
    Touched();
    if (n < size_) size_ = n;
  }
  // Moves row `from` onto row `to` (to < from), for in-place compaction.
  void MoveRow(size_t from, size_t to) {
    storage::Value* s = row(from);
    storage::Value* d = row(to);
    for (int i = 0; i < width_; ++i) std::swap(d[i], s[i]);
  }

 private:
  // Room for more rows: doubling up to the capacity (a batch that fills
  // once sized itself a row at a time, a resize per row), then past it
  // one doubling at a time for the operators that overfill.
  void Grow() {
    if (cells_.empty() && width_ > 0) {
      // First growth: the thread's spare values, when they hold a row.
      TakeSpareCells();
      rows_held_ = cells_.size() / static_cast<size_t>(width_);
      if (rows_held_ > size_) return;
    }
    size_t rows = std::max<size_t>(1, rows_held_ * 2);
    if (rows_held_ < capacity_) rows = std::min(rows, capacity_);
    rows_held_ = std::max(rows, size_ + 1);
    cells_.resize(rows_held_ * static_cast<size_t>(width_));
  }

  // Moves the thread's most recently kept spare values into the empty
  // cells_ (none when it has none).
  void TakeSpareCells();
  // Keeps cells_ among the thread's spares (within the limits above), or
  // lets it go.
  void GiveBackCells();

  int width_ = 0;
  size_t capacity_ = 1;
  size_t size_ = 0;
  size_t rows_held_ = 0;  // the rows cells_ has room for
  // The most rows held at once so far: only their values can have been
  // written since the cells were taken (the rest were bounded when they
  // were kept), so GiveBackCells bounds only these.
  size_t touched_rows_ = 0;
  void Touched() { touched_rows_ = std::max(touched_rows_, size_); }
  std::vector<storage::Value> cells_;
};

}  // namespace mentat::query::execution

#endif  // MENTAT_QUERY_EXECUTION_BATCH_H_
