#ifndef MENTAT_STORAGE_INTERNAL_STORE_CORE_H_
#define MENTAT_STORAGE_INTERNAL_STORE_CORE_H_

#include <atomic>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "internal/background_errors.h"
#include "internal/column_cache.h"
#include "internal/record_cache.h"
#include "internal/since_index.h"
#include "mentat/storage/keys.h"
#include "mentat/storage/store_options.h"
#include "rocksdb/compaction_filter.h"
#include "rocksdb/db.h"
#include "rocksdb/statistics.h"

namespace mentat::storage::internal {

class ColumnWorker;

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
  // Postings of :db/fulltext attributes (internal/fulltext_index.h).
  kFulltext,
  kCount,
};

const char* CfName(Cf cf);

inline Cf CurrentCf(IndexOrder order) {
  return static_cast<Cf>(static_cast<int>(order));
}
inline Cf HistoryCf(IndexOrder order) {
  return static_cast<Cf>(static_cast<int>(order) + 4);
}

// The memtable size of every family. RocksDB's SstFileManager resumes
// writes stopped by a full disk only once this much space is free (room to
// flush a memtable).
inline constexpr size_t kMemtableBytes = size_t{64} << 20;

// Families whose keys start with an entity id (EAVT: e, VAET: the ref v,
// current and history) carry a bloom filter of that 8-byte prefix: a seek
// for one entity skips every file (L0 files, levels, history) that holds
// nothing of it. The other families start with the attribute, which every
// file holds, so a filter there would only cost memory.
inline constexpr size_t kEntityPrefixBytes = 8;
inline bool HasEntityPrefixFilter(Cf cf) {
  return cf == Cf::kEavt || cf == Cf::kVaet || cf == Cf::kEavtHist ||
         cf == Cf::kVaetHist;
}

// Read options for iterators that may cross an entity prefix (scans of a
// whole family or attribute, SeekForPrev): total order, because with a
// prefix extractor RocksDB otherwise defines Seek only within one prefix.
inline rocksdb::ReadOptions TotalOrderReadOptions() {
  rocksdb::ReadOptions ro;
  ro.total_order_seek = true;
  return ro;
}

// The retention horizons the history compaction filter applies: a
// retracted datom whose retracting tx is <= the horizon of its attribute
// is dropped. Written by Store::ApplyRetention, read by compaction threads.
struct RetentionState {
  std::atomic<int64_t> database_horizon{0};
  std::atomic<std::shared_ptr<const absl::flat_hash_map<EntityId, int64_t>>>
      attribute_horizons{
          std::make_shared<const absl::flat_hash_map<EntityId, int64_t>>()};

  int64_t HorizonFor(EntityId a) const {
    const int64_t db = database_horizon.load(std::memory_order_relaxed);
    auto per = attribute_horizons.load();
    auto it = per->find(a);
    return it == per->end() ? db : it->second;
  }
};

// Drops retracted datoms older than the retention horizon from a history
// family. Stateless apart from RetentionState; safe on any thread.
class HistoryRetentionFilter : public rocksdb::CompactionFilter {
 public:
  HistoryRetentionFilter(IndexOrder order, const RetentionState* state)
      : order_(order), state_(state) {}
  bool Filter(int level, const rocksdb::Slice& key, const rocksdb::Slice& value,
              std::string* new_value, bool* value_changed) const override;
  const char* Name() const override { return "mentat.HistoryRetention"; }

 private:
  IndexOrder order_;
  const RetentionState* state_;
};

// The open RocksDB instance and its column family handles. Shared (through
// shared_ptr) by the Store and every Db it published, so the instance
// closes only when the last reader lets go.
struct StoreCore {
  ~StoreCore();

  rocksdb::ColumnFamilyHandle* cf(Cf c) const {
    return handles[static_cast<int>(c)];
  }

  StoreOptions options;
  std::string path;
  // The Env of `db` when the store made its own (presized log files,
  // internal/presized_log.h); destroyed after `db` closes.
  std::unique_ptr<rocksdb::Env> log_env;
  rocksdb::DB* db = nullptr;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  std::shared_ptr<rocksdb::Statistics> statistics;
  // EAVT records per entity and AVET records per attribute and value;
  // null when StoreOptions::entity_cache_bytes / value_cache_bytes is 0.
  std::unique_ptr<RecordCache> entity_cache;
  std::unique_ptr<RecordCache> value_cache;
  // Columns of attributes read in bulk (AEVT and AVET); null when
  // StoreOptions::column_cache_bytes is 0.
  std::unique_ptr<ColumnCache> column_cache;
  // Builds and folds the columns (with column_cache); stopped before `db`
  // closes.
  std::unique_ptr<ColumnWorker> column_worker;
  // since() indexes shared across views (internal/since_index.h).
  std::unique_ptr<SinceCache> since_cache;
  // Excisions committed whose bytes no purge (internal/excision_purge.h)
  // has finished rewriting since: the transactor adds one per excision, a
  // purge subtracts those it saw before it began. A checkpoint purges
  // first while it is not 0.
  std::atomic<uint64_t> unpurged_excisions{0};
  RecordCache* cache(IndexOrder order) const {
    if (order == IndexOrder::kEavt) return entity_cache.get();
    if (order == IndexOrder::kAvet) return value_cache.get();
    return nullptr;
  }
  // Declared before `db` is opened and destroyed after it closes: the
  // compaction filters point into it.
  std::unique_ptr<RetentionState> retention =
      std::make_unique<RetentionState>();
  std::vector<std::unique_ptr<HistoryRetentionFilter>> retention_filters;
  // RocksDB's background error state (a listener of the DB).
  // It counts the seals of the meta family's memtable, which the
  // transactor keeps non-empty (Transactor::PinMemtable).
  std::shared_ptr<BackgroundErrors> background_errors =
      std::make_shared<BackgroundErrors>(CfName(Cf::kMeta));
};

}  // namespace mentat::storage::internal

#endif  // MENTAT_STORAGE_INTERNAL_STORE_CORE_H_
