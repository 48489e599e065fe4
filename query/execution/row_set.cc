#include "execution/row_set.h"

namespace mentat::query::execution {

RowSet::RowSet(int width) : width_(width), index_(0, Hash{this}, Eq{this}) {}

std::pair<uint32_t, bool> RowSet::Insert(const storage::Value* row) {
  auto it = index_.find(Probe{row});
  if (it != index_.end()) return {*it, false};
  const uint32_t i = size_;
  for (int c = 0; c < width_; ++c) {
    cells_.push_back(row[c]);
    bytes_ += ValueBytes(row[c]);
  }
  ++size_;
  index_.insert(i);
  // The hash table's slot and control byte per row.
  bytes_ += 5;
  return {i, true};
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
