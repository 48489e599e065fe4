#include "internal/group_batch.h"

#include <cstring>

#include "internal/coding.h"
#include "mentat/storage/str_cat.h"

namespace mentat::storage::internal {

GroupBatch::GroupBatch(const StoreCore* core, bool collect_runs,
                       size_t filter_bytes, size_t summary_groups)
    : core_(core), collect_runs_(collect_runs), summary_limit_(summary_groups) {
  // Whole 512-bit blocks, a power of two of them.
  size_t words = 8;
  while (words * 2 * 8 <= filter_bytes) words *= 2;
  if (!collect_runs || filter_bytes < 64) {
    filter_state_ = FilterState::kOff;
  } else {
    filter_.assign(words, 0);
  }
}

std::string_view GroupBatch::Intern(std::string_view bytes) {
  constexpr size_t kBlock = size_t{1} << 20;
  // Empty values (deletes) need no copy; memcpy from their null data and
  // arena_.back() before the first block would be undefined.
  if (bytes.empty()) return std::string_view();
  if (arena_used_ + bytes.size() > arena_size_) {
    arena_size_ = std::max(kBlock, bytes.size());
    arena_.push_back(std::make_unique<char[]>(arena_size_));
    arena_used_ = 0;
  }
  char* dst = arena_.back().get() + arena_used_;
  std::memcpy(dst, bytes.data(), bytes.size());
  arena_used_ += bytes.size();
  return std::string_view(dst, bytes.size());
}

void GroupBatch::Collect(Cf cf, std::string_view key, std::string_view value,
                         bool deleted) {
  runs_[static_cast<int>(cf)].push_back(
      RunEntry{Intern(key), Intern(value), deleted});
}

GroupBatch::~GroupBatch() {
  // A chunk still being ingested (the import failed): let it finish; what
  // it ingested stays, as with any chunk the import did not record.
  if (frozen_ != nullptr) frozen_->worker.join();
}

void GroupBatch::Record(IndexOrder order, std::string_view key, EntityId tx) {
  if (!Readable(order)) return;
  if (collect_runs_) return index_.Add(order, Intern(key), tx);
  auto& map = overlay_[static_cast<int>(order)];
  auto it = map.find(key);
  const bool inserted = it == map.end();
  if (inserted) it = map.emplace(Intern(key), tx).first;
  if (!save_points_.empty()) {
    undo_.push_back(Undo{static_cast<uint8_t>(order), it->first, !inserted,
                         inserted ? 0 : it->second});
  }
  if (!inserted) it->second = tx;
}

void GroupBatch::PutCurrent(IndexOrder order, std::string_view key,
                            EntityId tx) {
  char value[8];
  uint64_t v = static_cast<uint64_t>(tx);
  for (int i = 7; i >= 0; --i, v >>= 8) value[i] = static_cast<char>(v & 0xff);
  Record(order, key, tx);
  if (collect_runs_) {
    // Readable orders are written from the overlay itself at ingest.
    if (!Readable(order)) {
      Collect(CurrentCf(order), key, std::string_view(value, 8), false);
    }
    return;
  }
  batch_
      .Put(core_->cf(CurrentCf(order)), rocksdb::Slice(key.data(), key.size()),
           rocksdb::Slice(value, 8))
      .PermitUncheckedError();
}

void GroupBatch::DeleteCurrent(IndexOrder order, std::string_view key) {
  // Every current key is Put once per life (redundant assertions are
  // elided), so SingleDelete applies: at flush it cancels the Put instead
  // of leaving a tombstone that reads would step over.
  Record(order, key, kDeleted);
  if (collect_runs_) {
    if (!Readable(order)) Collect(CurrentCf(order), key, {}, true);
    return;
  }
  batch_
      .SingleDelete(core_->cf(CurrentCf(order)),
                    rocksdb::Slice(key.data(), key.size()))
      .PermitUncheckedError();
}

void GroupBatch::PutRaw(Cf cf, std::string_view key, std::string_view value) {
  if (collect_runs_) return Collect(cf, key, value, false);
  batch_
      .Put(core_->cf(cf), rocksdb::Slice(key.data(), key.size()),
           rocksdb::Slice(value.data(), value.size()))
      .PermitUncheckedError();
}

void GroupBatch::DeleteRaw(Cf cf, std::string_view key) {
  if (collect_runs_) return Collect(cf, key, {}, true);
  batch_.Delete(core_->cf(cf), rocksdb::Slice(key.data(), key.size()))
      .PermitUncheckedError();
}

void GroupBatch::SetSavePoint() {
  batch_.SetSavePoint();
  save_points_.push_back(undo_.size());
  std::array<size_t, static_cast<int>(Cf::kCount)> marks;
  for (size_t i = 0; i < marks.size(); ++i) marks[i] = runs_[i].size();
  run_marks_.push_back(marks);
  if (collect_runs_) index_marks_.push_back(index_.marks());
}

void GroupBatch::RollbackToSavePoint() {
  batch_.RollbackToSavePoint().PermitUncheckedError();
  const size_t mark = save_points_.back();
  save_points_.pop_back();
  for (size_t i = 0; i < runs_.size(); ++i)
    runs_[i].resize(run_marks_.back()[i]);
  run_marks_.pop_back();
  if (collect_runs_) {
    index_.Truncate(index_marks_.back());
    index_marks_.pop_back();
  }
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

void GroupBatch::PopSavePoint() {
  batch_.PopSavePoint().PermitUncheckedError();
  save_points_.pop_back();
  run_marks_.pop_back();
  if (collect_runs_) index_marks_.pop_back();
  if (save_points_.empty()) undo_.clear();
}

absl::StatusOr<std::optional<EntityId>> GroupBatch::Get(IndexOrder order,
                                                        std::string_view key) {
  if (collect_runs_) {
    std::optional<EntityId> written = index_.Find(order, key);
    if (!written && frozen_ != nullptr) {
      written = frozen_->index.Find(order, key);
    }
    if (written) {
      if (*written == kDeleted) return std::optional<EntityId>();
      return written;
    }
  } else {
    const auto& map = overlay_[static_cast<int>(order)];
    auto it = map.find(key);
    if (it != map.end()) {
      if (it->second == kDeleted) return std::optional<EntityId>();
      return std::optional<EntityId>(it->second);
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

absl::Status GroupBatch::Scan(IndexOrder order, std::string_view prefix,
                              const std::function<bool(const Datom&)>& fn) {
  if (collect_runs_) return ImportScan(order, prefix, fn);
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
