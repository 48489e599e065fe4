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
  explicit GroupBatch(const StoreCore* core);
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

 private:
  static constexpr EntityId kDeleted = -1;
  static bool Readable(IndexOrder order) { return order != IndexOrder::kAevt; }

  struct Undo {
    uint8_t order;
    std::string key;
    bool existed;
    EntityId previous;
  };
  void Record(IndexOrder order, std::string_view key, EntityId tx);

  const StoreCore* core_;
  rocksdb::WriteBatch batch_;
  std::array<absl::btree_map<std::string, EntityId, std::less<>>, 4> overlay_;
  std::vector<Undo> undo_;
  std::vector<size_t> save_points_;
  // Iterators over the committed DB; valid for the whole group, since only
  // the transactor writes and it writes the group at the end.
  std::array<std::unique_ptr<rocksdb::Iterator>, 4> db_iterators_;
};

}  // namespace mentat::storage::internal

#endif  // MENTAT_STORAGE_INTERNAL_GROUP_BATCH_H_
