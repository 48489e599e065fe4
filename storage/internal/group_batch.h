#ifndef MENTAT_STORAGE_INTERNAL_GROUP_BATCH_H_
#define MENTAT_STORAGE_INTERNAL_GROUP_BATCH_H_

#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/container/node_hash_map.h"
#include "absl/status/statusor.h"
#include "internal/import_index.h"
#include "internal/store_core.h"
#include "mentat/storage/datom.h"
#include "mentat/storage/keys.h"
#include "rocksdb/db.h"
#include "rocksdb/write_batch.h"

namespace mentat::storage::internal {

// The writes of one commit group, and reads of the current state as the
// transactor sees it while it builds the group: the committed DB plus the
// group's writes so far (read-your-writes across the transactions of a
// group). Transactor thread only.
//
// This is what RocksDB's WriteBatchWithIndex offers; we keep our own index
// because WBWI's costs ~19K instructions per indexed Put here (two skiplist
// searches with a comparator that decodes batch records; callgrind,
// storage-bench load xs), a third of the whole load. The overlay is a
// btree of the EAVT, AVET and VAET keys the group wrote (the only orders
// read back); everything goes into one plain WriteBatch for the commit.
//
// Bulk import (collect_runs) keeps a chunk of up to millions of keys
// instead of one group, so it trades the btree for an ImportIndex (append
// now, sort once at ingestion), and reads of the DB, which then holds the
// earlier chunks, go through a filter of the AVET groups (a, v) the DB
// may hold (most scans of an import ask for values nobody holds yet), a
// summary of the groups the import wrote (their first entity: enough for
// most scans, which count up to one or look up a unique value) and a
// cache of the first keys of other DB ranges.
class GroupBatch {
 public:
  // With `collect_runs`, writes are not put in a WriteBatch but collected
  // per column family, for bulk import through SST files (IngestRuns);
  // `filter_bytes` sizes the import's filter of AVET groups (0: none).
  explicit GroupBatch(const StoreCore* core, bool collect_runs = false,
                      size_t filter_bytes = 0, size_t summary_groups = 0);
  ~GroupBatch();

  // Writes a current-state key (tx is the value) or removes one.
  void PutCurrent(IndexOrder order, std::string_view key, EntityId tx);
  void DeleteCurrent(IndexOrder order, std::string_view key);
  // Writes to a family that is never read back while building a group.
  void PutRaw(Cf cf, std::string_view key, std::string_view value);
  void DeleteRaw(Cf cf, std::string_view key);

  // One save point per transaction: a failing transaction rolls back
  // alone.
  void SetSavePoint();
  void RollbackToSavePoint();
  void PopSavePoint();

  // The tx stored under `key` in the current family of `order` (EAVT, AVET
  // or VAET), if any.
  absl::StatusOr<std::optional<EntityId>> Get(IndexOrder order,
                                              std::string_view key);

  // Calls fn(datom) for each current datom whose `order` key starts with
  // `prefix`, until fn returns false. The datom's tx is set, added = true.
  // fn must not write to this batch.
  absl::Status Scan(IndexOrder order, std::string_view prefix,
                    const std::function<bool(const Datom&)>& fn);

  rocksdb::WriteBatch* batch() { return &batch_; }
  size_t count() const { return static_cast<size_t>(batch_.Count()); }

  // Keys collected so far in collect_runs mode (current state included).
  size_t collected_keys() const;

  // Collect-runs mode: writes everything collected as sorted SST files
  // under `dir` (one per column family; EAVT's split where the entity's
  // partition changes, so that each lies above the earlier chunks' files
  // and goes to the last level), ingests them, and starts empty again
  // (reads then go to the DB, which now holds the data).
  absl::Status IngestRuns(const std::string& dir);

  // The same in two halves, so that the transactor applies the next chunk
  // while a background thread (`threads` of them) writes and ingests this
  // one: StartIngest hands over everything collected and starts empty
  // (reads still see the chunk handed over, whether or not the DB holds
  // it yet); FinishIngest waits for the thread and returns its status. One
  // chunk at a time: StartIngest finishes the one before. Between
  // transactions only (no save point open).
  absl::Status StartIngest(const std::string& dir, int threads);
  absl::Status FinishIngest();

 private:
  static constexpr EntityId kDeleted = -1;
  static bool Readable(IndexOrder order) { return order != IndexOrder::kAevt; }

  struct Undo {
    uint8_t order;
    std::string_view key;  // in arena_
    bool existed;
    EntityId previous;
  };
  // Copies `bytes` into the arena; the view lives until the chunk is
  // ingested (a group: until the batch is destroyed).
  std::string_view Intern(std::string_view bytes);
  void Record(IndexOrder order, std::string_view key, EntityId tx);

  struct RunEntry {
    std::string_view key;    // in arena_
    std::string_view value;  // in arena_
    bool deleted;
  };
  void Collect(Cf cf, std::string_view key, std::string_view value,
               bool deleted);

  // Collect-runs mode reads (group_batch_ingest.cc).
  absl::Status ImportScan(IndexOrder order, std::string_view prefix,
                          const std::function<bool(const Datom&)>& fn);
  // Adds the AVET groups of the DB's keys to the filter, if they are few
  // (an import into an empty store); otherwise the filter stays off.
  absl::Status LoadFilter();
  void FilterAdd(uint64_t hash);
  bool FilterMayHold(uint64_t hash) const;
  // A chunk handed to StartIngest: its writes, and what its ingestion
  // changes in the filter and the summary (applied by FinishIngest).
  enum class SummaryChange { kNone, kSet, kErase };
  struct Frozen;
  // Sorts and writes the chunk's keys of `cf` as SST files; adds what
  // ingests them to `args`. Threads may write different families at once.
  absl::Status WriteCfFiles(Frozen* chunk, Cf cf,
                            std::vector<rocksdb::IngestExternalFileArg>* args);
  // The background thread's work: every family's files, then ingestion.
  absl::Status WriteAndIngest(Frozen* chunk, int threads);
  // An iterator over the DB for a scan of `prefix`: the order's shared
  // one, or (short prefixes) a total-order one in *local.
  rocksdb::Iterator* DbIterator(IndexOrder order, std::string_view prefix,
                                std::unique_ptr<rocksdb::Iterator>* local);
  // The first keys of the DB under `prefix` (cached until the next
  // ingestion), or null if the cache is full: then scan the DB.
  struct CachedRange;
  absl::StatusOr<const CachedRange*> CachedDbRange(IndexOrder order,
                                                   std::string_view prefix);

  const StoreCore* core_;
  const bool collect_runs_;
  rocksdb::WriteBatch batch_;
  // collect_runs mode: raw writes per column family, in write order.
  std::array<std::vector<RunEntry>, static_cast<int>(Cf::kCount)> runs_;
  std::vector<std::array<size_t, static_cast<int>(Cf::kCount)>> run_marks_;
  // Keys live in arena_: one allocation per megabyte instead of one per
  // key (most keys are longer than std::string's inline buffer).
  std::vector<std::unique_ptr<char[]>> arena_;
  size_t arena_used_ = 0;
  size_t arena_size_ = 0;
  std::array<absl::btree_map<std::string_view, EntityId>, 4> overlay_;
  // collect_runs mode: the readable orders' writes of this chunk.
  ImportIndex index_;
  std::vector<ImportIndex::Marks> index_marks_;
  // The filter of AVET groups the DB may hold: a blocked bloom filter
  // (512-bit blocks), in use once filter_state_ is kOn.
  enum class FilterState { kUnloaded, kOn, kOff };
  FilterState filter_state_ = FilterState::kUnloaded;
  std::vector<uint64_t> filter_;
  // What the DB holds of an AVET group (a, v) that the import's chunks
  // wrote (groups absent from the filter when a chunk first wrote them,
  // so the DB held nothing else of them): the first key's entity and tx,
  // and whether more keys may follow. By GroupHash, with a second hash to
  // tell groups of equal GroupHash apart.
  struct GroupSummary {
    uint64_t check = 0;
    uint64_t first_e = 0;
    EntityId first_tx = 0;
    bool has_first = false;
    bool more = false;
  };
  absl::flat_hash_map<uint64_t, GroupSummary> summary_;
  size_t summary_limit_ = 0;
  // The summary of `group` (of GroupHash `hash`), or null if there is
  // none.
  const GroupSummary* FindSummary(std::string_view group, uint64_t hash) const;
  // What one AVET group's writes in a chunk being ingested (sorted, the
  // latest write of each key) change in its summary (the new summary in
  // *out for kSet). Against the filter and summary from before the chunk.
  SummaryChange Summarize(std::string_view group,
                          const std::pair<std::string_view, EntityId>* writes,
                          size_t n, GroupSummary* out) const;
  struct SummaryChangeAt {
    uint64_t hash;
    SummaryChange change;
    GroupSummary summary;
  };
  struct Frozen {
    std::string dir;
    ImportIndex index;
    std::array<std::vector<RunEntry>, static_cast<int>(Cf::kCount)> runs;
    std::vector<std::unique_ptr<char[]>> arena;
    std::vector<uint64_t> filter_adds;
    std::vector<SummaryChangeAt> summary_changes;
    absl::Status status;
    std::thread worker;
  };
  std::unique_ptr<Frozen> frozen_;
  // The first keys of DB ranges by order and prefix (cleared at each
  // ingestion): most scans want one key or only a few.
  struct CachedRange {
    bool more = false;  // the range holds more keys than these
    std::vector<std::pair<std::string, EntityId>> keys;
  };
  // Node-based: a scan keeps a pointer to its range while fn may scan.
  absl::node_hash_map<std::string, CachedRange> db_cache_;
  std::vector<Undo> undo_;
  std::vector<size_t> save_points_;
  // Iterators over the committed DB; valid for the whole group, since only
  // the transactor writes and it writes the group at the end.
  std::array<std::unique_ptr<rocksdb::Iterator>, 4> db_iterators_;
};

}  // namespace mentat::storage::internal

#endif  // MENTAT_STORAGE_INTERNAL_GROUP_BATCH_H_
