#ifndef MENTAT_STORAGE_INTERNAL_KEY_ORDERED_BATCH_H_
#define MENTAT_STORAGE_INTERNAL_KEY_ORDERED_BATCH_H_

#include <vector>

#include "rocksdb/db.h"
#include "rocksdb/write_batch.h"

namespace mentat::storage::internal {

// Copies `batch` into `*ordered` (cleared first) with its entries sorted
// by column family and then by key, entries of one key keeping their
// order. Returns false, leaving `*ordered` unspecified, when `batch` holds
// an entry other than a Put, Delete or SingleDelete (a range deletion, a
// merge, log data) or names a column family not in `families`: their
// order is kept by writing `batch` as it is.
//
// Why: RocksDB inserts a batch into the memtable in the batch's order, and
// a memtable insert starts where the previous insert into the same skiplist
// ended when the key follows it closely. A commit group of many small
// transactions interleaves, in each column family, keys of the clients'
// entities (scattered) with keys of the group's transaction entities and
// log records (consecutive); sorted, the consecutive keys are inserted one
// after another, each in a few comparisons instead of a search from the
// skiplist's top.
//
// Writing the sorted batch is the same commit: one batch is applied
// atomically, and only entries of one key depend on their order.
bool KeyOrderedBatch(const rocksdb::WriteBatch& batch,
                     const std::vector<rocksdb::ColumnFamilyHandle*>& families,
                     rocksdb::WriteBatch* ordered);

}  // namespace mentat::storage::internal

#endif  // MENTAT_STORAGE_INTERNAL_KEY_ORDERED_BATCH_H_
