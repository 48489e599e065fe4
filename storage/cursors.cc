#include "internal/cursors.h"

#include <string>

#include "internal/coding.h"
#include "mentat/base/str_cat.h"

namespace mentat::storage::internal {
namespace {

// Keys a forward seek steps over with Next before it seeks instead: a
// Next is a comparison on the block in hand, a seek one search per level
// of the LSM tree (a few microseconds at 13M entities, some 30 Nexts).
constexpr int kForwardSteps = 16;

// One column family's entries under a prefix. For history families the
// key carries the asserting tx as an 8-byte suffix and the value is the
// retracting tx; for current families the value is the asserting tx.
class FamilyStream {
 public:
  FamilyStream(const Db& db, IndexOrder order, bool history)
      : db_(db), order_(order), history_(history) {
    cf_ = history ? HistoryCf(order) : CurrentCf(order);
  }

  void Seek(std::string_view prefix, std::string_view target) {
    prefix_.assign(prefix);
    // A prefix that names an entity seeks in prefix mode, where the
    // entity-prefix bloom filters skip the files that hold nothing of it;
    // a shorter one needs a total-order iterator. Each is made once.
    const bool by_entity =
        HasEntityPrefixFilter(cf_) && prefix.size() >= kEntityPrefixBytes;
    std::unique_ptr<rocksdb::Iterator>& it = by_entity ? prefix_it_ : total_it_;
    if (!it) {
      rocksdb::ReadOptions ro;
      ro.snapshot = db_.snapshot();
      // The store never writes range tombstones (no DeleteRange), so the
      // iterator need not track them on every Seek and Next.
      ro.ignore_range_deletions = true;
      ro.total_order_seek = !by_entity;
      ro.prefix_same_as_start = by_entity;
      it.reset(db_.core().db->NewIterator(ro, db_.core().cf(cf_)));
    }
    it_ = it.get();
    it_->Seek(rocksdb::Slice(target.data(), target.size()));
    Load();
  }
  void Next() {
    it_->Next();
    Load();
  }
  // Seek(prefix_, target) for a target at or past the position: steps
  // there with Next while it is at most kForwardSteps keys ahead.
  void SeekForward(std::string_view target) {
    if (valid_ && key_ < target) {
      for (int i = 0; i < kForwardSteps && valid_ && key_ < target; ++i) {
        Next();
      }
      // Off the prefix's end (or on an error), the seek would find
      // nothing either: every key passed was below the target.
      if (!valid_ || key_ >= target) return;
    }
    Seek(prefix_, target);
  }
  bool Valid() const { return valid_; }
  // The datom key without the history suffix.
  std::string_view key() const { return key_; }
  EntityId asserted() const { return asserted_; }
  EntityId retracted() const { return retracted_; }
  [[nodiscard]] absl::Status status() const { return status_; }

 private:
  void Load() {
    valid_ = false;
    if (!it_->Valid()) {
      if (!it_->status().ok()) {
        status_ = absl::UnavailableError(
            StrCat("reading ", IndexOrderName(order_),
                   history_ ? " history" : "", ": ", it_->status().ToString()));
      }
      return;
    }
    std::string_view k(it_->key().data(), it_->key().size());
    if (!k.starts_with(prefix_)) return;
    std::string_view v(it_->value().data(), it_->value().size());
    if (v.size() != 8 || (history_ && k.size() < 8)) {
      status_ = absl::DataLossError(
          StrCat("malformed entry in ", IndexOrderName(order_)));
      return;
    }
    if (history_) {
      key_ = k.substr(0, k.size() - 8);
      asserted_ =
          static_cast<EntityId>(DecodeFixed64BE(k.substr(k.size() - 8)));
      retracted_ = static_cast<EntityId>(DecodeFixed64BE(v));
    } else {
      key_ = k;
      asserted_ = static_cast<EntityId>(DecodeFixed64BE(v));
      retracted_ = 0;
    }
    valid_ = true;
  }

  const Db& db_;
  IndexOrder order_;
  bool history_;
  Cf cf_;
  std::unique_ptr<rocksdb::Iterator> prefix_it_;
  std::unique_ptr<rocksdb::Iterator> total_it_;
  rocksdb::Iterator* it_ = nullptr;  // the one of the last Seek
  std::string prefix_;
  std::string_view key_;
  EntityId asserted_ = 0;
  EntityId retracted_ = 0;
  bool valid_ = false;
  absl::Status status_;
};

// The base of every cursor: decodes the key it is positioned on.
class CursorBase : public DatomCursor {
 public:
  explicit CursorBase(IndexOrder order) : order_(order) {}
  const Datom& datom() const override { return datom_; }
  std::string_view key() const override { return key_; }
  [[nodiscard]] absl::Status status() const override { return status_; }
  void SetKeysOnly(bool keys_only) override { keys_only_ = keys_only; }

 protected:
  // Decodes `key` into datom_; on error stops the cursor.
  // `key` points into a RocksDB iterator that stays put until the next
  // move of this cursor, which is as long as key() must stay valid.
  bool Emit(std::string_view key, EntityId tx, bool added) {
    key_ = key;
    if (keys_only_) return true;
    absl::Status s = DecodeKey(order_, key, &datom_);
    if (!s.ok()) {
      status_ = s;
      return false;
    }
    datom_.tx = tx;
    datom_.added = added;
    return true;
  }

  IndexOrder order_;
  Datom datom_;
  std::string_view key_;
  std::string prefix_;
  absl::Status status_;
  bool keys_only_ = false;
};

// Current datoms, optionally filtered by their asserting tx.
class CurrentCursor : public CursorBase {
 public:
  enum class Filter { kNone, kAtOrBefore, kAfter };
  CurrentCursor(const Db& db, IndexOrder order, Filter filter, EntityId t)
      : CursorBase(order), current_(db, order, false), filter_(filter), t_(t) {}

  void Seek(std::string_view prefix) override {
    prefix_.assign(prefix);
    current_.Seek(prefix, prefix);
    Settle();
  }
  void SeekWithin(std::string_view target) override {
    current_.Seek(prefix_, target);
    Settle();
  }
  void SeekForward(std::string_view target) override {
    current_.SeekForward(target);
    Settle();
  }
  bool Valid() const override { return valid_; }
  void Next() override {
    current_.Next();
    Settle();
  }

 private:
  bool Keep() const {
    switch (filter_) {
      case Filter::kNone:
        return true;
      case Filter::kAtOrBefore:
        return current_.asserted() <= t_;
      case Filter::kAfter:
        return current_.asserted() > t_;
    }
    return true;
  }
  void Settle() {
    valid_ = false;
    while (current_.Valid() && !Keep()) current_.Next();
    if (!current_.Valid()) {
      if (!current_.status().ok()) status_ = current_.status();
      return;
    }
    valid_ = Emit(current_.key(), current_.asserted(), true);
  }

  FamilyStream current_;
  Filter filter_;
  EntityId t_;
  bool valid_ = false;
};

// Merges current datoms and retracted intervals (history family).
// as_of(t): current with asserted <= t, intervals with asserted <= t <
// retracted. history: every current datom as an assertion, every interval
// as an assertion and a retraction.
class MergedCursor : public CursorBase {
 public:
  MergedCursor(const Db& db, IndexOrder order, bool as_of, EntityId t)
      : CursorBase(order),
        current_(db, order, false),
        history_(db, order, true),
        as_of_(as_of),
        t_(t) {}

  void Seek(std::string_view prefix) override {
    prefix_.assign(prefix);
    current_.Seek(prefix, prefix);
    history_.Seek(prefix, prefix);
    pending_retraction_ = false;
    Settle();
  }
  void SeekWithin(std::string_view target) override {
    current_.Seek(prefix_, target);
    history_.Seek(prefix_, target);
    pending_retraction_ = false;
    Settle();
  }
  void SeekForward(std::string_view target) override {
    current_.SeekForward(target);
    history_.SeekForward(target);
    pending_retraction_ = false;
    Settle();
  }
  bool Valid() const override { return valid_; }
  void Next() override {
    if (from_history_) {
      if (!as_of_ && !pending_retraction_) {
        // The interval's retraction comes right after its assertion:
        // nothing else for this key has a tx between the two.
        pending_retraction_ = true;
        valid_ = Emit(history_.key(), history_.retracted(), false);
        return;
      }
      pending_retraction_ = false;
      history_.Next();
    } else {
      current_.Next();
    }
    Settle();
  }

 private:
  bool KeepCurrent() const { return !as_of_ || current_.asserted() <= t_; }
  bool KeepHistory() const {
    return !as_of_ || (history_.asserted() <= t_ && t_ < history_.retracted());
  }
  void Settle() {
    valid_ = false;
    while (current_.Valid() && !KeepCurrent()) current_.Next();
    while (history_.Valid() && !KeepHistory()) history_.Next();
    if (!current_.status().ok()) status_ = current_.status();
    if (!history_.status().ok()) status_ = history_.status();
    if (!status_.ok()) return;
    const bool c = current_.Valid(), h = history_.Valid();
    if (!c && !h) return;
    // For one key, history intervals precede the current assertion (its tx
    // is later than every retraction of the same datom).
    if (h && (!c || history_.key() <= current_.key())) {
      from_history_ = true;
      valid_ = Emit(history_.key(), history_.asserted(), true);
    } else {
      from_history_ = false;
      valid_ = Emit(current_.key(), current_.asserted(), true);
    }
  }

  FamilyStream current_;
  FamilyStream history_;
  bool as_of_;
  EntityId t_;
  bool valid_ = false;
  bool from_history_ = false;
  bool pending_retraction_ = false;
};

}  // namespace

std::unique_ptr<DatomCursor> NewCurrentCursor(const Db& db, IndexOrder order) {
  return std::make_unique<CurrentCursor>(db, order,
                                         CurrentCursor::Filter::kNone, 0);
}

std::unique_ptr<DatomCursor> NewAsOfCursor(const Db& db, IndexOrder order,
                                           EntityId t) {
  return std::make_unique<MergedCursor>(db, order, /*as_of=*/true, t);
}

std::unique_ptr<DatomCursor> NewSinceCursor(const Db& db, IndexOrder order,
                                            EntityId t) {
  return std::make_unique<CurrentCursor>(db, order,
                                         CurrentCursor::Filter::kAfter, t);
}

std::unique_ptr<DatomCursor> NewHistoryCursor(const Db& db, IndexOrder order) {
  return std::make_unique<MergedCursor>(db, order, /*as_of=*/false, 0);
}

}  // namespace mentat::storage::internal
