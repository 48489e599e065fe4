#ifndef MENTAT_STORAGE_INTERNAL_LAYERED_CURSOR_H_
#define MENTAT_STORAGE_INTERNAL_LAYERED_CURSOR_H_

#include <memory>
#include <string_view>

#include "absl/status/status.h"
#include "mentat/storage/datom_cursor.h"
#include "mentat/storage/keys.h"

namespace mentat::storage::internal {

// A cursor in front of another: it answers the seeks it can from memory
// (a record, a column) and hands the rest to the cursor it wraps. A
// subclass implements Seek, SeekWithin and Next: in its own mode it moves
// its position and calls SetCurrent; for a seek it cannot answer it calls
// UseFallback, and then forwards SeekWithin and Next while fallback_mode_.
//
// Not thread-safe, like every DatomCursor.
class LayeredCursor : public DatomCursor {
 public:
  explicit LayeredCursor(std::unique_ptr<DatomCursor> fallback)
      : fallback_(std::move(fallback)) {}

  // What the cursor serves itself it seeks within as SeekWithin does (a
  // search in memory); the fallback steps forward itself.
  void SeekForward(std::string_view target) final {
    if (fallback_mode_) return fallback_->SeekForward(target);
    SeekWithin(target);
  }
  // The fallback skips what it serves; the cursor's own keys are stepped
  // over one by one unless a subclass knows better.
  uint64_t SkipPrefix(std::string_view prefix, uint64_t limit) override {
    if (fallback_mode_) return fallback_->SkipPrefix(prefix, limit);
    return DatomCursor::SkipPrefix(prefix, limit);
  }
  bool Valid() const final {
    return fallback_mode_ ? fallback_->Valid() : valid_;
  }
  const Datom& datom() const final {
    return fallback_mode_ ? fallback_->datom() : datom_;
  }
  std::string_view key() const final {
    return fallback_mode_ ? fallback_->key() : key_;
  }
  // What the cursor serves itself it prefetches itself (PrefetchOwn);
  // the rest is the fallback's to prefetch.
  void Prefetch(std::string_view prefix, int step) final {
    if (!PrefetchOwn(prefix, step)) fallback_->Prefetch(prefix, step);
  }
  void SetKeysOnly(bool keys_only) final {
    keys_only_ = keys_only;
    fallback_->SetKeysOnly(keys_only);
  }
  void SetSkipValue(bool skip_value) final {
    skip_value_ = skip_value;
    fallback_->SetSkipValue(skip_value);
  }
  void SetBulk(bool bulk) final {
    bulk_ = bulk;
    fallback_->SetBulk(bulk);
  }
  [[nodiscard]] absl::Status status() const final {
    if (!status_.ok()) return status_;
    return fallback_mode_ ? fallback_->status() : absl::OkStatus();
  }

 protected:
  // False: a Seek of `prefix` would go to the fallback.
  virtual bool PrefetchOwn(std::string_view prefix, int step) = 0;

  void UseFallback(std::string_view prefix) {
    fallback_mode_ = true;
    fallback_->Seek(prefix);
  }
  // Makes `key` (in `order`), asserted by `tx`, the current datom: decoded
  // unless keys only. False on a malformed key (status_ says why).
  bool SetCurrent(IndexOrder order, std::string_view key, EntityId tx) {
    key_ = key;
    if (!keys_only_) {
      absl::Status s = skip_value_ ? DecodeKeyIds(order, key, &datom_)
                                   : DecodeKey(order, key, &datom_);
      if (!s.ok()) {
        status_ = s;
        valid_ = false;
        return false;
      }
      datom_.tx = tx;
      datom_.added = true;
    }
    valid_ = true;
    return true;
  }

  std::unique_ptr<DatomCursor> fallback_;
  bool fallback_mode_ = false;
  bool valid_ = false;  // own mode: positioned on a datom
  bool bulk_ = false;   // SetBulk: misses are not cached
  absl::Status status_;

 private:
  bool keys_only_ = false;
  bool skip_value_ = false;
  Datom datom_;
  std::string_view key_;
};

}  // namespace mentat::storage::internal

#endif  // MENTAT_STORAGE_INTERNAL_LAYERED_CURSOR_H_
