#include "mentat/storage/schema.h"

#include <map>

#include "mentat/base/str_cat.h"
#include "mentat/storage/entity_ids.h"

namespace mentat::storage {
namespace {

struct BootstrapIdent {
  EntityId id;
  const char* ident;
};

constexpr BootstrapIdent kBootstrapIdents[] = {
    {ids::kDbPartDb, "db.part/db"},
    {ids::kDbPartTx, "db.part/tx"},
    {ids::kDbPartUser, "db.part/user"},
    {ids::kDbTypeRef, "db.type/ref"},
    {ids::kDbTypeKeyword, "db.type/keyword"},
    {ids::kDbTypeLong, "db.type/long"},
    {ids::kDbTypeString, "db.type/string"},
    {ids::kDbTypeBoolean, "db.type/boolean"},
    {ids::kDbTypeInstant, "db.type/instant"},
    {ids::kDbTypeDouble, "db.type/double"},
    {ids::kDbTypeUuid, "db.type/uuid"},
    {ids::kDbTypeBigInt, "db.type/bigint"},
    {ids::kDbTypeBigDec, "db.type/bigdec"},
    {ids::kDbTypeBytes, "db.type/bytes"},
    {ids::kDbTypeUri, "db.type/uri"},
    {ids::kDbTypeSymbol, "db.type/symbol"},
    {ids::kDbCardinalityOne, "db.cardinality/one"},
    {ids::kDbCardinalityMany, "db.cardinality/many"},
    {ids::kDbUniqueValue, "db.unique/value"},
    {ids::kDbUniqueIdentity, "db.unique/identity"},
};

struct BootstrapAttribute {
  EntityId id;
  const char* ident;
  EntityId type;
  bool unique_identity;
  bool index;
  const char* doc;
};

constexpr BootstrapAttribute kBootstrapAttributes[] = {
    {ids::kDbIdent, "db/ident", ids::kDbTypeKeyword, true, true,
     "The unique name of an entity."},
    {ids::kDbValueType, "db/valueType", ids::kDbTypeRef, false, false,
     "The type of an attribute's values."},
    {ids::kDbCardinality, "db/cardinality", ids::kDbTypeRef, false, false,
     "Whether an attribute holds one value or many per entity."},
    {ids::kDbUnique, "db/unique", ids::kDbTypeRef, false, false,
     "Uniqueness of an attribute's values: value or identity."},
    {ids::kDbIsComponent, "db/isComponent", ids::kDbTypeBoolean, false, false,
     "Ref values are owned by the entity (retracted and pulled with it)."},
    {ids::kDbIndex, "db/index", ids::kDbTypeBoolean, false, false,
     "Kept for Datomic compatibility: every attribute is in AVET."},
    {ids::kDbNoHistory, "db/noHistory", ids::kDbTypeBoolean, false, false,
     "Past values of the attribute are not kept."},
    {ids::kDbTxInstant, "db/txInstant", ids::kDbTypeInstant, false, true,
     "The wall-clock time of a transaction."},
    {ids::kDbFulltext, "db/fulltext", ids::kDbTypeBoolean, false, false,
     "Values are indexed for full-text search."},
    {ids::kDbDoc, "db/doc", ids::kDbTypeString, false, false,
     "Documentation of an entity."},
};

ValueType TypeForTypeEntity(EntityId e, bool* ok) {
  *ok = true;
  switch (e) {
    case ids::kDbTypeRef:
      return ValueType::kRef;
    case ids::kDbTypeKeyword:
      return ValueType::kKeyword;
    case ids::kDbTypeLong:
      return ValueType::kLong;
    case ids::kDbTypeString:
      return ValueType::kString;
    case ids::kDbTypeBoolean:
      return ValueType::kBoolean;
    case ids::kDbTypeInstant:
      return ValueType::kInstant;
    case ids::kDbTypeDouble:
      return ValueType::kDouble;
    case ids::kDbTypeUuid:
      return ValueType::kUuid;
    case ids::kDbTypeBigInt:
      return ValueType::kBigInt;
    case ids::kDbTypeBigDec:
      return ValueType::kBigDec;
    case ids::kDbTypeBytes:
      return ValueType::kBytes;
    case ids::kDbTypeUri:
      return ValueType::kUri;
    case ids::kDbTypeSymbol:
      return ValueType::kSymbol;
  }
  *ok = false;
  return ValueType::kLong;
}

}  // namespace

bool IsValueTypeEntity(EntityId e) {
  bool ok;
  TypeForTypeEntity(e, &ok);
  return ok;
}

bool IsSystemIdent(std::string_view ident) {
  constexpr std::string_view kSystem = "mentat";
  const size_t slash = ident.find('/');
  if (slash == std::string_view::npos) return false;
  const std::string_view ns = ident.substr(0, slash);
  return ns == kSystem ||
         (ns.size() > kSystem.size() &&
          ns.substr(0, kSystem.size()) == kSystem && ns[kSystem.size()] == '.');
}

std::shared_ptr<const Schema> Schema::Bootstrap() {
  static const std::shared_ptr<const Schema> bootstrap = [] {
    auto built = FromDatoms(BootstrapDatoms(0));
    return *built;  // The bootstrap table is ours: it always builds.
  }();
  return bootstrap;
}

std::vector<Datom> Schema::BootstrapDatoms(EntityId tx) {
  std::vector<Datom> datoms;
  auto add = [&](EntityId e, EntityId a, Value v) {
    datoms.push_back(Datom{e, a, std::move(v), tx, true});
  };
  for (const auto& b : kBootstrapIdents) {
    add(b.id, ids::kDbIdent, Value::Keyword(b.ident));
  }
  for (const auto& b : kBootstrapAttributes) {
    add(b.id, ids::kDbIdent, Value::Keyword(b.ident));
    add(b.id, ids::kDbValueType, Value::Ref(b.type));
    add(b.id, ids::kDbCardinality, Value::Ref(ids::kDbCardinalityOne));
    if (b.unique_identity) {
      add(b.id, ids::kDbUnique, Value::Ref(ids::kDbUniqueIdentity));
    }
    if (b.index) add(b.id, ids::kDbIndex, Value::Boolean(true));
    add(b.id, ids::kDbDoc, Value::String(b.doc));
  }
  return datoms;
}

absl::StatusOr<std::shared_ptr<const Schema>> Schema::FromDatoms(
    const std::vector<Datom>& datoms) {
  auto schema = std::make_shared<Schema>();
  // Group by entity, in id order so errors are deterministic.
  std::map<EntityId, std::vector<const Datom*>> by_entity;
  for (const Datom& d : datoms) by_entity[d.e].push_back(&d);

  for (const auto& [e, ds] : by_entity) {
    std::string ident;
    bool has_type = false, has_cardinality = false;
    Attribute attr;
    attr.id = e;
    for (const Datom* d : ds) {
      switch (d->a) {
        case ids::kDbIdent:
          ident = d->v.text();
          break;
        case ids::kDbValueType: {
          bool ok;
          attr.type = TypeForTypeEntity(d->v.as_ref(), &ok);
          if (!ok) {
            return absl::DataLossError(StrCat(
                "entity ", e, " has an unknown :db/valueType ", d->v.as_ref()));
          }
          has_type = true;
          break;
        }
        case ids::kDbCardinality:
          attr.cardinality = d->v.as_ref() == ids::kDbCardinalityMany
                                 ? Cardinality::kMany
                                 : Cardinality::kOne;
          has_cardinality = true;
          break;
        case ids::kDbUnique:
          attr.unique = d->v.as_ref() == ids::kDbUniqueIdentity
                            ? Unique::kIdentity
                            : Unique::kValue;
          break;
        case ids::kDbIndex:
          attr.index = d->v.as_bool();
          break;
        case ids::kDbIsComponent:
          attr.is_component = d->v.as_bool();
          break;
        case ids::kDbNoHistory:
          attr.no_history = d->v.as_bool();
          break;
        case ids::kDbFulltext:
          attr.fulltext = d->v.as_bool();
          break;
        case ids::kDbDoc:
          attr.doc = d->v.text();
          break;
        default:
          break;
      }
    }
    if (!ident.empty()) {
      schema->ident_to_entity_[ident] = e;
      schema->entity_to_ident_[e] = ident;
    }
    if (has_type && has_cardinality) {
      attr.system = IsSystemIdent(ident);
      attr.ident = ident;
      schema->attributes_[e] = std::move(attr);
    }
  }
  // A store bootstrapped by an older build lacks the bootstrap idents added
  // since (:db.type/uri, ...). They are known here so that tx-data can name
  // them; their ids were never handed out to anything else (the db
  // partition's counter starts at kFirstUserDbCounter).
  for (const BootstrapIdent& b : kBootstrapIdents) {
    if (schema->entity_to_ident_.contains(b.id) ||
        schema->ident_to_entity_.contains(b.ident)) {
      continue;
    }
    schema->ident_to_entity_[b.ident] = b.id;
    schema->entity_to_ident_[b.id] = b.ident;
  }
  return std::shared_ptr<const Schema>(std::move(schema));
}

const Attribute* Schema::FindAttribute(EntityId id) const {
  auto it = attributes_.find(id);
  return it == attributes_.end() ? nullptr : &it->second;
}

const Attribute* Schema::FindAttribute(std::string_view ident) const {
  auto it =
      ident_to_entity_.find(absl::string_view(ident.data(), ident.size()));
  if (it == ident_to_entity_.end()) return nullptr;
  return FindAttribute(it->second);
}

std::optional<EntityId> Schema::EntityForIdent(std::string_view ident) const {
  auto it =
      ident_to_entity_.find(absl::string_view(ident.data(), ident.size()));
  if (it == ident_to_entity_.end()) return std::nullopt;
  return it->second;
}

const std::string* Schema::IdentForEntity(EntityId e) const {
  auto it = entity_to_ident_.find(e);
  return it == entity_to_ident_.end() ? nullptr : &it->second;
}

}  // namespace mentat::storage
