#ifndef MENTAT_QUERY_EXECUTION_ROW_SET_H_
#define MENTAT_QUERY_EXECUTION_ROW_SET_H_

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "execution/join_value.h"
#include "mentat/storage/value.h"

namespace mentat::query::execution {

// A set of fixed-width rows, append-only: rows keep their index for the
// set's life, in insertion order. Equality is JoinEq per value. The hash
// table holds only row indexes; the rows live in one flat vector.
//
// Not movable (the hash functors point at the set).
class RowSet {
 public:
  explicit RowSet(int width);
  RowSet(const RowSet&) = delete;
  RowSet& operator=(const RowSet&) = delete;

  int width() const { return width_; }
  uint32_t size() const { return size_; }

  // Makes room for `rows` rows without rehashing.
  void Reserve(size_t rows);
  // Inserts a copy of `row` (width values) unless an equal row is there.
  // Returns the row's index and whether it was inserted.
  std::pair<uint32_t, bool> Insert(const storage::Value* row);
  // As Insert, but moves the values of an inserted row in (`row` is left
  // moved-from); a row already there is left alone.
  std::pair<uint32_t, bool> InsertMoving(storage::Value* row);
  // Hands over every row, back to back in insertion order, and empties
  // the set.
  std::vector<storage::Value> ReleaseRows();
  // The index of a row equal to `row`, or -1.
  int64_t Find(const storage::Value* row) const;

  const storage::Value* row(uint32_t i) const {
    return cells_.data() + static_cast<size_t>(i) * width_;
  }
  // Approximate bytes held, for the memory budget.
  size_t bytes() const { return bytes_; }

 private:
  struct Probe {
    const storage::Value* row;
  };
  struct Hash {
    using is_transparent = void;
    const RowSet* set;
    size_t operator()(uint32_t i) const {
      return HashRow(set->row(i), set->width_);
    }
    size_t operator()(Probe p) const { return HashRow(p.row, set->width_); }
  };
  struct Eq {
    using is_transparent = void;
    const RowSet* set;
    bool operator()(uint32_t a, uint32_t b) const { return a == b; }
    bool operator()(uint32_t a, Probe b) const {
      return RowsEq(set->row(a), b.row, set->width_);
    }
    bool operator()(Probe a, uint32_t b) const {
      return RowsEq(a.row, set->row(b), set->width_);
    }
  };

  template <typename Row>
  std::pair<uint32_t, bool> InsertRow(Row row);

  int width_;
  uint32_t size_ = 0;
  size_t bytes_ = 0;
  std::vector<storage::Value> cells_;
  absl::flat_hash_set<uint32_t, Hash, Eq> index_;
};

// Groups row indexes by a key of `key_width` values: for each key a chain
// of the rows added under it, newest first. Rows must be added in
// increasing index order (the owner's append order), which lets a reader
// skip rows added after a point by their index alone.
class ChainIndex {
 public:
  static constexpr uint32_t kEnd = 0xffffffffu;

  explicit ChainIndex(int key_width) : keys_(key_width) {}

  void Add(const storage::Value* key, uint32_t row);
  // The newest row added under `key`, or kEnd.
  uint32_t Head(const storage::Value* key) const;
  // The row added before `row` under the same key, or kEnd.
  uint32_t Next(uint32_t row) const { return next_[row]; }

  size_t bytes() const {
    return keys_.bytes() + heads_.capacity() * 4 + next_.capacity() * 4;
  }

 private:
  RowSet keys_;
  std::vector<uint32_t> heads_;  // by key index
  std::vector<uint32_t> next_;   // by row index
};

}  // namespace mentat::query::execution

#endif  // MENTAT_QUERY_EXECUTION_ROW_SET_H_
