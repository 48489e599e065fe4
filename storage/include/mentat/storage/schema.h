#ifndef MENTAT_STORAGE_SCHEMA_H_
#define MENTAT_STORAGE_SCHEMA_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "mentat/storage/attribute_predicate.h"
#include "mentat/storage/datom.h"
#include "mentat/storage/value.h"

namespace mentat::storage {

enum class Cardinality : uint8_t { kOne, kMany };
enum class Unique : uint8_t { kNone, kValue, kIdentity };

// Which of :db/tupleType, :db/tupleTypes, :db/tupleAttrs an attribute has
// (Attribute::tuple_spec, a bit set).
inline constexpr uint8_t kTupleSpecType = 1;
inline constexpr uint8_t kTupleSpecTypes = 2;
inline constexpr uint8_t kTupleSpecAttrs = 4;

// One installed attribute.
struct Attribute {
  EntityId id = 0;
  std::string ident;  // "ns/name"
  ValueType type = ValueType::kString;
  Cardinality cardinality = Cardinality::kOne;
  Unique unique = Unique::kNone;
  bool index = false;
  bool is_component = false;
  bool no_history = false;
  bool fulltext = false;
  // The ident is in the system namespace (IsSystemIdent): only ops marked
  // TxOp::system may write the attribute or change its schema.
  bool system = false;
  std::string doc;
  // :db.type/tuple: the element types, one per position (:db/tupleTypes)
  // or, with tuple_homogeneous, one for every position (:db/tupleType);
  // for a composite tuple (:db/tupleAttrs) the member attributes in
  // order, their idents, and their types as tuple_types. tuple_error says
  // why a definition is unusable (an unknown type ident, a member that is
  // no attribute); CheckTupleSpec refuses it when it is installed.
  uint8_t tuple_spec = 0;
  std::vector<ValueType> tuple_types;
  bool tuple_homogeneous = false;
  std::vector<EntityId> tuple_attrs;
  std::vector<std::string> tuple_attr_idents;
  std::string tuple_error;
  // The composite tuple attributes this attribute is a member of: the
  // transactor recomputes them on every change of this attribute.
  std::vector<EntityId> composites;
  // :db.attr/preds: every value asserted must pass each, in the order of
  // the symbols as written (pred_names, for messages). preds_error says
  // why one is unusable (an unknown name, a predicate that does not take
  // the attribute's type); CheckAttributePredicates refuses it when it is
  // installed.
  std::vector<AttributePredicate> preds;
  std::vector<std::string> pred_names;
  std::string preds_error;

  bool many() const { return cardinality == Cardinality::kMany; }
  bool is_ref() const { return type == ValueType::kRef; }
  bool is_composite() const { return (tuple_spec & kTupleSpecAttrs) != 0; }
};

// True for an ident ("ns/name", no colon) in the system namespace, `mentat`
// or `mentat.*` (":mentat.tx/request-id"). Like Datomic's `db.*`, the
// namespace belongs to the program that embeds the store (mentatd keeps its
// request-id ledger there): tx-data may read such attributes, but only ops
// the program itself marks TxOp::system may define, change or write them.
bool IsSystemIdent(std::string_view ident);

// True for the entities :db/valueType may name (:db.type/long, ...).
bool IsValueTypeEntity(EntityId e);

// Tuple attributes (tuple_value.cc). CheckTupleSpec: InvalidArgument for
// an attribute whose tuple definition cannot be used (none or two of the
// three, 1 or 9 types, an unknown type, a tuple spec on a non-tuple; a
// composite of cardinality many, or whose members are not 2 to 8
// distinct cardinality-one attributes that are not tuples).
[[nodiscard]] absl::Status CheckTupleSpec(const Attribute& attr);
// ":db/tupleTypes [:db.type/string :db.type/long]", for messages.
std::string TupleSpecText(const Attribute& attr);
// `tuple` (built from tx-data with the elements' own types) as a value of
// `attr`: arity and each element's type checked, longs coerced as for
// scalars (a long for a double element is stored as a double). A
// composite's elements take its members' types. InvalidArgument names
// the attribute, the position and the type it takes.
[[nodiscard]] absl::StatusOr<Value> CheckTupleValue(const Attribute& attr,
                                                    const Value& tuple);

// InvalidArgument for an attribute whose :db.attr/preds cannot be used
// (preds_error): the message names the symbol and the predicates allowed.
[[nodiscard]] absl::Status CheckAttributePredicates(const Attribute& attr);

// An immutable snapshot of the schema: every ident and every attribute, as
// of one basis. Readers share it through shared_ptr<const Schema>; the
// transactor builds a new one when a transaction changes schema.
class Schema {
 public:
  // The bootstrap schema of a new store (see entity_ids.h).
  static std::shared_ptr<const Schema> Bootstrap();

  // The bootstrap datoms that create the bootstrap schema, for a new store.
  static std::vector<Datom> BootstrapDatoms(EntityId tx);

  // Builds a schema from the datoms of every entity that has :db/ident
  // (current state). Fails on inconsistent attribute definitions. Bootstrap
  // idents the datoms lack (a store made before they were added) are known
  // all the same, without datoms.
  [[nodiscard]] static absl::StatusOr<std::shared_ptr<const Schema>> FromDatoms(
      const std::vector<Datom>& datoms);

  // nullptr if unknown.
  const Attribute* FindAttribute(EntityId id) const;
  const Attribute* FindAttribute(std::string_view ident) const;
  // The entity named by an ident, or nullopt.
  std::optional<EntityId> EntityForIdent(std::string_view ident) const;
  // The ident of an entity, or nullptr.
  const std::string* IdentForEntity(EntityId e) const;

  const absl::flat_hash_map<EntityId, Attribute>& attributes() const {
    return attributes_;
  }
  const absl::flat_hash_map<std::string, EntityId>& idents() const {
    return ident_to_entity_;
  }

 private:
  absl::flat_hash_map<EntityId, Attribute> attributes_;
  absl::flat_hash_map<std::string, EntityId> ident_to_entity_;
  absl::flat_hash_map<EntityId, std::string> entity_to_ident_;
};

}  // namespace mentat::storage

#endif  // MENTAT_STORAGE_SCHEMA_H_
