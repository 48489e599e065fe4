#include "mentat/storage/schema.h"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include "mentat/base/str_cat.h"
#include "mentat/storage/entity_ids.h"
#include "mentat/storage/value_codec.h"

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
    {ids::kDbTypeTuple, "db.type/tuple"},
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
  // For a :db.type/tuple attribute, its :db/tupleType.
  const char* tuple_type = nullptr;
  bool many = false;
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
    {ids::kDbTupleType, "db/tupleType", ids::kDbTypeKeyword, false, false,
     "The type of every element of a homogeneous tuple attribute."},
    {ids::kDbTupleTypes, "db/tupleTypes", ids::kDbTypeTuple, false, false,
     "The element types of a heterogeneous tuple attribute, in order.",
     "db.type/keyword"},
    {ids::kDbTupleAttrs, "db/tupleAttrs", ids::kDbTypeTuple, false, false,
     "The member attributes of a composite tuple attribute, in order.",
     "db.type/keyword"},
    {ids::kDbEnsure, "db/ensure", ids::kDbTypeRef, false, false,
     "Asserted in tx-data to check an entity against an entity spec at the "
     "end of the transaction; never stored.",
     nullptr, true},
    {ids::kDbAttrPreds, "db.attr/preds", ids::kDbTypeSymbol, false, false,
     "Predicates every asserted value of the attribute must pass.", nullptr,
     true},
    {ids::kDbEntityAttrs, "db.entity/attrs", ids::kDbTypeKeyword, false, false,
     "The attributes an entity checked against this spec must have.", nullptr,
     true},
    {ids::kDbEntityPreds, "db.entity/preds", ids::kDbTypeSymbol, false, false,
     "Datomic's entity predicates; refused by mentatd, which runs no user "
     "code in its transactor.",
     nullptr, true},
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
    case ids::kDbTypeTuple:
      return ValueType::kTuple;
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
    add(b.id, ids::kDbCardinality,
        Value::Ref(b.many ? ids::kDbCardinalityMany : ids::kDbCardinalityOne));
    if (b.unique_identity) {
      add(b.id, ids::kDbUnique, Value::Ref(ids::kDbUniqueIdentity));
    }
    if (b.index) add(b.id, ids::kDbIndex, Value::Boolean(true));
    add(b.id, ids::kDbDoc, Value::String(b.doc));
    if (b.tuple_type != nullptr) {
      add(b.id, ids::kDbTupleType, Value::Keyword(b.tuple_type));
    }
  }
  return datoms;
}

absl::StatusOr<std::shared_ptr<const Schema>> Schema::FromDatoms(
    const std::vector<Datom>& datoms) {
  auto schema = std::make_shared<Schema>();
  // Group by entity, in id order so errors are deterministic.
  std::map<EntityId, std::vector<const Datom*>> by_entity;
  for (const Datom& d : datoms) by_entity[d.e].push_back(&d);
  // A store bootstrapped by an older build lacks the bootstrap entities
  // added since (:db.type/uri, :db/tupleType, ...): they are known all the
  // same, as the bootstrap defines them, so that tx-data can use them.
  // Their ids were never handed out to anything else (the db partition's
  // counter starts at kFirstUserDbCounter).
  static const std::vector<Datom>* const kBootstrap =
      new std::vector<Datom>(BootstrapDatoms(kFirstTxId));
  std::map<EntityId, std::vector<const Datom*>> missing;
  for (const Datom& d : *kBootstrap) {
    if (!by_entity.contains(d.e)) missing[d.e].push_back(&d);
  }
  by_entity.merge(missing);
  // Composite members are named by ident; resolved once every ident is.
  std::vector<std::pair<EntityId, std::vector<std::string>>> member_idents;

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
        case ids::kDbTupleType: {
          attr.tuple_spec |= kTupleSpecType;
          attr.tuple_homogeneous = true;
          ValueType t;
          if (ValueTypeFromIdent(d->v.text(), &t)) {
            attr.tuple_types = {t};
          } else {
            attr.tuple_error = StrCat(":db/tupleType :", d->v.text(),
                                      " is not a :db.type/ ident");
          }
          break;
        }
        case ids::kDbTupleTypes:
        case ids::kDbTupleAttrs: {
          const bool types = d->a == ids::kDbTupleTypes;
          attr.tuple_spec |= types ? kTupleSpecTypes : kTupleSpecAttrs;
          std::vector<std::optional<Value>> elements;
          if (d->v.type() != ValueType::kTuple ||
              !DecodeTupleElements(d->v.text(), &elements).ok()) {
            attr.tuple_error = "malformed tuple definition";
            break;
          }
          std::vector<std::string> names;
          for (const std::optional<Value>& el : elements) {
            if (!el.has_value() || el->type() != ValueType::kKeyword) {
              attr.tuple_error =
                  StrCat(types ? ":db/tupleTypes" : ":db/tupleAttrs",
                         " holds keywords only");
              break;
            }
            names.push_back(el->text());
          }
          if (!types) {
            member_idents.emplace_back(e, std::move(names));
            break;
          }
          for (const std::string& n : names) {
            ValueType t;
            if (!ValueTypeFromIdent(n, &t)) {
              attr.tuple_error = StrCat(":db/tupleTypes names :", n,
                                        ", which is not a :db.type/ ident");
              break;
            }
            attr.tuple_types.push_back(t);
          }
          break;
        }
        case ids::kDbAttrPreds: {
          const std::string& name = d->v.text();
          std::optional<AttributePredicate> p = FindAttributePredicate(name);
          if (d->v.type() != ValueType::kSymbol || !p.has_value()) {
            if (attr.preds_error.empty()) {
              attr.preds_error =
                  StrCat(":db.attr/preds names ", d->v.DebugString(),
                         ", which is not a predicate mentatd has (it runs no "
                         "user code; the predicates are ",
                         AttributePredicateNames(), ")");
            }
            break;
          }
          attr.preds.push_back(*p);
          attr.pred_names.push_back(name);
          break;
        }
        default:
          break;
      }
    }
    for (AttributePredicate p : attr.preds) {
      if (attr.preds_error.empty() && has_type &&
          !AttributePredicateTakes(p, attr.type)) {
        attr.preds_error =
            StrCat(":db.attr/preds names ", AttributePredicateName(p),
                   ", which does not "
                   "take ",
                   ValueTypeIdent(attr.type), " values");
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
  for (auto& [e, names] : member_idents) {
    auto it = schema->attributes_.find(e);
    if (it == schema->attributes_.end()) continue;
    Attribute& attr = it->second;
    attr.tuple_attr_idents = names;
    for (const std::string& n : names) {
      const Attribute* member = schema->FindAttribute(n);
      std::string problem;
      if (member == nullptr) {
        problem = "which is no attribute";
      } else if (member->type == ValueType::kTuple) {
        problem = "a tuple attribute (members are scalars)";
      } else if (member->many()) {
        problem = "of cardinality many (members hold one value)";
      } else if (std::find(attr.tuple_attrs.begin(), attr.tuple_attrs.end(),
                           member->id) != attr.tuple_attrs.end()) {
        problem = "twice";
      }
      if (!problem.empty()) {
        attr.tuple_error = StrCat(":db/tupleAttrs names :", n, ", ", problem);
        attr.tuple_attrs.clear();
        attr.tuple_types.clear();
        break;
      }
      attr.tuple_attrs.push_back(member->id);
      attr.tuple_types.push_back(member->type);
    }
  }
  // The reverse of tuple_attrs, for the transactor. Only usable
  // composites: one with an error is refused before it is installed.
  std::vector<std::pair<EntityId, EntityId>> member_of;  // (member, composite)
  for (const auto& [e, attr] : schema->attributes_) {
    if (!attr.is_composite() || !attr.tuple_error.empty()) continue;
    for (EntityId m : attr.tuple_attrs) member_of.emplace_back(m, e);
  }
  std::sort(member_of.begin(), member_of.end());
  for (const auto& [m, e] : member_of) {
    auto it = schema->attributes_.find(m);
    if (it != schema->attributes_.end()) it->second.composites.push_back(e);
  }
  return std::shared_ptr<const Schema>(std::move(schema));
}

absl::Status CheckAttributePredicates(const Attribute& attr) {
  if (attr.preds_error.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      StrCat(":", attr.ident, ": ", attr.preds_error));
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
