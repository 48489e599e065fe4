#ifndef MENTAT_STORAGE_INTERNAL_COMMIT_BATCH_H_
#define MENTAT_STORAGE_INTERNAL_COMMIT_BATCH_H_

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/container/btree_set.h"
#include "absl/status/statusor.h"
#include "internal/key_arena.h"
#include "internal/store_core.h"
#include "internal/tx_batch.h"
#include "mentat/storage/datom.h"
#include "mentat/storage/keys.h"
#include "rocksdb/db.h"
#include "rocksdb/write_batch.h"

namespace mentat::storage::internal {

// The writes of one commit group, and reads of the current state as the
// transactor sees it while it builds the group: the committed DB plus the
// group's writes so far. Everything goes into one plain WriteBatch, which
// the transactor writes with one Write (batch()).
//
// This is what RocksDB's WriteBatchWithIndex offers; we keep our own index
// because WBWI's costs ~19K instructions per indexed Put here (two skiplist
// searches with a comparator that decodes batch records; callgrind,
// storage-bench load xs), a third of the whole load. The index is a btree
// of the EAVT, AVET and VAET keys the group wrote (the only orders read
// back), merged on read with iterators over the DB.
//
// Transactor thread only. `core` must outlive the batch.
class CommitBatch final : public TxBatch {
 public:
  explicit CommitBatch(const StoreCore* core) : core_(core) {}

  void PutCurrent(IndexOrder order, std::string_view key, EntityId tx) override;
  void DeleteCurrent(IndexOrder order, std::string_view key) override;
  void PutRaw(Cf cf, std::string_view key, std::string_view value) override;
  void DeleteRaw(Cf cf, std::string_view key) override;
  // Set by the transactor for a group that holds one excision alone.
  const StoreCore* ExcisionStore() const override {
    return alone_ ? core_ : nullptr;
  }
  void SetAlone(bool alone) { alone_ = alone; }
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

  // The group's writes, for the commit's Write (and the meta keys and
  // statistics the transactor adds to it).
  rocksdb::WriteBatch* batch() { return &batch_; }

  // The orders (bit 1 << order) whose scans stepped over more than
  // kClogSkips internal keys at one step: tombstones and the Puts they
  // delete, still side by side in the memtable (an entity whose value
  // changed thousands of times since the last flush). Each scan there
  // costs time in proportion; a flush, where each SingleDelete cancels
  // its Put, ends it (Transactor::FlushClogged).
  uint32_t clogged() const { return clogged_; }
  static constexpr uint64_t kClogSkips = 256;
  // A clogged prefix's committed rows are kept for the group's later scans
  // when there are at most this many.
  static constexpr size_t kClogRowsMax = 1024;

 private:
  // What a write in a save point replaced in the index, to undo it.
  struct Undo {
    uint8_t order;
    std::string_view key;  // in arena_
    bool existed;
    EntityId previous;
  };
  // The tx that asserted `key` if `record` (of the key's entity) holds it
  // as current.
  static std::optional<EntityId> CurrentIn(const IndexRecord& record,
                                           std::string_view key);
  // Records in the index that `key` of `order` now holds `tx`.
  void Record(IndexOrder order, std::string_view key, EntityId tx);
  // The group's iterator over the committed DB for `order`: `bounded`
  // ones give up (Incomplete) after kClogSkips internal keys at one step.
  rocksdb::Iterator* DbIterator(IndexOrder order, bool bounded);
  // The committed rows (key, tx) under `prefix` when an earlier scan of
  // the group found it clogged, read at the first call and kept for the
  // group (the committed DB does not change until the group's write);
  // nullptr for any other prefix.
  using Rows = std::vector<std::pair<std::string, EntityId>>;
  [[nodiscard]] absl::StatusOr<const Rows*> ClogRows(IndexOrder order,
                                                     std::string_view prefix);

  const StoreCore* core_;
  bool alone_ = false;
  rocksdb::WriteBatch batch_;
  // The index's keys; they live as long as the batch.
  KeyArena arena_;
  // Per readable order, the group's latest write of each key (kDeleted: a
  // delete).
  std::array<absl::btree_map<std::string_view, EntityId>, 4> overlay_;
  std::vector<Undo> undo_;
  // Per open save point, the size of undo_ when it was set.
  std::vector<size_t> save_points_;
  // Iterators over the committed DB; valid for the whole group, since only
  // the transactor writes and it writes the group at the end.
  std::array<std::unique_ptr<rocksdb::Iterator>, 4> db_iterators_;
  // The same without the bound, for scans that met a clogged range.
  std::array<std::unique_ptr<rocksdb::Iterator>, 4> unbounded_iterators_;
  uint32_t clogged_ = 0;
  // (std::less<> looks std::string_view up; abseil's hash sets here take
  // only absl::string_view.)
  std::array<absl::btree_set<std::string, std::less<>>, 4> clogged_prefixes_;
  std::array<absl::btree_map<std::string, Rows, std::less<>>, 4> clog_rows_;
};

}  // namespace mentat::storage::internal

#endif  // MENTAT_STORAGE_INTERNAL_COMMIT_BATCH_H_
