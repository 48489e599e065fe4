#ifndef MENTAT_STORAGE_INTERNAL_TX_STATE_H_
#define MENTAT_STORAGE_INTERNAL_TX_STATE_H_

#include <array>
#include <cstdint>
#include <memory>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "mentat/storage/entity_ids.h"
#include "mentat/storage/schema.h"
#include "mentat/storage/statistics.h"
#include "rocksdb/db.h"
#include "rocksdb/write_batch_base.h"

namespace mentat::storage::internal {

// The small state a transaction advances: partition counters, the last tx
// instant, the basis and the schema. Cheap to copy, so the transactor
// copies it before each transaction and keeps the copy only on success.
struct TxState {
  // Next counter per partition index (0 = db, 3 = tx, 4 = user).
  std::array<int64_t, 5> next_counter{};
  int64_t last_tx_instant = 0;
  EntityId basis_tx = 0;
  // The term of the primary whose log this store holds (docs/replication.md,
  // phase 2; 0 until elections come). Written in every log entry's header.
  int64_t term = 0;
  std::shared_ptr<const Schema> schema;
  // No current :db/txInstant datom holds a later instant than this (an
  // upper bound; kUnknownCeiling when unknown). A transaction's own instant
  // is past it unless the clock stood still or someone asserted a later
  // one, and then the statistics know it is a new distinct value without
  // the AVET scan that costs about a fifth of a small transaction
  // (TxApplier::ComputeStats). Read with ReadTxInstantCeiling, raised by
  // every assertion of the attribute.
  int64_t tx_instant_ceiling = kUnknownCeiling;
  static constexpr int64_t kUnknownCeiling = INT64_MAX;

  EntityId Allocate(Partition p) {
    return MakeEntityId(p, next_counter[static_cast<int>(p)]++);
  }
  // True if `e` names an id its partition has handed out.
  bool IsAllocated(EntityId e) const {
    int p = PartitionIndex(e);
    if (p != 0 && p != 3 && p != 4) return false;
    return (e & kCounterMask) < next_counter[p];
  }
};

// The changes one transaction makes to the statistics, kept apart until
// the transaction succeeds.
struct StatsDelta {
  struct PerAttribute {
    int64_t datoms = 0;
    // Only for attributes whose values are not tracked: the change in the
    // number of distinct values, computed by the transactor from AVET.
    int64_t distinct = 0;
    absl::flat_hash_map<Value, int64_t, ValueHash> values;  // tracked only
  };
  absl::flat_hash_map<EntityId, PerAttribute> by_attribute;
};

// What a group's statistics need written to `meta` at commit.
struct StatsDirty {
  absl::flat_hash_set<EntityId> attributes;
  absl::flat_hash_map<EntityId, absl::flat_hash_set<Value, ValueHash>> values;
  // Value-count keys to delete (attributes that stopped tracking).
  std::vector<std::pair<EntityId, Value>> dropped;
};

// Applies `delta` to `stats`, recording what changed in `dirty`. An
// attribute whose tracked values pass `low_cardinality_limit` stops
// tracking (its value keys are dropped).
void ApplyStatsDelta(const StatsDelta& delta, int low_cardinality_limit,
                     Statistics* stats, StatsDirty* dirty);

// Writes the statistics that `dirty` names into `batch` (the `meta` family).
void WriteStatsMeta(const Statistics& stats, const StatsDirty& dirty,
                    rocksdb::ColumnFamilyHandle* meta,
                    rocksdb::WriteBatchBase* batch);

// The latest instant any current :db/txInstant datom holds in `db` (one
// reverse seek of AVET), INT64_MIN when none does, or
// TxState::kUnknownCeiling when the read fails (the statistics then scan).
int64_t ReadTxInstantCeiling(rocksdb::DB* db,
                             rocksdb::ColumnFamilyHandle* avet);

// Reads the statistics back from `meta` when a store opens.
[[nodiscard]] absl::Status LoadStatsMeta(rocksdb::DB* db,
                                         rocksdb::ColumnFamilyHandle* meta,
                                         Statistics* stats);

}  // namespace mentat::storage::internal

#endif  // MENTAT_STORAGE_INTERNAL_TX_STATE_H_
