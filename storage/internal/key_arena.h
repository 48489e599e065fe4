#ifndef MENTAT_STORAGE_INTERNAL_KEY_ARENA_H_
#define MENTAT_STORAGE_INTERNAL_KEY_ARENA_H_

#include <algorithm>
#include <cstring>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

namespace mentat::storage::internal {

// Copies of the keys and values a batch writes, in blocks of a megabyte:
// one allocation per block instead of one per key (most keys are longer
// than std::string's inline buffer). A view Intern returns stays valid
// until the arena is destroyed, or until Release hands its blocks over.
// Not thread-safe: the transactor thread owns it.
class KeyArena {
 public:
  using Blocks = std::vector<std::unique_ptr<char[]>>;

  // A copy of `bytes` in the arena. Empty bytes (a delete's value) need no
  // copy: they come back as an empty view.
  std::string_view Intern(std::string_view bytes) {
    // memcpy from an empty value's null data, and blocks_.back() before
    // the first block, would be undefined.
    if (bytes.empty()) return std::string_view();
    if (used_ + bytes.size() > size_) {
      size_ = std::max(kBlock, bytes.size());
      if (size_ == kBlock && !spare_.empty()) {
        blocks_.push_back(std::move(spare_.back()));
        spare_.pop_back();
      } else {
        // Not zeroed: every byte handed out is copied over first.
        blocks_.push_back(std::make_unique_for_overwrite<char[]>(size_));
      }
      used_ = 0;
    }
    char* dst = blocks_.back().get() + used_;
    std::memcpy(dst, bytes.data(), bytes.size());
    used_ += bytes.size();
    return std::string_view(dst, bytes.size());
  }

  // Hands every block (and with them the views interned so far) to the
  // caller, and starts empty.
  // Takes back `blocks` that Release handed over, once nothing views
  // them: the next blocks come from them (their pages are mapped already)
  // instead of new allocations. Every block holds at least kBlock bytes.
  void Recycle(Blocks blocks) {
    for (auto& block : blocks) spare_.push_back(std::move(block));
  }

  Blocks Release() {
    Blocks out = std::move(blocks_);
    blocks_.clear();
    used_ = size_ = 0;
    return out;
  }

 private:
  static constexpr size_t kBlock = size_t{1} << 20;

  Blocks blocks_;
  Blocks spare_;  // recycled, for the next blocks
  size_t used_ = 0;
  size_t size_ = 0;
};

}  // namespace mentat::storage::internal

#endif  // MENTAT_STORAGE_INTERNAL_KEY_ARENA_H_
