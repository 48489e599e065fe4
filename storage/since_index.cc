#include "internal/since_index.h"

#include <algorithm>

#include "absl/synchronization/mutex.h"
#include "internal/coding.h"
#include "internal/log_codec.h"
#include "internal/since_cursor.h"
#include "internal/store_core.h"
#include "mentat/base/str_cat.h"

namespace mentat::storage::internal {
namespace {

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

const KeyRun& SinceLayer::Sorted(IndexOrder order) const {
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

bool SinceLayer::ready(IndexOrder order) const {
  return order == IndexOrder::kEavt ||
         sorted_ready_[static_cast<int>(order)].load(std::memory_order_acquire);
}

std::shared_ptr<const SinceLayer> SinceLayer::Merge(const SinceLayer& older,
                                                    const SinceLayer& newer,
                                                    bool keep_removed) {
  KeyRun eavt;
  MergeRun(older.eavt_, newer.eavt_, keep_removed, /*with_entity=*/false,
           &eavt);
  auto out = std::make_shared<SinceLayer>(older.schema_, std::move(eavt));
  // The orders a query sorted already in the older (bigger) layer: merged
  // now, so that the next query of the same shape finds them ready.
  // Sorting the newer layer's is cheap.
  for (IndexOrder order :
       {IndexOrder::kAevt, IndexOrder::kAvet, IndexOrder::kVaet}) {
    if (!older.ready(order)) continue;
    const int o = static_cast<int>(order);
    MergeRun(older.Sorted(order), newer.Sorted(order), keep_removed,
             /*with_entity=*/false, &out->sorted_[o]);
    std::call_once(out->sorted_once_[o], [] {});
    out->sorted_ready_[o].store(true, std::memory_order_release);
  }
  return out;
}

absl::Status SinceIndex::ReadLog(const Db& db, EntityId after,
                                 bool keep_removed, size_t max_held,
                                 size_t max_read, size_t chunk, bool* over,
                                 KeyRun* out) {
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
  // for a key changed more than once, the last change stands. The changes
  // are sorted a chunk at a time and merged into *out, so that a log of
  // churn (the same keys asserted and retracted again and again) costs
  // memory for what it leaves, not for all it holds; a chunk is at least
  // the size of *out, so each key is copied a few times in all.
  ChangeListBuilder builder(/*with_entity=*/false);
  size_t in_builder = 0;
  auto flush = [&] {
    KeyRun merged;
    MergeRun(*out, builder.Finish(), keep_removed, /*with_entity=*/false,
             &merged);
    *out = std::move(merged);
    in_builder = 0;
    *over = out->size() > max_held;
  };
  std::vector<Datom> datoms;
  std::string key;
  size_t read = 0;
  *out = KeyRun();
  for (it->Seek(lower); it->Valid(); it->Next()) {
    const EntityId tx = static_cast<EntityId>(
        DecodeFixed64BE(std::string_view(it->key().data(), it->key().size())));
    datoms.clear();
    absl::Status s = DecodeLogEntry(
        tx, std::string_view(it->value().data(), it->value().size()), &datoms);
    if (!s.ok()) return s;
    read += datoms.size();
    if (read > max_read) {
      *over = true;
      return absl::OkStatus();
    }
    for (const Datom& d : datoms) {
      key.clear();
      EavtKey::Encode(d.e, d.a, d.v, &key);
      builder.Add(key, d.added ? d.tx : 0);
    }
    in_builder += datoms.size();
    if (in_builder >= std::max(chunk, out->size())) {
      flush();
      if (*over) return absl::OkStatus();
    }
  }
  if (!it->status().ok()) {
    return absl::UnavailableError(
        StrCat("reading the log: ", it->status().ToString()));
  }
  if (in_builder > 0) flush();
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<const SinceIndex>> SinceIndex::Build(
    const Db& db, EntityId t, size_t limit, const SinceShape& shape) {
  auto index = std::make_shared<SinceIndex>();
  index->t_ = t;
  index->basis_ = db.basis_tx();
  index->schema_ = db.schema_ptr();
  // Retractions of keys asserted before t hide nothing: dropped.
  KeyRun eavt;
  bool over = false;
  absl::Status s =
      ReadLog(db, t, /*keep_removed=*/false, limit, kLogReadFactor * limit,
              shape.log_chunk, &over, &eavt);
  if (!s.ok()) return s;
  if (over) return std::shared_ptr<const SinceIndex>(std::move(index));
  index->size_ = eavt.size();
  index->base_ = std::make_shared<SinceLayer>(index->schema_, std::move(eavt));
  return std::shared_ptr<const SinceIndex>(std::move(index));
}

absl::StatusOr<std::shared_ptr<const SinceIndex>> SinceIndex::Extend(
    const SinceIndex& prev, const Db& db, size_t limit,
    const SinceShape& shape) {
  auto index = std::make_shared<SinceIndex>();
  index->t_ = prev.t_;
  index->basis_ = db.basis_tx();
  index->schema_ = db.schema_ptr();
  if (prev.over()) return std::shared_ptr<const SinceIndex>(std::move(index));
  KeyRun changes;
  bool over = false;
  absl::Status s =
      ReadLog(db, prev.basis_, /*keep_removed=*/true,
              limit - std::min(limit, prev.size_), kLogReadFactor * limit,
              shape.log_chunk, &over, &changes);
  if (!s.ok()) return s;
  if (over) return std::shared_ptr<const SinceIndex>(std::move(index));
  index->base_ = prev.base_;
  index->deltas_ = prev.deltas_;
  index->size_ = prev.size_;
  if (changes.empty()) {
    return std::shared_ptr<const SinceIndex>(std::move(index));
  }
  index->size_ += changes.size();
  std::vector<std::shared_ptr<const SinceLayer>>& deltas = index->deltas_;
  deltas.push_back(
      std::make_shared<SinceLayer>(index->schema_, std::move(changes)));
  // A binary counter: the two newest merge while the older is at most
  // twice the newer (or there are too many), so that each key is copied
  // a few times on its way down rather than once per basis.
  while (deltas.size() >= 2 &&
         (deltas.size() > shape.max_deltas ||
          deltas[deltas.size() - 2]->size() <= 2 * deltas.back()->size())) {
    std::shared_ptr<const SinceLayer> merged =
        SinceLayer::Merge(*deltas[deltas.size() - 2], *deltas.back(),
                          /*keep_removed=*/true);
    deltas.pop_back();
    deltas.back() = std::move(merged);
  }
  size_t in_deltas = 0;
  for (const auto& delta : deltas) in_deltas += delta->size();
  if (in_deltas > shape.min_fold &&
      in_deltas > index->base_->size() / shape.fold_divisor) {
    // Newest first, so each merge copies the smaller side's keys once more.
    std::shared_ptr<const SinceLayer> folded = deltas.back();
    for (size_t i = deltas.size() - 1; i-- > 0;) {
      folded = SinceLayer::Merge(*deltas[i], *folded, /*keep_removed=*/true);
    }
    index->base_ = SinceLayer::Merge(*index->base_, *folded,
                                     /*keep_removed=*/false);
    deltas.clear();
    index->size_ = index->base_->size();
  }
  return std::shared_ptr<const SinceIndex>(std::move(index));
}

std::unique_ptr<DatomCursor> SinceIndex::NewCursor(IndexOrder order) const {
  if (deltas_.empty()) return NewSinceRunCursor(order, &base_->Sorted(order));
  std::vector<const KeyRun*> runs;
  runs.reserve(1 + deltas_.size());
  runs.push_back(&base_->Sorted(order));
  for (const auto& delta : deltas_) runs.push_back(&delta->Sorted(order));
  return NewSinceRunCursor(order, std::move(runs));
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
