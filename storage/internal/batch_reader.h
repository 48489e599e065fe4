#ifndef MENTAT_STORAGE_INTERNAL_BATCH_READER_H_
#define MENTAT_STORAGE_INTERNAL_BATCH_READER_H_

#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>

#include "absl/status/statusor.h"
#include "internal/store_core.h"
#include "mentat/storage/datom.h"
#include "mentat/storage/keys.h"
#include "rocksdb/utilities/write_batch_with_index.h"

namespace mentat::storage::internal {

// Reads the current-state families as the transactor sees them while it
// builds a group: the committed DB plus the group's batch so far (which
// holds the earlier transactions of the group). Transactor thread only.
//
// AEVT, the history families, `log` and `meta` are written to the batch
// without its index, so only EAVT, AVET and VAET may be read here.
//
// Iterators are created lazily and reused across seeks; call Reset()
// before the batch is modified, since they do not follow changes to it.
class BatchReader {
 public:
  BatchReader(const StoreCore* core, rocksdb::WriteBatchWithIndex* batch);
  ~BatchReader();

  // The tx stored under `key` in the current family of `order`, if any.
  absl::StatusOr<std::optional<EntityId>> Get(IndexOrder order,
                                              std::string_view key);

  // Calls fn(datom) for each current datom whose `order` key starts with
  // `prefix`, until fn returns false. The datom's tx is set, added = true.
  absl::Status Scan(IndexOrder order, std::string_view prefix,
                    const std::function<bool(const Datom&)>& fn);

  // Drops cached iterators (call before writing to the batch).
  void Reset();

 private:
  const StoreCore* core_;
  rocksdb::WriteBatchWithIndex* batch_;
  std::array<std::unique_ptr<rocksdb::Iterator>, 4> iterators_;
};

}  // namespace mentat::storage::internal

#endif  // MENTAT_STORAGE_INTERNAL_BATCH_READER_H_
