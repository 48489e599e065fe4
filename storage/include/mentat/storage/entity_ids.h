#ifndef MENTAT_STORAGE_ENTITY_IDS_H_
#define MENTAT_STORAGE_ENTITY_IDS_H_

#include <cstdint>

#include "mentat/storage/value.h"

namespace mentat::storage {

// Entity ids are Datomic-shaped: partition index << 42 | counter.
inline constexpr int kPartitionShift = 42;
inline constexpr EntityId kCounterMask = (EntityId{1} << kPartitionShift) - 1;

enum class Partition : uint8_t { kDb = 0, kTx = 3, kUser = 4 };
inline constexpr int kPartitionCount = 3;

inline constexpr EntityId MakeEntityId(Partition p, int64_t counter) {
  return (static_cast<EntityId>(p) << kPartitionShift) | counter;
}
inline constexpr int PartitionIndex(EntityId e) {
  return static_cast<int>(e >> kPartitionShift);
}
inline constexpr bool IsTxId(EntityId e) {
  return PartitionIndex(e) == static_cast<int>(Partition::kTx);
}

// The bootstrap entities every store has. The ids follow Datomic's.
namespace ids {
inline constexpr EntityId kDbPartDb = 0;
inline constexpr EntityId kDbPartTx = 3;
inline constexpr EntityId kDbPartUser = 4;
inline constexpr EntityId kDbIdent = 10;
inline constexpr EntityId kDbTypeRef = 20;
inline constexpr EntityId kDbTypeKeyword = 21;
inline constexpr EntityId kDbTypeLong = 22;
inline constexpr EntityId kDbTypeString = 23;
inline constexpr EntityId kDbTypeBoolean = 24;
inline constexpr EntityId kDbTypeInstant = 25;
inline constexpr EntityId kDbTypeDouble = 26;
inline constexpr EntityId kDbTypeUuid = 27;
inline constexpr EntityId kDbTypeBigInt = 28;
inline constexpr EntityId kDbTypeBigDec = 29;
inline constexpr EntityId kDbTypeBytes = 30;
// Added after the first stores were made: a store bootstrapped before has
// no datoms for them, and Schema::FromDatoms supplies them (schema.h).
inline constexpr EntityId kDbTypeUri = 31;
inline constexpr EntityId kDbTypeSymbol = 32;
inline constexpr EntityId kDbTypeTuple = 33;
inline constexpr EntityId kDbCardinalityOne = 35;
inline constexpr EntityId kDbCardinalityMany = 36;
inline constexpr EntityId kDbUniqueValue = 37;
inline constexpr EntityId kDbUniqueIdentity = 38;
inline constexpr EntityId kDbValueType = 40;
inline constexpr EntityId kDbCardinality = 41;
inline constexpr EntityId kDbUnique = 42;
inline constexpr EntityId kDbIsComponent = 43;
inline constexpr EntityId kDbIndex = 44;
inline constexpr EntityId kDbNoHistory = 45;
inline constexpr EntityId kDbTxInstant = 50;
inline constexpr EntityId kDbFulltext = 51;
inline constexpr EntityId kDbDoc = 62;
// :db.type/tuple's element types and composite members (also added later).
inline constexpr EntityId kDbTupleType = 63;
inline constexpr EntityId kDbTupleTypes = 64;
inline constexpr EntityId kDbTupleAttrs = 65;
// Entity specs and attribute predicates (also added later): :db/ensure is
// asserted in tx-data but never stored (the transactor checks the spec it
// names and drops the assertion); :db.attr/preds holds the predicate
// symbols of an attribute, :db.entity/attrs a spec's required attributes;
// :db.entity/preds is refused (see docs/query.md, "Entity specs").
inline constexpr EntityId kDbEnsure = 70;
inline constexpr EntityId kDbAttrPreds = 71;
inline constexpr EntityId kDbEntityAttrs = 72;
inline constexpr EntityId kDbEntityPreds = 73;
// The first id the db partition hands out to user-installed schema.
inline constexpr int64_t kFirstUserDbCounter = 1000;
}  // namespace ids

// True for the bootstrap attributes whose datoms define schema (a change
// to one means the schema must be rebuilt and checked).
inline constexpr bool IsSchemaAttribute(EntityId a) {
  return a == ids::kDbIdent || a == ids::kDbValueType ||
         a == ids::kDbCardinality || a == ids::kDbUnique ||
         a == ids::kDbIsComponent || a == ids::kDbNoHistory ||
         a == ids::kDbIndex || a == ids::kDbFulltext ||
         a == ids::kDbTupleType || a == ids::kDbTupleTypes ||
         a == ids::kDbTupleAttrs || a == ids::kDbAttrPreds;
}

// The first tx id of a new store (tx counter 1000, as in Datomic).
inline constexpr EntityId kFirstTxId = MakeEntityId(Partition::kTx, 1000);

}  // namespace mentat::storage

#endif  // MENTAT_STORAGE_ENTITY_IDS_H_
