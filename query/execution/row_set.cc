#include "execution/row_set.h"

#include <type_traits>

namespace mentat::query::execution {

RowSet::RowSet(int width) : width_(width), index_(0, Hash{this}, Eq{this}) {}

template <typename Row>
std::pair<uint32_t, bool> RowSet::InsertRow(Row row) {
  bool inserted = false;
  // One hash of the row, whether it is found or inserted.
  auto it = index_.lazy_emplace(Probe{row}, [&](const auto& construct) {
    inserted = true;
    for (int c = 0; c < width_; ++c) {
      bytes_ += ValueBytes(row[c]);
      if constexpr (std::is_const_v<std::remove_pointer_t<Row>>) {
        cells_.push_back(row[c]);
      } else {
        cells_.push_back(std::move(row[c]));
      }
    }
    construct(size_++);
  });
  // The hash table's slot and control byte per row.
  if (inserted) bytes_ += 5;
  return {*it, inserted};
}

void RowSet::Reserve(size_t rows) {
  cells_.reserve(rows * static_cast<size_t>(width_));
  index_.reserve(rows);
}

std::pair<uint32_t, bool> RowSet::Insert(const storage::Value* row) {
  return InsertRow(row);
}

std::pair<uint32_t, bool> RowSet::InsertMoving(storage::Value* row) {
  return InsertRow(row);
}

std::vector<storage::Value> RowSet::ReleaseRows() {
  index_.clear();
  size_ = 0;
  bytes_ = 0;
  std::vector<storage::Value> rows = std::move(cells_);
  cells_.clear();
  return rows;
}

int64_t RowSet::Find(const storage::Value* row) const {
  auto it = index_.find(Probe{row});
  return it == index_.end() ? -1 : static_cast<int64_t>(*it);
}

void ChainIndex::Add(const storage::Value* key, uint32_t row) {
  auto [k, inserted] = keys_.Insert(key);
  if (inserted) heads_.push_back(kEnd);
  if (next_.size() <= row) next_.resize(static_cast<size_t>(row) + 1, kEnd);
  next_[row] = heads_[k];
  heads_[k] = row;
}

uint32_t ChainIndex::Head(const storage::Value* key) const {
  const int64_t k = keys_.Find(key);
  return k < 0 ? kEnd : heads_[static_cast<size_t>(k)];
}

}  // namespace mentat::query::execution
