#ifndef MENTAT_STORAGE_TX_OP_H_
#define MENTAT_STORAGE_TX_OP_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "mentat/storage/value.h"

namespace mentat::storage {

// Where a form came from in the caller's tx-data text (1-based), so errors
// can name it. line == 0 means "no position" (ops built in code).
struct SourcePos {
  uint32_t line = 0;
  uint32_t column = 0;
};

// An entity position in tx-data before resolution: what the caller wrote
// for `e` (or for a ref value, or the attribute).
struct EntityRef {
  enum class Kind : uint8_t {
    kId,         // a numeric entity id
    kIdent,      // a keyword naming an entity through :db/ident
    kTempId,     // a string tempid ("t1"); unifies within a transaction
    kLookupRef,  // [:unique/attr value]
    kTxTempId,   // "datomic.tx": the transaction entity itself
  };
  Kind kind = Kind::kId;
  EntityId id = 0;          // kId
  std::string name;         // kIdent: "ns/name"; kTempId: the tempid
  std::string lookup_attr;  // kLookupRef: the attribute ident "ns/name"
                            // (or, if lookup_attr_id != 0, unused)
  EntityId lookup_attr_id = 0;
  std::shared_ptr<const Value> lookup_value;  // kLookupRef
  // True for a tempid the parser generated for a nested map; Datomic only
  // allows those under component attributes or with a unique attribute.
  bool nested = false;

  static EntityRef Id(EntityId id);
  static EntityRef Ident(std::string ident);
  static EntityRef TempId(std::string tempid);
  static EntityRef LookupRef(std::string attr, Value value);
  static EntityRef TxTempId();
  std::string DebugString() const;
};

// A value position before the attribute's type is known. The transactor
// coerces it with the schema: for a ref attribute a long is an entity id, a
// keyword an ident, a string a tempid; for other types the scalar must
// match the attribute's type exactly (a long is accepted for a double and
// for bigint/bigdec attributes, a bigint for a bigdec attribute).
//
// A two-element vector with a keyword first, [k v], written as a value in
// a map form is ambiguous without the schema: a lookup ref, or two values
// of a cardinality-many attribute. The parser gives it as a lookup ref
// (kEntity) with `map_pair` set, and the transactor decides: a lookup ref
// where the attribute is a reference (except a cardinality-many reference
// whose k names no attribute: then k and v are two values, such as two
// enum idents), else the two values k and v.
struct TxValue {
  enum class Kind : uint8_t { kScalar, kEntity };
  Kind kind = Kind::kScalar;
  Value scalar;           // kScalar
  EntityRef entity;       // kEntity: a lookup ref or a nested map's tempid
  bool map_pair = false;  // kEntity lookup ref written [k v] in a map form
  // kScalar: a vector of scalars written as a map form's value, held as a
  // kTuple: the tuple itself for a :db.type/tuple attribute, one value per
  // element for any other (the map form's many-values shorthand).
  bool spread = false;

  static TxValue Scalar(Value v);
  static TxValue Entity(EntityRef e);
  std::string DebugString() const;
};

// One operation of a transaction, in the order the caller wrote it (map
// forms are expanded into kAdd ops by the tx-data parser).
struct TxOp {
  enum class Kind : uint8_t {
    kAdd,            // [:db/add e a v]
    kRetract,        // [:db/retract e a v]
    kRetractAttr,    // [:db/retract e a]     (every value of a on e)
    kRetractEntity,  // [:db/retractEntity e] (and components, recursively)
    kCas,            // [:db/cas e a old new] (old may be nil: absent)
  };
  Kind kind = Kind::kAdd;
  EntityRef e;
  EntityRef a;  // usually kIdent; kId allowed; reverse attrs are resolved
                // by the parser (":issue/_assignee" swaps e and v)
  TxValue v;    // kAdd, kRetract, kCas (new value)
  TxValue old;  // kCas; old_is_nil means "must have no value"
  bool old_is_nil = false;
  // The op comes from the program that runs the store, not from tx-data:
  // it may write system attributes (IsSystemIdent in schema.h). Parsers
  // never set it; mentatd sets it on the request id it adds to a
  // transaction and on the schema it installs.
  bool system = false;
  SourcePos pos;

  std::string DebugString() const;
};

// A whole transaction as the caller gave it.
struct TxRequest {
  std::vector<TxOp> ops;
};

}  // namespace mentat::storage

#endif  // MENTAT_STORAGE_TX_OP_H_
