#include "mentat/storage/tx_log.h"

#include <memory>
#include <string>

#include "internal/coding.h"
#include "internal/log_codec.h"
#include "internal/store_core.h"
#include "mentat/base/str_cat.h"
#include "mentat/storage/entity_ids.h"
#include "rocksdb/db.h"

namespace mentat::storage {

using internal::Cf;

namespace {

[[nodiscard]] absl::Status IteratorError(const rocksdb::Iterator& it) {
  return absl::UnavailableError(
      StrCat("reading the log: ", it.status().ToString()));
}

}  // namespace

[[nodiscard]] absl::Status ReadTxLog(const Db& db, EntityId from, EntityId to,
                                     const TxLogVisitor& visit) {
  // The raw walk, each entry decoded into one reused vector.
  std::vector<Datom> datoms;
  absl::Status decoded;
  absl::Status s =
      ReadTxLogRaw(db, /*prev=*/0, from, to,
                   [&](EntityId, EntityId tx, std::string_view entry) {
                     datoms.clear();
                     decoded = internal::DecodeLogEntry(tx, entry, &datoms);
                     return decoded.ok() && visit(tx, datoms);
                   });
  if (!s.ok()) return s;
  return decoded;
}

absl::Status ReadTxLogRaw(const Db& db, EntityId prev, EntityId from,
                          EntityId to, const TxLogRawVisitor& visit) {
  const EntityId last = db.basis_tx();
  // Log keys are tx ids; the basis bounds what this Db may see even if the
  // snapshot holds later commits of a group.
  uint64_t upper = static_cast<uint64_t>(last) + 1;
  if (to > 0 && static_cast<uint64_t>(to) < upper) {
    upper = static_cast<uint64_t>(to);
  }
  const uint64_t lower = from < 0 ? 0 : static_cast<uint64_t>(from);
  if (lower >= upper) return absl::OkStatus();

  rocksdb::ReadOptions ro;
  ro.snapshot = db.snapshot();
  const std::string upper_key = internal::Fixed64BE(upper);
  rocksdb::Slice upper_slice(upper_key);
  ro.iterate_upper_bound = &upper_slice;
  std::unique_ptr<rocksdb::Iterator> it(
      db.core().db->NewIterator(ro, db.core().cf(Cf::kLog)));
  for (it->Seek(internal::Fixed64BE(lower)); it->Valid(); it->Next()) {
    const std::string_view key(it->key().data(), it->key().size());
    if (key.size() != 8) {
      return absl::DataLossError(
          StrCat("log key of ", key.size(), " bytes, want 8"));
    }
    const EntityId tx = static_cast<EntityId>(internal::DecodeFixed64BE(key));
    if (!visit(prev, tx,
               std::string_view(it->value().data(), it->value().size()))) {
      return absl::OkStatus();
    }
    prev = tx;
  }
  if (!it->status().ok()) return IteratorError(*it);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Datom>> DecodeTxLogEntry(EntityId tx,
                                                    std::string_view entry) {
  std::vector<Datom> out;
  absl::Status s = internal::DecodeLogEntry(tx, entry, &out);
  if (!s.ok()) return s;
  return out;
}

absl::StatusOr<int64_t> TxLogEntryTerm(EntityId tx, std::string_view entry) {
  internal::LogEntryHeader header;
  absl::Status s = internal::DecodeLogEntryHeader(tx, entry, &header);
  if (!s.ok()) return s;
  return header.term;
}

[[nodiscard]] absl::StatusOr<std::vector<Datom>> ReadTxLogEntry(const Db& db,
                                                                EntityId tx) {
  std::vector<Datom> out;
  bool found = false;
  absl::Status s = ReadTxLog(db, tx, tx + 1,
                             [&](EntityId, const std::vector<Datom>& datoms) {
                               out = datoms;
                               found = true;
                               return false;
                             });
  if (!s.ok()) return s;
  if (!found) {
    return absl::NotFoundError(StrCat("no transaction ", tx, " in the log"));
  }
  return out;
}

[[nodiscard]] absl::StatusOr<EntityId> PreviousTx(const Db& db, EntityId tx) {
  if (tx <= 0) return EntityId{0};
  rocksdb::ReadOptions ro;
  ro.snapshot = db.snapshot();
  std::unique_ptr<rocksdb::Iterator> it(
      db.core().db->NewIterator(ro, db.core().cf(Cf::kLog)));
  it->SeekForPrev(internal::Fixed64BE(static_cast<uint64_t>(tx) - 1));
  if (!it->Valid()) {
    if (!it->status().ok()) return IteratorError(*it);
    return EntityId{0};
  }
  const std::string_view key(it->key().data(), it->key().size());
  if (key.size() != 8) {
    return absl::DataLossError(
        StrCat("log key of ", key.size(), " bytes, want 8"));
  }
  return static_cast<EntityId>(internal::DecodeFixed64BE(key));
}

int64_t TxInstantOf(EntityId tx, const std::vector<Datom>& datoms) {
  for (const Datom& d : datoms) {
    if (d.e == tx && d.a == ids::kDbTxInstant && d.added &&
        d.v.type() == ValueType::kInstant) {
      return d.v.as_long();
    }
  }
  return 0;
}

}  // namespace mentat::storage
