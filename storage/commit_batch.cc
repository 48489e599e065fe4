#include "internal/commit_batch.h"

#include "internal/coding.h"
#include "mentat/base/str_cat.h"

namespace mentat::storage::internal {

void CommitBatch::Record(IndexOrder order, std::string_view key, EntityId tx) {
  if (!Readable(order)) return;
  auto& map = overlay_[static_cast<int>(order)];
  auto it = map.find(key);
  const bool inserted = it == map.end();
  if (inserted) it = map.emplace(arena_.Intern(key), tx).first;
  if (!save_points_.empty()) {
    undo_.push_back(Undo{static_cast<uint8_t>(order), it->first, !inserted,
                         inserted ? 0 : it->second});
  }
  if (!inserted) it->second = tx;
}

void CommitBatch::PutCurrent(IndexOrder order, std::string_view key,
                             EntityId tx) {
  char value[8];
  StoreBigEndian64(static_cast<uint64_t>(tx), value);
  Record(order, key, tx);
  batch_
      .Put(core_->cf(CurrentCf(order)), rocksdb::Slice(key.data(), key.size()),
           rocksdb::Slice(value, 8))
      .PermitUncheckedError();
}

void CommitBatch::DeleteCurrent(IndexOrder order, std::string_view key) {
  // Every current key is Put once per life (redundant assertions are
  // elided), so SingleDelete applies: at flush it cancels the Put instead
  // of leaving a tombstone that reads would step over.
  Record(order, key, kDeleted);
  batch_
      .SingleDelete(core_->cf(CurrentCf(order)),
                    rocksdb::Slice(key.data(), key.size()))
      .PermitUncheckedError();
}

void CommitBatch::PutRaw(Cf cf, std::string_view key, std::string_view value) {
  batch_
      .Put(core_->cf(cf), rocksdb::Slice(key.data(), key.size()),
           rocksdb::Slice(value.data(), value.size()))
      .PermitUncheckedError();
}

void CommitBatch::SetSavePoint() {
  batch_.SetSavePoint();
  save_points_.push_back(undo_.size());
}

void CommitBatch::RollbackToSavePoint() {
  batch_.RollbackToSavePoint().PermitUncheckedError();
  const size_t mark = save_points_.back();
  save_points_.pop_back();
  while (undo_.size() > mark) {
    Undo& u = undo_.back();
    auto& map = overlay_[u.order];
    if (u.existed) {
      map[u.key] = u.previous;
    } else {
      map.erase(u.key);
    }
    undo_.pop_back();
  }
}

void CommitBatch::PopSavePoint() {
  batch_.PopSavePoint().PermitUncheckedError();
  save_points_.pop_back();
  if (save_points_.empty()) undo_.clear();
}

absl::StatusOr<std::optional<EntityId>> CommitBatch::Get(IndexOrder order,
                                                         std::string_view key) {
  const auto& map = overlay_[static_cast<int>(order)];
  auto it = map.find(key);
  if (it != map.end()) {
    if (it->second == kDeleted) return std::optional<EntityId>();
    return std::optional<EntityId>(it->second);
  }
  std::string value;
  rocksdb::Status s =
      core_->db->Get(rocksdb::ReadOptions(), core_->cf(CurrentCf(order)),
                     rocksdb::Slice(key.data(), key.size()), &value);
  if (s.IsNotFound()) return std::optional<EntityId>();
  if (!s.ok()) {
    return absl::UnavailableError(
        StrCat("reading ", IndexOrderName(order), ": ", s.ToString()));
  }
  if (value.size() != 8) {
    return absl::DataLossError(
        StrCat("bad tx under a key of ", IndexOrderName(order)));
  }
  return std::optional<EntityId>(static_cast<EntityId>(DecodeFixed64BE(value)));
}

absl::Status CommitBatch::Scan(IndexOrder order, std::string_view prefix,
                               const std::function<bool(const Datom&)>& fn) {
  const int o = static_cast<int>(order);
  auto& it = db_iterators_[o];
  if (!it) {
    it.reset(core_->db->NewIterator(rocksdb::ReadOptions(),
                                    core_->cf(CurrentCf(order))));
  }
  const auto& map = overlay_[o];
  auto ov = map.lower_bound(prefix);
  it->Seek(rocksdb::Slice(prefix.data(), prefix.size()));
  Datom d;
  for (;;) {
    std::string_view db_key;
    bool db_valid = it->Valid();
    if (db_valid) {
      db_key = std::string_view(it->key().data(), it->key().size());
      db_valid = db_key.starts_with(prefix);
    }
    const bool ov_valid =
        ov != map.end() && std::string_view(ov->first).starts_with(prefix);
    if (!db_valid && !ov_valid) break;
    std::string_view key;
    EntityId tx;
    if (ov_valid && (!db_valid || std::string_view(ov->first) <= db_key)) {
      // The group's write shadows the committed key.
      if (db_valid && std::string_view(ov->first) == db_key) it->Next();
      key = ov->first;
      tx = ov->second;
      ++ov;
      if (tx == kDeleted) continue;
    } else {
      rocksdb::Slice v = it->value();
      if (v.size() != 8) {
        return absl::DataLossError(
            StrCat("bad tx under a key of ", IndexOrderName(order)));
      }
      key = db_key;
      tx =
          static_cast<EntityId>(DecodeFixed64BE(std::string_view(v.data(), 8)));
      absl::Status s = DecodeKey(order, key, &d);
      if (!s.ok()) return s;
      // Decoded before the iterator moves: the key is its bytes.
      it->Next();
      d.tx = tx;
      d.added = true;
      if (!fn(d)) break;
      continue;
    }
    absl::Status s = DecodeKey(order, key, &d);
    if (!s.ok()) return s;
    d.tx = tx;
    d.added = true;
    if (!fn(d)) break;
  }
  if (!it->status().ok()) {
    return absl::UnavailableError(StrCat("scanning ", IndexOrderName(order),
                                         ": ", it->status().ToString()));
  }
  return absl::OkStatus();
}

}  // namespace mentat::storage::internal
