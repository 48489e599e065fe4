#include "internal/since_index.h"

#include <algorithm>

#include "absl/synchronization/mutex.h"
#include "internal/coding.h"
#include "internal/log_codec.h"
#include "internal/store_core.h"
#include "mentat/base/str_cat.h"

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

// A cursor over one sorted order of a SinceIndex.
class SinceCursor : public DatomCursor {
 public:
  SinceCursor(IndexOrder order, const KeyRun* run) : order_(order), run_(run) {}

  void Seek(std::string_view prefix) override {
    prefix_.assign(prefix);
    pos_ = RunLowerBound(*run_, pos_, 0, prefix);
    // Where the prefix's keys end, found once: a scan then steps by index
    // alone, without comparing each key to the prefix (that compare was
    // a tenth of a since query's time). Galloping from the first key
    // costs a point seek a few comparisons.
    end_ = GallopLowerBound(pos_, pos_, run_->size(), [&](size_t k) {
      return run_->key(k).starts_with(prefix_);
    });
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

// `changes` (EAVT, in order) re-encoded in `order` and sorted; VAET
// keeps the datoms of ref attributes only.
[[nodiscard]] absl::Status Reorder(const KeyRun& changes, IndexOrder order,
                                   const Schema& schema, KeyRun* out) {
  // No entity array: an order of the index spans attributes, and
  // RunLowerBound's search by entity holds within one attribute only.
  ChangeListBuilder builder(/*with_entity=*/false);
  Datom d;
  std::string key;
  for (size_t i = 0; i < changes.size(); ++i) {
    absl::Status s = DecodeKey(IndexOrder::kEavt, changes.key(i), &d);
    if (!s.ok()) return s;
    if (order == IndexOrder::kVaet) {
      const Attribute* attr = schema.FindAttribute(d.a);
      if (attr == nullptr || !attr->is_ref()) continue;
    }
    key.clear();
    EncodeKey(order, d, &key);
    builder.Add(key, changes.txs[i]);
  }
  *out = builder.Finish();
  return absl::OkStatus();
}

}  // namespace

absl::Status SinceIndex::ReadLog(const Db& db, EntityId after, size_t limit,
                                 size_t* seen, bool* over, KeyRun* changes) {
  *over = false;
  rocksdb::ReadOptions ro;
  ro.snapshot = db.snapshot();
  const std::string lower = Fixed64BE(static_cast<uint64_t>(after) + 1);
  const std::string upper = Fixed64BE(static_cast<uint64_t>(db.basis_tx()) + 1);
  rocksdb::Slice upper_slice(upper);
  ro.iterate_upper_bound = &upper_slice;
  std::unique_ptr<rocksdb::Iterator> it(
      db.core().db->NewIterator(ro, db.core().cf(Cf::kLog)));
  // Replay the log: an assertion adds the datom, a retraction removes it;
  // for a key changed more than once, the last change stands.
  ChangeListBuilder builder(/*with_entity=*/false);
  std::vector<Datom> datoms;
  std::string key;
  for (it->Seek(lower); it->Valid(); it->Next()) {
    const EntityId tx = static_cast<EntityId>(
        DecodeFixed64BE(std::string_view(it->key().data(), it->key().size())));
    datoms.clear();
    absl::Status s = DecodeLogEntry(
        tx, std::string_view(it->value().data(), it->value().size()), &datoms);
    if (!s.ok()) return s;
    *seen += datoms.size();
    if (*seen > limit) {
      *over = true;
      return absl::OkStatus();
    }
    for (const Datom& d : datoms) {
      key.clear();
      EavtKey::Encode(d.e, d.a, d.v, &key);
      builder.Add(key, d.added ? d.tx : 0);
    }
  }
  if (!it->status().ok()) {
    return absl::UnavailableError(
        StrCat("reading the log: ", it->status().ToString()));
  }
  *changes = builder.Finish();
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<const SinceIndex>> SinceIndex::Build(
    const Db& db, EntityId t, size_t limit) {
  auto index = std::make_shared<SinceIndex>();
  index->t_ = t;
  index->basis_ = db.basis_tx();
  index->schema_ = db.schema_ptr();
  KeyRun changes;
  bool over = false;
  absl::Status s = ReadLog(db, t, limit, &index->seen_, &over, &changes);
  if (!s.ok()) return s;
  if (over) return std::shared_ptr<const SinceIndex>();
  MergeRun(KeyRun(), changes, /*keep_removed=*/false, /*with_entity=*/false,
           &index->eavt_);
  return std::shared_ptr<const SinceIndex>(std::move(index));
}

absl::StatusOr<std::shared_ptr<const SinceIndex>> SinceIndex::Extend(
    const SinceIndex& prev, const Db& db, size_t limit) {
  auto index = std::make_shared<SinceIndex>();
  index->t_ = prev.t_;
  index->basis_ = db.basis_tx();
  index->schema_ = db.schema_ptr();
  index->seen_ = prev.seen_;
  KeyRun changes;
  bool over = false;
  absl::Status s =
      ReadLog(db, prev.basis_, limit, &index->seen_, &over, &changes);
  if (!s.ok()) return s;
  if (over) return std::shared_ptr<const SinceIndex>();
  MergeRun(prev.eavt_, changes, /*keep_removed=*/false, /*with_entity=*/false,
           &index->eavt_);
  // The orders a query sorted already: merged now, so that the next query
  // of the same shape finds them ready.
  for (IndexOrder order :
       {IndexOrder::kAevt, IndexOrder::kAvet, IndexOrder::kVaet}) {
    const int o = static_cast<int>(order);
    if (!prev.sorted_ready_[o].load(std::memory_order_acquire)) continue;
    KeyRun reordered;
    s = Reorder(changes, order, *index->schema_, &reordered);
    if (!s.ok()) return s;
    KeyRun& out = index->sorted_[o];
    MergeRun(prev.sorted_[o], reordered, /*keep_removed=*/false,
             /*with_entity=*/false, &out);
    std::call_once(index->sorted_once_[o], [] {});
    index->sorted_ready_[o].store(true, std::memory_order_release);
  }
  return std::shared_ptr<const SinceIndex>(std::move(index));
}

const KeyRun& SinceIndex::Sorted(IndexOrder order) const {
  if (order == IndexOrder::kEavt) return eavt_;
  const int o = static_cast<int>(order);
  std::call_once(sorted_once_[o], [&] {
    KeyRun reordered;
    // The keys decoded when they were read: a failure here cannot happen,
    // and would leave the order empty.
    Reorder(eavt_, order, *schema_, &reordered).IgnoreError();
    sorted_[o] = std::move(reordered);
    sorted_ready_[o].store(true, std::memory_order_release);
  });
  return sorted_[o];
}

std::unique_ptr<DatomCursor> SinceIndex::NewCursor(IndexOrder order) const {
  return std::make_unique<SinceCursor>(order, &Sorted(order));
}

std::shared_ptr<const SinceIndex> SinceCache::Find(EntityId basis, EntityId t) {
  absl::MutexLock lock(&mu_);
  for (size_t i = 0; i < slots_.size(); ++i) {
    if (slots_[i]->t() != t || slots_[i]->basis() > basis) continue;
    std::shared_ptr<const SinceIndex> found = slots_[i];
    // Most recently used last.
    slots_.erase(slots_.begin() + static_cast<ptrdiff_t>(i));
    slots_.push_back(found);
    return found;
  }
  return nullptr;
}

void SinceCache::Clear(EntityId floor) {
  absl::MutexLock lock(&mu_);
  floor_ = std::max(floor_, floor);
  slots_.clear();
}

void SinceCache::Insert(std::shared_ptr<const SinceIndex> index) {
  absl::MutexLock lock(&mu_);
  if (index->basis() < floor_) return;
  for (size_t i = 0; i < slots_.size(); ++i) {
    if (slots_[i]->t() != index->t()) continue;
    if (slots_[i]->basis() >= index->basis()) return;
    slots_.erase(slots_.begin() + static_cast<ptrdiff_t>(i));
    break;
  }
  slots_.push_back(std::move(index));
  size_t total = 0;
  for (const auto& slot : slots_) total += slot->size();
  while (!slots_.empty() && (slots_.size() > 4 || total > limit_)) {
    total -= slots_.front()->size();
    slots_.erase(slots_.begin());
  }
}

}  // namespace mentat::storage::internal
