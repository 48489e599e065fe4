#include "basis.h"

#include <algorithm>

#include "mentat/base/str_cat.h"
#include "mentat/storage/entity_ids.h"

namespace mentat::server {

using storage::Basis;
using storage::EntityId;

namespace {

// The tx a basis point names, on `db`.
[[nodiscard]] absl::StatusOr<EntityId> PointTx(const storage::Db& db,
                                               const v1::Basis& b) {
  switch (b.point_case()) {
    case v1::Basis::kTx: {
      auto t = storage::Db::ResolveT(b.tx());
      if (!t.ok()) {
        return absl::InvalidArgumentError(
            StrCat("basis: ", t.status().message()));
      }
      return *t;
    }
    case v1::Basis::kInstantMicros: {
      std::optional<EntityId> t = db.TxAtOrBeforeInstant(b.instant_micros());
      // Before the first transaction: the empty database.
      return t ? *t : storage::MakeEntityId(storage::Partition::kTx, 0);
    }
    case v1::Basis::POINT_NOT_SET:
      break;
  }
  return absl::InvalidArgumentError(
      "basis: AS_OF and SINCE need a tx or an instant_micros");
}

}  // namespace

absl::StatusOr<ResolvedView> ResolveBasis(Database& database,
                                          const v1::Basis& basis,
                                          EntityId pinned_db_tx,
                                          const WithTxData& with) {
  const EntityId db_tx = pinned_db_tx != 0 ? pinned_db_tx : basis.db_tx();
  std::shared_ptr<const storage::Db> db;
  // Set when reading an older value through as_of on a newer Db.
  EntityId bound = 0;
  if (db_tx != 0) {
    db = database.DbAt(db_tx);
    if (db == nullptr) {
      std::shared_ptr<const storage::Db> latest = database.Latest();
      if (db_tx > latest->basis_tx()) {
        return absl::InvalidArgumentError(
            StrCat("basis: db_tx ", db_tx, " is later than the latest basis ",
                   latest->basis_tx()));
      }
      if (basis.kind() != v1::Basis::LATEST &&
          basis.kind() != v1::Basis::AS_OF) {
        // Reading as of db_tx cannot rebuild them: since(t) and history
        // as of an older value would need a second bound the storage
        // views do not have. Refuse rather than read the newer value.
        return absl::FailedPreconditionError(StrCat(
            "basis: the database value at ", db_tx,
            " is no longer held (the server keeps it for --resume-window, "
            "not across a restart) and SINCE and HISTORY reads of an older "
            "value cannot be rebuilt; start over on the latest"));
      }
      db = std::move(latest);
      bound = db_tx;
    }
  } else {
    db = database.Latest();
  }
  std::shared_ptr<const storage::Db> committed = db;
  if (!with.empty()) {
    if (bound != 0) {
      return absl::FailedPreconditionError(StrCat(
          "basis: with_tx_data applies to a database value the server holds; "
          "the value at db_tx ",
          bound,
          " is no longer held (the server keeps it for --resume-window); "
          "start over on the latest"));
    }
    auto applied = ApplyWithTxData(std::move(db), with);
    if (!applied.ok()) return applied.status();
    db = *std::move(applied);
  }

  Basis b;
  switch (basis.kind()) {
    case v1::Basis::LATEST:
      b = bound != 0 ? Basis::AsOf(bound) : Basis::Current();
      break;
    case v1::Basis::AS_OF: {
      auto t = PointTx(*db, basis);
      if (!t.ok()) return t.status();
      b = Basis::AsOf(bound != 0 ? std::min(*t, bound) : *t);
      break;
    }
    case v1::Basis::SINCE: {
      auto t = PointTx(*db, basis);
      if (!t.ok()) return t.status();
      b = Basis::Since(*t);
      break;
    }
    case v1::Basis::HISTORY:
      b = Basis::History();
      break;
    default:
      return absl::InvalidArgumentError(
          StrCat("basis: unknown kind ", static_cast<int>(basis.kind())));
  }
  absl::Status s = db->CheckBasis(b);
  if (!s.ok()) return s;
  ResolvedView out{db, storage::DbView(db, b),
                   bound != 0 ? bound : committed->basis_tx(), committed};
  return out;
}

}  // namespace mentat::server
