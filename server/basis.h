#ifndef MENTAT_SERVER_BASIS_H_
#define MENTAT_SERVER_BASIS_H_

#include <memory>

#include "absl/status/statusor.h"
#include "database.h"
#include "mentat/storage/db.h"
#include "mentat/v1/mentat.pb.h"
#include "with_tx_data.h"

namespace mentat::server {

// A read's database value and view, and the basis tx to report.
struct ResolvedView {
  std::shared_ptr<const storage::Db> db;
  storage::DbView view;
  // The basis the read sees as "latest": db->basis_tx(), or the pinned
  // db_tx when an older value is read through as_of; with with_tx_data,
  // the committed value's basis they applied to.
  storage::EntityId basis_tx = 0;
  // The committed value read: `db`, or what with_tx_data applied to.
  std::shared_ptr<const storage::Db> committed;
};

// Turns a wire Basis into a view of `database`. `pinned_db_tx` (0: the
// request's basis.db_tx) names the database value to read: the latest if
// that is its basis, one the database keeps for resuming, or, for LATEST
// and AS_OF, the latest read as of it. Errors: InvalidArgument (a point
// missing or not a tx, a db_tx later than the latest), FailedPrecondition
// (before the retention horizon; SINCE/HISTORY on a value no longer kept).
// With `with` (a request's with_tx_data), its transactions are applied to
// the named value (which must be held: FailedPrecondition otherwise) and
// the basis views the result; their errors are ApplyWithTxData's.
[[nodiscard]] absl::StatusOr<ResolvedView> ResolveBasis(
    Database& database, const v1::Basis& basis,
    storage::EntityId pinned_db_tx = 0, const WithTxData& with = {});

}  // namespace mentat::server

#endif  // MENTAT_SERVER_BASIS_H_
