#ifndef MENTAT_STORAGE_TX_LOG_H_
#define MENTAT_STORAGE_TX_LOG_H_

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "mentat/storage/datom.h"
#include "mentat/storage/db.h"

namespace mentat::storage {

// Reading the transaction log (the `log` column family): per transaction,
// the datoms it wrote, in the order written. Reads go through the Db's
// snapshot, so they see exactly the transactions up to db.basis_tx(), and
// never block the writer. Thread-safe: any thread may read any Db.

// Called once per transaction, oldest first. Return false to stop early.
using TxLogVisitor =
    std::function<bool(EntityId tx, const std::vector<Datom>& datoms)>;

// Visits every transaction `tx` with from <= tx < to that the Db can see
// (`to` == 0: no upper bound besides the basis). Returns DataLoss for a
// malformed entry, Unavailable for a RocksDB read error, OK otherwise
// (also when stopped early).
[[nodiscard]] absl::Status ReadTxLog(const Db& db, EntityId from, EntityId to,
                                     const TxLogVisitor& visit);

// Called once per transaction, oldest first, with the transaction before
// it in the log (0 for the first) and the entry's bytes as stored (valid
// during the call). Return false to stop early.
using TxLogRawVisitor =
    std::function<bool(EntityId prev_tx, EntityId tx, std::string_view entry)>;

// As ReadTxLog, without decoding the entries (replication streams them as
// they are stored). `prev` is the transaction before `from` in the log (the
// first call's prev_tx), or 0.
[[nodiscard]] absl::Status ReadTxLogRaw(const Db& db, EntityId prev,
                                        EntityId from, EntityId to,
                                        const TxLogRawVisitor& visit);

// Decodes a stored entry of transaction `tx` (as ReadTxLogRaw hands it);
// DataLoss on malformed bytes.
[[nodiscard]] absl::StatusOr<std::vector<Datom>> DecodeTxLogEntry(
    EntityId tx, std::string_view entry);

// The term that wrote a stored entry of transaction `tx` (the primary's,
// docs/replication.md): 0 for an entry written before elections or before
// the store's format 2. DataLoss on a malformed header.
[[nodiscard]] absl::StatusOr<int64_t> TxLogEntryTerm(EntityId tx,
                                                     std::string_view entry);

// The datoms of transaction `tx`; NotFound if the log has no such entry at
// the Db's basis.
[[nodiscard]] absl::StatusOr<std::vector<Datom>> ReadTxLogEntry(const Db& db,
                                                                EntityId tx);

// The latest transaction in the log before `tx` (the basis a transaction
// applied on), or 0 if there is none.
[[nodiscard]] absl::StatusOr<EntityId> PreviousTx(const Db& db, EntityId tx);

// The :db/txInstant of a transaction among its own datoms, or 0 if it is
// not there.
int64_t TxInstantOf(EntityId tx, const std::vector<Datom>& datoms);

}  // namespace mentat::storage

#endif  // MENTAT_STORAGE_TX_LOG_H_
