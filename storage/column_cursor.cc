// Scans of one attribute (AEVT or AVET) served from a version of its
// AttributeColumn (internal/column_cache.h) when the attribute has one:
// the base's keys merged with the delta's changes. Otherwise from the
// ordinary cursor, counting the keys it steps over so that an attribute
// read in bulk gets a column.

#include <algorithm>
#include <cstdint>
#include <string>

#include "internal/coding.h"
#include "internal/column_cache.h"
#include "internal/cursors.h"
#include "internal/layered_cursor.h"
#include "mentat/storage/keys.h"

namespace mentat::storage::internal {
namespace {

// Keys read from RocksDB are reported to the cache in lots of at least
// this many (one lock per lot), and when the cursor moves to another
// attribute or goes away.
constexpr uint64_t kReportRows = 4096;

class ColumnCursor : public LayeredCursor {
 public:
  ColumnCursor(IndexOrder order, ColumnCache* cache, EntityId t,
               std::unique_ptr<DatomCursor> fallback)
      : LayeredCursor(std::move(fallback)),
        order_(order),
        cache_(cache),
        t_(t) {}

  ~ColumnCursor() override { Report(); }

  void Seek(std::string_view prefix) override {
    valid_ = false;
    fallback_mode_ = false;
    if (prefix.size() < kEntityPrefixBytes) return FallBack(prefix);
    const auto attribute = static_cast<EntityId>(
        DecodeFixed64BE(prefix.substr(0, kEntityPrefixBytes)));
    if (attribute != attribute_) {
      Report();
      attribute_ = attribute;
      // Looked up once per attribute: the version held from an earlier
      // seek stays right for this cursor's basis whatever commits and
      // folds come after.
      column_ = cache_->Find(order_, attribute, t_);
      base_ = column_ ? column_->base.get() : nullptr;
      b_ = 0;
      d_ = ColumnDelta::Pos();
    }
    if (!column_) return FallBack(prefix);
    prefix_.assign(prefix);
    b_ = RunLowerBound(*base_, b_, 0, prefix_);
    begin_ = b_;
    Position(prefix_);
  }

  void SeekWithin(std::string_view target) override {
    if (fallback_mode_) return fallback_->SeekWithin(target);
    if (!column_) return;
    b_ = RunLowerBound(*base_, b_, begin_, target);
    Position(target);
  }

  void Next() override {
    if (fallback_mode_) {
      ++scanned_;
      return fallback_->Next();
    }
    if (from_delta_) {
      StepDelta();
    } else {
      ++b_;
    }
    Settle();
  }

  // Base keys before stop_ come before the delta's next key, so a run of
  // them under `prefix` is counted by one search of the base.
  uint64_t SkipPrefix(std::string_view prefix, uint64_t limit) override {
    if (fallback_mode_) {
      const uint64_t n = fallback_->SkipPrefix(prefix, limit);
      scanned_ += n;
      return n;
    }
    // `prefix` starts with prefix_ (the contract), so it bounds the run.
    const std::string end_key = PrefixSuccessor(prefix);
    uint64_t n = 0;
    while (n < limit && valid_ && key().starts_with(prefix)) {
      if (from_delta_ || b_ >= stop_) {
        Next();
        ++n;
        continue;
      }
      size_t end =
          end_key.empty()
              ? stop_
              : std::min(stop_, RunLowerBound(*base_, b_, b_, end_key));
      if (end - b_ > limit - n) end = b_ + (limit - n);
      n += end - b_;
      b_ = end;
      Settle();
    }
    return n;
  }

 private:
  // A column serves the seek: nothing to hint. Prefetching the entity's
  // key ahead (found by a second search of the entity array) cost q4 at m
  // about 4% more than it saved: sorted probes walk the column forward.
  bool PrefetchOwn(std::string_view prefix, int step) override {
    (void)step;
    return column_ != nullptr && prefix.size() >= kEntityPrefixBytes &&
           static_cast<EntityId>(DecodeFixed64BE(
               prefix.substr(0, kEntityPrefixBytes))) == attribute_;
  }

  void FallBack(std::string_view prefix) {
    UseFallback(prefix);
    if (scanned_ >= kReportRows) Report();
  }

  void Report() {
    if (scanned_ >= cache_->min_report_rows() && attribute_ != 0) {
      cache_->CountScanned(order_, attribute_, scanned_);
    }
    scanned_ = 0;
  }

  // b_ is at the base's first key >= target: finds the delta's, then the
  // first visible key.
  void Position(std::string_view target) {
    if (!column_->delta.empty()) {
      d_ = column_->delta.LowerBound(target, d_);
    } else {
      d_ = ColumnDelta::Pos();
    }
    StopAtDelta();
    Settle();
  }

  // The base keys before stop_ come before the delta's next key: they
  // are walked without looking at the delta.
  void StopAtDelta() {
    const ColumnDelta& delta = column_->delta;
    stop_ = delta.Valid(d_) ? RunLowerBound(*base_, b_, b_, delta.key(d_))
                            : base_->size();
  }

  // Past the delta's current key, and past the base key it replaced.
  void StepDelta() {
    column_->delta.Next(&d_);
    if (shadow_) ++b_;
    StopAtDelta();
  }

  // Moves to the next key present in the version (the base's unless the
  // delta removed or replaced it, and the delta's own), if it is under
  // prefix_.
  void Settle() {
    valid_ = false;
    // The common case, and the only one without a delta: a base key the
    // delta leaves alone (one test, no look at the delta).
    if (b_ < stop_) {
      from_delta_ = false;
      const std::string_view key = base_->key(b_);
      if (key.starts_with(prefix_)) SetCurrent(order_, key, base_->txs[b_]);
      return;
    }
    SettleInDelta();
  }

  // Settle at the delta's next key (which comes at or before the base's).
  void SettleInDelta() {
    const ColumnDelta& delta = column_->delta;
    for (;;) {
      if (b_ < stop_) return Settle();
      if (!delta.Valid(d_)) return;  // the base is done too
      const std::string_view key = delta.key(d_);
      shadow_ = b_ < base_->size() && base_->key(b_) == key;
      const EntityId tx = delta.tx(d_);
      if (tx != 0) {
        from_delta_ = true;
        if (key.starts_with(prefix_)) SetCurrent(order_, key, tx);
        return;
      }
      StepDelta();  // removed since the base was read
    }
  }

  IndexOrder order_;
  ColumnCache* cache_;
  EntityId t_;
  EntityId attribute_ = 0;
  std::shared_ptr<const AttributeColumn> column_;
  const KeyRun* base_ = nullptr;  // column_'s
  uint64_t scanned_ = 0;          // keys read from fallback_ not yet reported
  std::string prefix_;
  size_t begin_ = 0;  // the base's first key under prefix_
  size_t b_ = 0;      // the base's next key
  size_t stop_ = 0;   // the base key the delta's next key goes before
  ColumnDelta::Pos d_;
  bool from_delta_ = false;  // the current key is the delta's
  bool shadow_ = false;      // the delta's key replaces the base's b_
};

}  // namespace

std::unique_ptr<DatomCursor> NewColumnCursor(
    const Db& db, IndexOrder order, ColumnCache* cache, EntityId t,
    std::unique_ptr<DatomCursor> fallback) {
  (void)db;
  return std::make_unique<ColumnCursor>(order, cache, t, std::move(fallback));
}

}  // namespace mentat::storage::internal
