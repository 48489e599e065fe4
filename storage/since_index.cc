#include "internal/since_index.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "internal/coding.h"
#include "internal/log_codec.h"
#include "internal/store_core.h"
#include "mentat/storage/str_cat.h"

namespace mentat::storage::internal {
namespace {

class SinceCursor : public DatomCursor {
 public:
  explicit SinceCursor(const std::vector<SinceIndex::Entry>* entries)
      : entries_(entries) {}

  void Seek(std::string_view prefix) override {
    prefix_.assign(prefix);
    SeekWithin(prefix);
  }
  void SeekWithin(std::string_view target) override {
    pos_ = static_cast<size_t>(
        std::lower_bound(entries_->begin(), entries_->end(), target,
                         [](const SinceIndex::Entry& e, std::string_view t) {
                           return std::string_view(e.key) < t;
                         }) -
        entries_->begin());
  }
  bool Valid() const override {
    return pos_ < entries_->size() &&
           std::string_view((*entries_)[pos_].key).starts_with(prefix_);
  }
  void Next() override { ++pos_; }
  const Datom& datom() const override { return (*entries_)[pos_].datom; }
  std::string_view key() const override { return (*entries_)[pos_].key; }
  absl::Status status() const override { return absl::OkStatus(); }

 private:
  const std::vector<SinceIndex::Entry>* entries_;
  std::string prefix_;
  size_t pos_ = 0;
};

}  // namespace

absl::StatusOr<std::shared_ptr<const SinceIndex>> SinceIndex::Build(
    const Db& db, EntityId t, size_t limit) {
  rocksdb::ReadOptions ro;
  ro.snapshot = db.snapshot();
  const std::string lower = Fixed64BE(static_cast<uint64_t>(t) + 1);
  const std::string upper = Fixed64BE(static_cast<uint64_t>(db.basis_tx()) + 1);
  rocksdb::Slice upper_slice(upper);
  ro.iterate_upper_bound = &upper_slice;
  std::unique_ptr<rocksdb::Iterator> it(
      db.core().db->NewIterator(ro, db.core().cf(Cf::kLog)));
  // Replay the log: an assertion adds the datom, a retraction removes it.
  absl::flat_hash_map<std::string, Datom> live;
  std::vector<Datom> datoms;
  size_t seen = 0;
  std::string key;
  for (it->Seek(lower); it->Valid(); it->Next()) {
    const EntityId tx = static_cast<EntityId>(
        DecodeFixed64BE(std::string_view(it->key().data(), it->key().size())));
    datoms.clear();
    absl::Status s = DecodeLogEntry(
        tx, std::string_view(it->value().data(), it->value().size()), &datoms);
    if (!s.ok()) return s;
    seen += datoms.size();
    if (seen > limit) return std::shared_ptr<const SinceIndex>();
    for (Datom& d : datoms) {
      key.clear();
      EavtKey::Encode(d.e, d.a, d.v, &key);
      if (d.added) {
        live[key] = std::move(d);
      } else {
        live.erase(key);
      }
    }
  }
  if (!it->status().ok()) {
    return absl::UnavailableError(
        StrCat("reading the log: ", it->status().ToString()));
  }
  auto index = std::make_shared<SinceIndex>();
  index->schema_ = db.schema_ptr();
  index->live_.reserve(live.size());
  for (auto& [k, d] : live) index->live_.push_back(std::move(d));
  return std::shared_ptr<const SinceIndex>(std::move(index));
}

std::unique_ptr<DatomCursor> SinceIndex::NewCursor(IndexOrder order) const {
  const int o = static_cast<int>(order);
  std::call_once(sorted_[o], [&] {
    std::vector<Entry>& entries = by_order_[o];
    entries.reserve(live_.size());
    for (const Datom& d : live_) {
      if (order == IndexOrder::kVaet) {
        const Attribute* attr = schema_->FindAttribute(d.a);
        if (attr == nullptr || !attr->is_ref()) continue;
      }
      Entry entry;
      EncodeKey(order, d, &entry.key);
      entry.datom = d;
      entries.push_back(std::move(entry));
    }
    std::sort(entries.begin(), entries.end(),
              [](const Entry& a, const Entry& b) { return a.key < b.key; });
  });
  return std::make_unique<SinceCursor>(&by_order_[o]);
}

std::shared_ptr<const SinceIndex> SinceCache::Find(EntityId basis, EntityId t) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const Slot& slot : slots_) {
    if (slot.basis == basis && slot.t == t) return slot.index;
  }
  return nullptr;
}

void SinceCache::Insert(EntityId basis, EntityId t,
                        std::shared_ptr<const SinceIndex> index) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const Slot& slot : slots_) {
    if (slot.basis == basis && slot.t == t) return;
  }
  slots_.push_back(Slot{basis, t, std::move(index)});
  size_t total = 0;
  for (const Slot& slot : slots_) total += slot.index->size();
  while (!slots_.empty() && (slots_.size() > 4 || total > limit_)) {
    total -= slots_.front().index->size();
    slots_.erase(slots_.begin());
  }
}

}  // namespace mentat::storage::internal
