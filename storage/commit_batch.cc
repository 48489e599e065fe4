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

void CommitBatch::DeleteRaw(Cf cf, std::string_view key) {
  // Delete, not SingleDelete: a posting may have been Put more than once.
  batch_.Delete(core_->cf(cf), rocksdb::Slice(key.data(), key.size()))
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

std::optional<EntityId> CommitBatch::CurrentIn(const IndexRecord& record,
                                               std::string_view key) {
  // One key's retracted intervals come before its current assertion.
  for (size_t i = record.LowerBound(key); i < record.size(); ++i) {
    const IndexRecord::Entry& entry = record.entry(i);
    if (record.key(entry) != key) break;
    if (entry.retracted == 0) return entry.asserted;
  }
  return std::nullopt;
}

absl::StatusOr<std::optional<EntityId>> CommitBatch::Get(IndexOrder order,
                                                         std::string_view key) {
  const auto& map = overlay_[static_cast<int>(order)];
  auto it = map.find(key);
  if (it != map.end()) {
    if (it->second == kDeleted) return std::optional<EntityId>();
    return std::optional<EntityId>(it->second);
  }
  if (order == IndexOrder::kEavt && core_->entity_cache != nullptr &&
      key.size() > kEntityPrefixBytes) {
    // The entity's record, when the cache has one, holds its current
    // datoms as of every group written so far: each group drops the
    // records of the entities it touches before its write, and a record
    // read from an older state can no longer join the cache after that
    // (RecordCache::Insert), so a record here was read after the last
    // write to its entity. It answers for the RocksDB Get below, which
    // for an entity that exists reads a block of every level (the
    // entity-prefix filter passes it).
    RecordRef record =
        core_->entity_cache->Peek(key.substr(0, kEntityPrefixBytes));
    if (record != nullptr && !record->oversized) {
      return CurrentIn(*record, key);
    }
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

rocksdb::Iterator* CommitBatch::DbIterator(IndexOrder order, bool bounded) {
  const int o = static_cast<int>(order);
  auto& it = bounded ? db_iterators_[o] : unbounded_iterators_[o];
  if (!it) {
    rocksdb::ReadOptions ro;
    if (bounded) ro.max_skippable_internal_keys = kClogSkips;
    it.reset(core_->db->NewIterator(ro, core_->cf(CurrentCf(order))));
  }
  return it.get();
}

absl::StatusOr<const CommitBatch::Rows*> CommitBatch::ClogRows(
    IndexOrder order, std::string_view prefix) {
  const int o = static_cast<int>(order);
  auto found = clog_rows_[o].find(prefix);
  if (found != clog_rows_[o].end()) return &found->second;
  if (!clogged_prefixes_[o].contains(prefix)) return nullptr;
  Rows rows;
  rocksdb::Iterator* it = DbIterator(order, /*bounded=*/false);
  const rocksdb::Slice start(prefix.data(), prefix.size());
  for (it->Seek(start); it->Valid() && it->key().starts_with(start);
       it->Next()) {
    if (it->value().size() != 8 || rows.size() == kClogRowsMax) {
      // Read by the iterator instead (which reports a bad value).
      clogged_prefixes_[o].erase(clogged_prefixes_[o].find(prefix));
      return nullptr;
    }
    rows.emplace_back(it->key().ToString(),
                      static_cast<EntityId>(DecodeFixed64BE(std::string_view(
                          it->value().data(), it->value().size()))));
  }
  if (!it->status().ok()) {
    return absl::UnavailableError(StrCat("scanning ", IndexOrderName(order),
                                         ": ", it->status().ToString()));
  }
  return &clog_rows_[o].emplace(prefix, std::move(rows)).first->second;
}

absl::Status CommitBatch::Scan(IndexOrder order, std::string_view prefix,
                               const std::function<bool(const Datom&)>& fn) {
  const int o = static_cast<int>(order);
  // The committed side is a RocksDB iterator, or, for a prefix that
  // clogged an earlier scan of this group, its rows read once: a group
  // that changes one busy entity a thousand times must not step over its
  // tombstones a thousand times (they stay until the group's write).
  absl::StatusOr<const Rows*> rows = ClogRows(order, prefix);
  if (!rows.ok()) return rows.status();
  size_t row = 0;
  rocksdb::Iterator* it = nullptr;
  if (*rows == nullptr) it = DbIterator(order, /*bounded=*/true);
  // A bounded step that gave up goes on, unbounded, from where it was:
  // `from` is the key it sought, or (`past`) the key it stepped from.
  auto go_on = [&](std::string_view from, bool past) {
    if (it->Valid() || !it->status().IsIncomplete()) return;
    clogged_ |= 1u << o;
    clogged_prefixes_[o].emplace(prefix);
    it = DbIterator(order, /*bounded=*/false);
    it->Seek(rocksdb::Slice(from.data(), from.size()));
    if (past && it->Valid() &&
        it->key() == rocksdb::Slice(from.data(), from.size())) {
      it->Next();
    }
  };
  std::string stepped_from;
  auto next = [&](std::string_view key) {
    if (it == nullptr) {
      ++row;
      return;
    }
    stepped_from.assign(key);  // `key` is the iterator's, gone after Next
    it->Next();
    go_on(stepped_from, /*past=*/true);
  };
  if (it != nullptr) {
    it->Seek(rocksdb::Slice(prefix.data(), prefix.size()));
    go_on(prefix, /*past=*/false);
  }
  const auto& map = overlay_[o];
  auto ov = map.lower_bound(prefix);
  Datom d;
  for (;;) {
    std::string_view db_key;
    bool db_valid;
    if (it == nullptr) {
      db_valid = row < (*rows)->size();
      if (db_valid) db_key = (**rows)[row].first;
    } else {
      db_valid = it->Valid();
      if (db_valid) {
        db_key = std::string_view(it->key().data(), it->key().size());
        db_valid = db_key.starts_with(prefix);
      }
    }
    const bool ov_valid =
        ov != map.end() && std::string_view(ov->first).starts_with(prefix);
    if (!db_valid && !ov_valid) break;
    std::string_view key;
    EntityId tx;
    if (ov_valid && (!db_valid || std::string_view(ov->first) <= db_key)) {
      // The group's write shadows the committed key.
      if (db_valid && std::string_view(ov->first) == db_key) next(db_key);
      key = ov->first;
      tx = ov->second;
      ++ov;
      if (tx == kDeleted) continue;
    } else {
      if (it == nullptr) {
        tx = (**rows)[row].second;
      } else {
        rocksdb::Slice v = it->value();
        if (v.size() != 8) {
          return absl::DataLossError(
              StrCat("bad tx under a key of ", IndexOrderName(order)));
        }
        tx = static_cast<EntityId>(
            DecodeFixed64BE(std::string_view(v.data(), 8)));
      }
      absl::Status s = DecodeKey(order, db_key, &d);
      if (!s.ok()) return s;
      // Decoded before the iterator moves: the key is its bytes.
      next(db_key);
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
  if (it != nullptr && !it->status().ok()) {
    return absl::UnavailableError(StrCat("scanning ", IndexOrderName(order),
                                         ": ", it->status().ToString()));
  }
  return absl::OkStatus();
}

}  // namespace mentat::storage::internal
