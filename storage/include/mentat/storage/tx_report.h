#ifndef MENTAT_STORAGE_TX_REPORT_H_
#define MENTAT_STORAGE_TX_REPORT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "mentat/storage/datom.h"

namespace mentat::storage {

// What a committed transaction did. Returned to the caller once the
// transaction is durable.
struct TxReport {
  EntityId tx = 0;            // the transaction's entity id
  int64_t tx_instant = 0;     // :db/txInstant, microseconds since epoch
  EntityId basis_before = 0;  // the tx the transaction applied on
  // Every tempid the caller wrote, resolved ("datomic.tx" included when
  // used).
  absl::flat_hash_map<std::string, EntityId> tempids;
  // The datoms written (assertions and retractions, tx datom included), in
  // the order they were produced; redundant ones are elided.
  std::vector<Datom> datoms;
  // For an excision (:db/excise): how many datoms it removed from history
  // (a retracted datom counts once, its assertion and retraction both
  // gone).
  size_t excised_datoms = 0;
};

}  // namespace mentat::storage

#endif  // MENTAT_STORAGE_TX_REPORT_H_
