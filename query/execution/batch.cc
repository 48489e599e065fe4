#include "execution/batch.h"

#include <algorithm>

namespace mentat::query::execution {

namespace {

// A thread's spare batch values, the most recently returned last.
struct SpareCells {
  std::vector<std::vector<storage::Value>> vectors;
  size_t cells = 0;
};

// Few vectors are in use at once (one per operator of a pipeline); more
// spares than this would only be memory.
constexpr size_t kMaxSpareVectors = 16;

SpareCells& ThreadSpares() {
  thread_local SpareCells spares;
  return spares;
}

}  // namespace

size_t Batch::ThreadSpareCells() { return ThreadSpares().cells; }

void Batch::ReleaseThreadSpares() {
  SpareCells& spares = ThreadSpares();
  spares.vectors.clear();
  spares.cells = 0;
}

void Batch::TakeSpareCells() {
  SpareCells& spares = ThreadSpares();
  if (spares.vectors.empty()) return;
  cells_ = std::move(spares.vectors.back());
  spares.vectors.pop_back();
  spares.cells -= cells_.size();
}

void Batch::GiveBackCells() {
  if (cells_.empty()) return;
  SpareCells& spares = ThreadSpares();
  if (spares.vectors.size() >= kMaxSpareVectors ||
      spares.cells + cells_.size() > kMaxSpareCells) {
    return;  // cells_ is freed with the batch
  }
  Touched();
  const size_t touched = std::min(
      cells_.size(), touched_rows_ * static_cast<size_t>(std::max(width_, 0)));
  for (size_t i = 0; i < touched; ++i) {
    if (cells_[i].text_capacity() > kMaxSpareText) cells_[i].ReleaseText();
  }
  spares.cells += cells_.size();
  spares.vectors.push_back(std::move(cells_));
  cells_.clear();
  touched_rows_ = 0;
}

}  // namespace mentat::query::execution
