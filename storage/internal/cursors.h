#ifndef MENTAT_STORAGE_INTERNAL_CURSORS_H_
#define MENTAT_STORAGE_INTERNAL_CURSORS_H_

#include <memory>

#include "internal/store_core.h"
#include "mentat/storage/datom_cursor.h"
#include "mentat/storage/db.h"

namespace mentat::storage::internal {

// Cursors for each basis kind (see BasisKind). All read through the Db's
// RocksDB snapshot.
std::unique_ptr<DatomCursor> NewCurrentCursor(const Db& db, IndexOrder order);
// Current datoms asserted at or before `t`, plus retracted datoms whose
// interval [asserted, retracted) contains `t`.
std::unique_ptr<DatomCursor> NewAsOfCursor(const Db& db, IndexOrder order,
                                           EntityId t);
// Current datoms asserted after `t`.
std::unique_ptr<DatomCursor> NewSinceCursor(const Db& db, IndexOrder order,
                                            EntityId t);
// Every assertion and retraction, per key in tx order.
std::unique_ptr<DatomCursor> NewHistoryCursor(const Db& db, IndexOrder order);

}  // namespace mentat::storage::internal

#endif  // MENTAT_STORAGE_INTERNAL_CURSORS_H_
