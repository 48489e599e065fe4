#ifndef MENTAT_STORAGE_INTERNAL_GROUP_BATCH_H_
#define MENTAT_STORAGE_INTERNAL_GROUP_BATCH_H_

#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/status/statusor.h"
#include "internal/store_core.h"
#include "mentat/storage/datom.h"
#include "mentat/storage/keys.h"
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
class GroupBatch {
 public:
  // With `collect_runs`, writes are not put in a WriteBatch but collected
  // per column family, for bulk import through SST files (WriteRunsToSst).
  explicit GroupBatch(const StoreCore* core, bool collect_runs = false);
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

  // Collect-runs mode: writes everything collected as one sorted SST file
  // per column family under `dir`, ingests them, and starts empty again
  // (reads then go to the DB, which now holds the data).
  absl::Status IngestRuns(const std::string& dir);

 private:
  static constexpr EntityId kDeleted = -1;
  static bool Readable(IndexOrder order) { return order != IndexOrder::kAevt; }

  struct Undo {
    uint8_t order;
    std::string_view key;  // in arena_
    bool existed;
    EntityId previous;
  };
  // Copies `bytes` into the arena; the view lives until Clear().
  std::string_view Intern(std::string_view bytes);
  // Drops the overlay, the runs and the arena.
  void Clear();
  void Record(IndexOrder order, std::string_view key, EntityId tx);

  struct RunEntry {
    std::string_view key;    // in arena_
    std::string_view value;  // in arena_
    bool deleted;
  };
  void Collect(Cf cf, std::string_view key, std::string_view value,
               bool deleted);

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
  std::vector<Undo> undo_;
  std::vector<size_t> save_points_;
  // Iterators over the committed DB; valid for the whole group, since only
  // the transactor writes and it writes the group at the end.
  std::array<std::unique_ptr<rocksdb::Iterator>, 4> db_iterators_;
};

}  // namespace mentat::storage::internal

#endif  // MENTAT_STORAGE_INTERNAL_GROUP_BATCH_H_
