#ifndef MENTAT_STORAGE_INTERNAL_IMPORT_BATCH_H_
#define MENTAT_STORAGE_INTERNAL_IMPORT_BATCH_H_

#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/node_hash_map.h"
#include "absl/status/statusor.h"
#include "internal/import_index.h"
#include "internal/imported_groups.h"
#include "internal/key_arena.h"
#include "internal/store_core.h"
#include "internal/tx_batch.h"
#include "mentat/storage/datom.h"
#include "mentat/storage/keys.h"
#include "rocksdb/db.h"

namespace mentat::storage::internal {

// A bulk import's writes, one chunk of up to millions of keys at a time,
// and reads of the current state as the transactor sees it while it
// applies the import: the DB (which holds the chunks ingested so far),
// the chunk being ingested, and this chunk's writes. A chunk is written as
// sorted SST files per column family and ingested (no memtable, no WAL).
//
// A commit group's btree would not do here: its string_view keys spent
// most of an import in memcmp over cache-missing keys. The readable
// orders' writes go to an ImportIndex instead (append now, sort once at
// ingestion), the others to plain runs per family. Reads of the DB go
// through ImportedGroups (a filter of the AVET groups the DB may hold: most
// scans of an import ask for values nobody holds yet; and a summary of the
// groups the import wrote) and a cache of the first keys of other DB
// ranges.
//
// Transactor thread only, but for the background thread StartIngest
// starts, which reads what it was handed and the ImportedGroups and never
// what the transactor writes. `core` must outlive the batch; a chunk still
// being ingested when the batch is destroyed is waited for.
class ImportBatch final : public TxBatch {
 public:
  // `filter_bytes` sizes the filter of AVET groups (0: none);
  // `summary_groups` caps their summary (0: none).
  ImportBatch(const StoreCore* core, size_t filter_bytes,
              size_t summary_groups);
  ~ImportBatch() override;

  void PutCurrent(IndexOrder order, std::string_view key, EntityId tx) override;
  void DeleteCurrent(IndexOrder order, std::string_view key) override;
  void PutRaw(Cf cf, std::string_view key, std::string_view value) override;
  [[nodiscard]] absl::StatusOr<std::optional<EntityId>> Get(
      IndexOrder order, std::string_view key) override;
  [[nodiscard]] absl::Status Scan(
      IndexOrder order, std::string_view prefix,
      const std::function<bool(const Datom&)>& fn) override;

  // One save point per transaction: a failing transaction rolls back
  // alone. Pop keeps the writes since the last save point.
  void SetSavePoint();
  void RollbackToSavePoint();
  void PopSavePoint();

  // Keys collected in this chunk so far (current state included).
  size_t collected_keys() const;

  // Hands everything collected to a background thread (`threads` of them)
  // that writes it as sorted SST files under `dir` (one file per column
  // family, EAVT's split where the entity's partition changes and AEVT's
  // where the attribute does, so that each lies beside or above the
  // earlier chunks' files and goes to the last level)
  // and ingests them, and starts an empty chunk: the transactor applies
  // the next chunk meanwhile. Reads still see the chunk handed over,
  // whether or not the DB holds it yet. One chunk at a time: StartIngest
  // first finishes the one before (and returns its error). Between
  // transactions only (no save point open). Errors: ResourceExhausted
  // (a full disk, naming the store's directory), Unavailable.
  [[nodiscard]] absl::Status StartIngest(const std::string& dir, int threads);
  // Waits for the chunk StartIngest handed over (if any) and returns its
  // status; from then on reads see it in the DB. Errors as StartIngest's.
  [[nodiscard]] absl::Status FinishIngest();

  // The families whose chunk files overlap (ChunksOverlap) and that
  // received files from the chunks ingested so far. Their files are
  // written uncompressed: the import merges them at its end
  // (CompactImportedFamilies), which compresses them.
  std::vector<Cf> OverlappingFamiliesIngested() const;

  // The attributes whose distinct values the chunks count as they are
  // written (ImportDistinct), so that the transactor need not: those
  // untracked when the chunk being collected began. Only grows, and only
  // between chunks (after StartIngest, before the next chunk's first
  // transaction), so that one set holds for a whole chunk.
  void CountDistinctOf(EntityId attribute) {
    distinct_attributes_.insert(attribute);
  }
  const absl::flat_hash_set<EntityId>& distinct_attributes() const {
    return distinct_attributes_;
  }
  // After FinishIngest succeeded: the change in distinct values per
  // attribute of CountDistinctOf that the chunk it waited for made (empty
  // if there was none); taking it clears it.
  absl::flat_hash_map<EntityId, int64_t> TakeDistinctDeltas() {
    return std::move(distinct_deltas_);
  }

 private:
  // A write to a family that is not read back.
  struct RunEntry {
    std::string_view key;    // in the arena
    std::string_view value;  // in the arena
    bool deleted;
  };
  using Runs = std::array<std::vector<RunEntry>, static_cast<int>(Cf::kCount)>;
  void Collect(Cf cf, std::string_view key, std::string_view value,
               bool deleted);

  // A chunk handed to StartIngest: its writes, and what its ingestion
  // changes in the ImportedGroups (applied by FinishIngest).
  struct Frozen {
    std::string dir;
    ImportIndex index;
    Runs runs;
    KeyArena::Blocks arena;
    std::vector<uint64_t> filter_adds;
    std::vector<ImportedGroups::ChangeAt> summary_changes;
    // The attributes of CountDistinctOf when the chunk began, and what the
    // chunk changed in their distinct values (set by the worker).
    absl::flat_hash_set<EntityId> distinct_attributes;
    absl::flat_hash_map<EntityId, int64_t> distinct_deltas;
    absl::Status status;
    // The families the chunk has files for (set by the worker).
    std::array<bool, static_cast<int>(Cf::kCount)> has_files{};
    std::thread worker;
  };
  // Sorts and writes the chunk's keys of `cf` as SST files; adds what
  // ingests them to `args`. Threads may write different families at once.
  [[nodiscard]] absl::Status WriteCfFiles(
      Frozen* chunk, Cf cf, std::vector<rocksdb::IngestExternalFileArg>* args);
  // The background thread's work: every family's files, then ingestion.
  [[nodiscard]] absl::Status WriteAndIngest(Frozen* chunk, int threads);

  // An iterator over the DB for a scan of `prefix`: the order's shared
  // one, or (short prefixes) a total-order one in *local.
  rocksdb::Iterator* DbIterator(IndexOrder order, std::string_view prefix,
                                std::unique_ptr<rocksdb::Iterator>* local);
  // The first keys of a DB range by order and prefix (cleared at each
  // ingestion): most scans want one key or only a few.
  struct CachedRange {
    bool more = false;  // the range holds more keys than these
    std::vector<std::pair<std::string, EntityId>> keys;
  };
  // The first keys of the DB under `prefix` (cached until the next
  // ingestion), or null if the cache is full: then scan the DB.
  [[nodiscard]] absl::StatusOr<const CachedRange*> CachedDbRange(
      IndexOrder order, std::string_view prefix);

  const StoreCore* core_;
  // This chunk: the readable orders' writes, then the others' per family
  // in write order; their keys and values live in arena_.
  ImportIndex index_;
  Runs runs_;
  KeyArena arena_;
  // Per open save point, where index_ and runs_ stood when it was set.
  struct Marks {
    ImportIndex::Marks index;
    std::array<size_t, static_cast<int>(Cf::kCount)> runs;
  };
  std::vector<Marks> save_points_;
  ImportedGroups groups_;
  std::unique_ptr<Frozen> frozen_;
  // The storage of the last chunk ingested, cleared, for the next one
  // (StartIngest): an import's chunks are about equally large, and reused
  // storage spares the page faults and the step-by-step growth of new
  // vectors and maps. Peak memory stays two chunks.
  ImportIndex spare_index_;
  Runs spare_runs_;
  // The families ingested chunks had files for.
  std::array<bool, static_cast<int>(Cf::kCount)> ingested_{};
  absl::flat_hash_set<EntityId> distinct_attributes_;
  absl::flat_hash_map<EntityId, int64_t> distinct_deltas_;
  // Node-based: a scan keeps a pointer to its range while fn may scan.
  absl::node_hash_map<std::string, CachedRange> db_cache_;
  // Iterators over the DB, shared by the scans of a chunk (the DB changes
  // only when a chunk is ingested).
  std::array<std::unique_ptr<rocksdb::Iterator>, 4> db_iterators_;
};

}  // namespace mentat::storage::internal

#endif  // MENTAT_STORAGE_INTERNAL_IMPORT_BATCH_H_
