#ifndef MENTAT_STORAGE_INTERNAL_STORE_CORE_H_
#define MENTAT_STORAGE_INTERNAL_STORE_CORE_H_

#include <memory>
#include <vector>

#include "mentat/storage/keys.h"
#include "mentat/storage/store_options.h"
#include "rocksdb/db.h"
#include "rocksdb/statistics.h"

namespace mentat::storage::internal {

// The column families of a store, in the order they are opened.
enum class Cf : int {
  kEavt = 0,
  kAevt,
  kAvet,
  kVaet,
  kEavtHist,
  kAevtHist,
  kAvetHist,
  kVaetHist,
  kLog,
  kMeta,
  kCount,
};

const char* CfName(Cf cf);

inline Cf CurrentCf(IndexOrder order) {
  return static_cast<Cf>(static_cast<int>(order));
}
inline Cf HistoryCf(IndexOrder order) {
  return static_cast<Cf>(static_cast<int>(order) + 4);
}

// The open RocksDB instance and its column family handles. Shared (through
// shared_ptr) by the Store and every Db it published, so the instance
// closes only when the last reader lets go.
struct StoreCore {
  ~StoreCore();

  rocksdb::ColumnFamilyHandle* cf(Cf c) const {
    return handles[static_cast<int>(c)];
  }

  StoreOptions options;
  rocksdb::DB* db = nullptr;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  std::shared_ptr<rocksdb::Statistics> statistics;
};

}  // namespace mentat::storage::internal

#endif  // MENTAT_STORAGE_INTERNAL_STORE_CORE_H_
