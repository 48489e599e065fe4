#ifndef MENTAT_STORAGE_INTERNAL_TX_BATCH_H_
#define MENTAT_STORAGE_INTERNAL_TX_BATCH_H_

#include <functional>
#include <optional>
#include <string_view>

#include "absl/status/statusor.h"
#include "internal/store_core.h"
#include "mentat/storage/datom.h"
#include "mentat/storage/keys.h"

namespace mentat::storage::internal {

// What TxApplier applies a transaction on: the writes of the transactions
// applied so far, and reads of the current state as they leave it (the
// DB plus those writes: read-your-writes across transactions). Two kinds:
// CommitBatch (a commit group, written with one WriteBatch) and
// ImportBatch (a bulk import's chunk, written as SST files). The applier
// does not know which it has; the transactor, which makes the batch,
// takes its save points and writes it, does.
//
// Transactor thread only. The batch is not owned by the applier.
class TxBatch {
 public:
  virtual ~TxBatch() = default;

  // Writes a current-state key of `order` (tx is its value).
  virtual void PutCurrent(IndexOrder order, std::string_view key,
                          EntityId tx) = 0;
  // Removes a current-state key of `order` that a Put wrote once.
  virtual void DeleteCurrent(IndexOrder order, std::string_view key) = 0;
  // Writes to a family that is never read back while applying (history,
  // log, meta).
  virtual void PutRaw(Cf cf, std::string_view key, std::string_view value) = 0;

  // Removes a key of a family never read back while applying (history,
  // log, fulltext postings): an excision's writes, so only batches whose
  // ExcisionStore is not null implement it.
  virtual void DeleteRaw(Cf /*cf*/, std::string_view /*key*/) {}
  // The store an excision reads its history, log and postings from
  // directly, which only a commit group holding the excision alone can
  // offer (its pending writes are the excision's own, none of them in
  // those families yet); null for any other batch (a speculative value, a
  // bulk import), where an excision is refused.
  virtual const StoreCore* ExcisionStore() const { return nullptr; }

  // The tx stored under `key` in the current family of `order` (EAVT, AVET
  // or VAET), if any. Errors: Unavailable (RocksDB failed), DataLoss (a
  // malformed value).
  [[nodiscard]] virtual absl::StatusOr<std::optional<EntityId>> Get(
      IndexOrder order, std::string_view key) = 0;

  // Calls fn(datom) for each current datom whose `order` key (EAVT, AVET
  // or VAET) starts with `prefix`, in key order, until fn returns false.
  // The datom's tx is set, added = true. fn may read this batch but not
  // write to it. Errors as Get's.
  [[nodiscard]] virtual absl::Status Scan(
      IndexOrder order, std::string_view prefix,
      const std::function<bool(const Datom&)>& fn) = 0;

 protected:
  // The tx of a deleted key in the batches' own indexes.
  static constexpr EntityId kDeleted = -1;
  // The orders read back while applying (AEVT is only written).
  static bool Readable(IndexOrder order) { return order != IndexOrder::kAevt; }
};

}  // namespace mentat::storage::internal

#endif  // MENTAT_STORAGE_INTERNAL_TX_BATCH_H_
