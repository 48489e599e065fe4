#include "internal/since_cursor.h"

#include <string>
#include <utility>

#include "internal/coding.h"

namespace mentat::storage::internal {
namespace {

// DecodeKeyIds (keys.cc) without a Status, for the since cursor's hot
// path: a since query decodes a datom per row, and this is most of its
// work. `key` is in `order` (not VAET) and holds two ids and a tag.
void IdsAtFixedPlaces(IndexOrder order, std::string_view key, Datom* d) {
  const auto first = static_cast<EntityId>(LoadBigEndian64(key.data()));
  // AVET's entity follows the value, at the end.
  const auto second = static_cast<EntityId>(LoadBigEndian64(
      key.data() + (order == IndexOrder::kAvet ? key.size() - 8 : 8)));
  d->e = order == IndexOrder::kEavt ? first : second;
  d->a = order == IndexOrder::kEavt ? second : first;
}

// Where the keys under `prefix` end in `run`, from `pos` (the first of
// them): found once, so that a scan steps by index alone, without
// comparing each key to the prefix (that compare was a tenth of a
// since query's time). Galloping costs a point seek a few comparisons.
size_t PrefixEnd(const KeyRun& run, size_t pos, std::string_view prefix) {
  return GallopLowerBound(pos, pos, run.size(), [&](size_t k) {
    return run.key(k).starts_with(prefix);
  });
}

// A cursor over an index of one layer (a base: no tx-0 entries). It
// repeats what SinceCursorBase shares rather than derive from it: the
// shared shape cost a since query 0.3% more instructions (callgrind).
class SingleRunCursor : public DatomCursor {
 public:
  SingleRunCursor(IndexOrder order, const KeyRun* run)
      : order_(order), run_(run) {}

  void Seek(std::string_view prefix) override {
    prefix_.assign(prefix);
    pos_ = RunLowerBound(*run_, pos_, 0, prefix);
    end_ = PrefixEnd(*run_, pos_, prefix_);
    Settle();
  }
  void SeekWithin(std::string_view target) override {
    pos_ = RunLowerBound(*run_, pos_, 0, target);
    Settle();
  }
  bool Valid() const override { return valid_; }
  void Next() override {
    ++pos_;
    Settle();
  }
  const Datom& datom() const override { return datom_; }
  std::string_view key() const override { return key_; }
  void SetKeysOnly(bool keys_only) override { keys_only_ = keys_only; }
  void SetSkipValue(bool skip_value) override { skip_value_ = skip_value; }
  [[nodiscard]] absl::Status status() const override { return status_; }

 private:
  void Settle() {
    valid_ = false;
    if (pos_ >= end_) return;
    key_ = run_->key(pos_);
    if (!keys_only_) {
      if (skip_value_ && order_ != IndexOrder::kVaet && key_.size() >= 17) {
        IdsAtFixedPlaces(order_, key_, &datom_);
      } else {
        absl::Status s = skip_value_ ? DecodeKeyIds(order_, key_, &datom_)
                                     : DecodeKey(order_, key_, &datom_);
        if (!s.ok()) {
          status_ = s;
          return;
        }
      }
      datom_.tx = run_->txs[pos_];
      datom_.added = true;
    }
    valid_ = true;
  }

  IndexOrder order_;
  const KeyRun* run_;
  std::string prefix_;
  size_t pos_ = 0;
  size_t end_ = 0;  // the first key past prefix_'s
  std::string_view key_;
  Datom datom_;
  bool valid_ = false;
  bool keys_only_ = false;
  bool skip_value_ = false;
  absl::Status status_;
};

// The layered cursor's modes and the decoding of its current key, apart
// from its merging.
class SinceCursorBase : public DatomCursor {
 public:
  explicit SinceCursorBase(IndexOrder order) : order_(order) {}

  bool Valid() const override { return valid_; }
  const Datom& datom() const override { return datom_; }
  std::string_view key() const override { return key_; }
  void SetKeysOnly(bool keys_only) override { keys_only_ = keys_only; }
  void SetSkipValue(bool skip_value) override { skip_value_ = skip_value; }
  [[nodiscard]] absl::Status status() const override { return status_; }

 protected:
  // Makes `key` (asserted by `tx`) the current datom; leaves the cursor
  // invalid on a key that does not decode (status() says why).
  void Yield(std::string_view key, EntityId tx) {
    key_ = key;
    if (!keys_only_) {
      if (skip_value_ && order_ != IndexOrder::kVaet && key_.size() >= 17) {
        IdsAtFixedPlaces(order_, key_, &datom_);
      } else {
        absl::Status s = skip_value_ ? DecodeKeyIds(order_, key_, &datom_)
                                     : DecodeKey(order_, key_, &datom_);
        if (!s.ok()) {
          status_ = s;
          return;
        }
      }
      datom_.tx = tx;
      datom_.added = true;
    }
    valid_ = true;
  }

  const IndexOrder order_;
  std::string prefix_;
  std::string_view key_;
  Datom datom_;
  bool valid_ = false;
  bool keys_only_ = false;
  bool skip_value_ = false;
  absl::Status status_;
};

// A cursor merging the layers of an index: each step takes the least key
// of the runs, the newest run's entry when several hold it.
class LayeredRunCursor : public SinceCursorBase {
 public:
  LayeredRunCursor(IndexOrder order, const std::vector<const KeyRun*>& runs)
      : SinceCursorBase(order) {
    children_.reserve(runs.size());
    for (const KeyRun* run : runs) children_.push_back(Child{run, 0, 0, {}});
  }

  void Seek(std::string_view prefix) override {
    prefix_.assign(prefix);
    for (Child& c : children_) {
      c.pos = RunLowerBound(*c.run, c.pos, 0, prefix);
      c.end = PrefixEnd(*c.run, c.pos, prefix_);
      c.Load();
    }
    Settle();
  }
  void SeekWithin(std::string_view target) override {
    // A target under the prefix lands at or before each run's prefix end.
    for (Child& c : children_) {
      c.pos = RunLowerBound(*c.run, c.pos, 0, target);
      c.Load();
    }
    Settle();
  }
  void Next() override {
    if (!valid_) return;
    Child& c = children_[current_];
    c.Advance();
    // Up to run_end_ the current run's keys stay below every other run's
    // next key: they are the merge's next keys, found by index alone (a
    // scan mostly reads the base).
    if (c.pos < run_end_) {
      const EntityId tx = c.run->txs[c.pos];
      if (tx != 0) {
        Yield(c.key, tx);
        return;
      }
    }
    Settle();
  }

 private:
  struct Child {
    const KeyRun* run;
    size_t pos = 0;
    size_t end = 0;        // the first key past the prefix's
    std::string_view key;  // run->key(pos) while pos < end

    bool live() const { return pos < end; }
    void Load() {
      if (live()) key = run->key(pos);
    }
    void Advance() {
      ++pos;
      Load();
    }
  };

  void Settle() {
    valid_ = false;
    for (;;) {
      size_t win = children_.size();
      for (size_t i = 0; i < children_.size(); ++i) {
        Child& c = children_[i];
        if (!c.live()) continue;
        if (win == children_.size()) {
          win = i;
          continue;
        }
        const int cmp = c.key.compare(children_[win].key);
        if (cmp > 0) continue;
        // An equal key in a newer run replaces the older run's entry.
        if (cmp == 0) children_[win].Advance();
        win = i;
      }
      if (win == children_.size()) return;
      Child& c = children_[win];
      const EntityId tx = c.run->txs[c.pos];
      if (tx == 0) {  // retracted after the layers below
        c.Advance();
        continue;
      }
      current_ = win;
      bool other = false;
      std::string_view other_key;
      for (size_t i = 0; i < children_.size(); ++i) {
        const Child& o = children_[i];
        if (i == win || !o.live()) continue;
        if (!other || o.key < other_key) other_key = o.key;
        other = true;
      }
      // Galloping from here: a few comparisons for the stretch, instead
      // of one a step.
      run_end_ = other ? GallopLowerBound(c.pos, c.pos, c.end,
                                          [&](size_t k) {
                                            return c.run->key(k) < other_key;
                                          })
                       : c.end;
      Yield(c.key, tx);
      return;
    }
  }

  std::vector<Child> children_;  // oldest first
  size_t current_ = 0;
  // The end of the current run's stretch below every other run's next key.
  size_t run_end_ = 0;
};

}  // namespace

std::unique_ptr<DatomCursor> NewSinceRunCursor(IndexOrder order,
                                               const KeyRun* run) {
  return std::make_unique<SingleRunCursor>(order, run);
}

std::unique_ptr<DatomCursor> NewSinceRunCursor(
    IndexOrder order, std::vector<const KeyRun*> runs) {
  if (runs.size() == 1) {
    return std::make_unique<SingleRunCursor>(order, runs[0]);
  }
  return std::make_unique<LayeredRunCursor>(order, runs);
}

}  // namespace mentat::storage::internal
