#ifndef MENTAT_STORAGE_INTERNAL_SPECULATIVE_LAYER_H_
#define MENTAT_STORAGE_INTERNAL_SPECULATIVE_LAYER_H_

// Speculative transactions (Db::With): what one transaction applied
// without a commit changes in the current indexes, the TxBatch that
// builds it, and the cursors that read a Db through it.

#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/container/btree_map.h"
#include "absl/container/btree_set.h"
#include "absl/status/statusor.h"
#include "internal/tx_batch.h"
#include "mentat/storage/datom_cursor.h"
#include "mentat/storage/db.h"

namespace mentat::storage::internal {

// What a speculative transaction did to one key of the current indexes.
enum class LayerOp : uint8_t {
  kAsserted,
  kRetracted,
  // Retracted, of a :db/noHistory attribute: history keeps nothing of it.
  kRetractedNoHistory,
};

// The changes of one speculative transaction to the current indexes of
// the Db it applied on (its parent): per index order, the keys it asserted
// and retracted, all at tx `tx`; and the fulltext postings it would have
// written. Immutable once built; shared by the Db.
struct SpeculativeLayer {
  using Keys = absl::btree_map<std::string, LayerOp, std::less<>>;
  EntityId tx = 0;
  std::array<Keys, 4> keys;
  absl::btree_set<std::string, std::less<>> postings;
};

// A TxBatch for one speculative transaction: reads the current state of
// `parent` (a view at BasisKind::kCurrent, of a committed or a
// speculative Db) merged with the transaction's own writes, and keeps the
// writes in a SpeculativeLayer instead of writing anything. History, log
// and meta writes are dropped (a speculative Db reads history through its
// parent plus the layer; a history write only tells that a retraction's
// history is kept). Any thread; one thread at a time.
class SpeculativeBatch final : public TxBatch {
 public:
  explicit SpeculativeBatch(DbView parent);

  void PutCurrent(IndexOrder order, std::string_view key, EntityId tx) override;
  void DeleteCurrent(IndexOrder order, std::string_view key) override;
  void PutRaw(Cf cf, std::string_view key, std::string_view value) override;
  [[nodiscard]] absl::StatusOr<std::optional<EntityId>> Get(
      IndexOrder order, std::string_view key) override;
  [[nodiscard]] absl::Status Scan(
      IndexOrder order, std::string_view prefix,
      const std::function<bool(const Datom&)>& fn) override;

  // The layer built so far, stamped with `tx`; the batch is spent.
  std::shared_ptr<const SpeculativeLayer> TakeLayer(EntityId tx);

 private:
  DbView parent_;
  std::shared_ptr<SpeculativeLayer> layer_;
};

// How a layer cursor shows the layer over its base cursor.
enum class LayerMode : uint8_t {
  // The layer's assertions show, its retractions hide the base's datom
  // (kCurrent; kSince shows only assertions whose tx is after `since_t`).
  kCurrent,
  kSince,
  // Every base datom, then per key the layer's assertion or retraction
  // (its tx is later than all of the base's); a retraction of a
  // :db/noHistory attribute hides the key's base datoms instead, as its
  // commit would leave no history of them.
  kHistory,
};

// A cursor over `base` (a cursor of the layer's parent at the same basis)
// with `layer` merged in, in `order`. `layer` must outlive the cursor.
std::unique_ptr<DatomCursor> NewLayerCursor(std::unique_ptr<DatomCursor> base,
                                            const SpeculativeLayer& layer,
                                            IndexOrder order, LayerMode mode,
                                            EntityId since_t);

}  // namespace mentat::storage::internal

#endif  // MENTAT_STORAGE_INTERNAL_SPECULATIVE_LAYER_H_
