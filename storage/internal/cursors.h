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
// EAVT or AVET datoms visible at `t` (asserted at or before it and not
// retracted by it; t <= the Db's basis), served from `cache` per entity
// (EAVT) or per attribute and value (AVET). Seeks under any other prefix,
// and prefixes too big for the cache, go to `fallback`, the ordinary
// cursor of the same view.
class RecordCache;
std::unique_ptr<DatomCursor> NewCachedCursor(
    const Db& db, IndexOrder order, RecordCache* cache, EntityId t,
    std::unique_ptr<DatomCursor> fallback);

// AEVT or AVET datoms visible at `t`, served from the version of the
// seek's attribute's column that answers `t` when `cache` has one;
// everything else goes to `fallback`, whose keys read under one attribute
// count towards building its column (ColumnCache::CountScanned).
class ColumnCache;
std::unique_ptr<DatomCursor> NewColumnCursor(
    const Db& db, IndexOrder order, ColumnCache* cache, EntityId t,
    std::unique_ptr<DatomCursor> fallback);

}  // namespace mentat::storage::internal

#endif  // MENTAT_STORAGE_INTERNAL_CURSORS_H_
