// Resolution half of TxApplier: attributes, entity positions, typed values
// and tempids (unification and upsert), before any datom is built.

#include <string>

#include "internal/tx_applier.h"
#include "mentat/base/excerpt.h"
#include "mentat/base/str_cat.h"
#include "mentat/storage/entity_ids.h"
#include "mentat/storage/value_codec.h"

namespace mentat::storage::internal {
namespace {

constexpr char kTxTempIdName[] = "datomic.tx";

std::string TypeName(ValueType t) { return std::string(ValueTypeIdent(t)); }

}  // namespace

std::string SystemAttributeMessage(const Attribute& attr) {
  return StrCat(":", attr.ident,
                " is a system attribute (ident namespace mentat.*), which "
                "tx-data cannot write");
}

TxApplier::TxApplier(TxBatch* group, const Statistics* group_stats,
                     TxState* state, const StoreOptions& options)
    : group_(group),
      group_stats_(group_stats),
      state_(state),
      options_(options) {}

absl::Status TxApplier::OpError(absl::StatusCode code, const TxOp* op,
                                const std::string& message) const {
  std::string text;
  if (op != nullptr && op->pos.line > 0) {
    StrAppend(&text, "line ", op->pos.line, ", column ", op->pos.column, ": ");
  }
  StrAppend(&text, message);
  if (op != nullptr) {
    StrAppend(&text, " in ", Excerpt(op->DebugString(), 200));
  }
  return absl::Status(code, text);
}

EntityId TxApplier::Id(const EntitySlot& slot) const {
  return slot.tempid >= 0 ? tempids_[slot.tempid].id : slot.id;
}

Value TxApplier::ValueOf(const ValueSlot& slot) const {
  if (slot.is_entity) return Value::Ref(Id(slot.entity));
  return slot.value;
}

bool TxApplier::IsFresh(EntityId e) const {
  int p = PartitionIndex(e);
  if (p < 0 || p >= static_cast<int>(start_counter_.size())) return false;
  return (e & kCounterMask) >= start_counter_[p];
}

absl::StatusOr<TxApplier::EntitySlot> TxApplier::ResolveEntity(
    const EntityRef& ref, const TxOp& op) {
  const Schema& schema = *state_->schema;
  switch (ref.kind) {
    case EntityRef::Kind::kId:
      if (!state_->IsAllocated(ref.id) && ref.id != tx_) {
        return OpError(absl::StatusCode::kInvalidArgument, &op,
                       StrCat("entity id ", ref.id, " does not exist"));
      }
      return EntitySlot{ref.id, -1};
    case EntityRef::Kind::kIdent: {
      auto e = schema.EntityForIdent(ref.name);
      if (!e) {
        return OpError(absl::StatusCode::kInvalidArgument, &op,
                       StrCat("unknown ident :", Excerpt(ref.name)));
      }
      return EntitySlot{*e, -1};
    }
    case EntityRef::Kind::kLookupRef: {
      const Attribute* attr = ref.lookup_attr_id != 0
                                  ? schema.FindAttribute(ref.lookup_attr_id)
                                  : schema.FindAttribute(ref.lookup_attr);
      if (attr == nullptr) {
        return OpError(absl::StatusCode::kInvalidArgument, &op,
                       StrCat("lookup ref ", ref.DebugString(),
                              " names an unknown attribute"));
      }
      if (attr->unique == Unique::kNone) {
        return OpError(absl::StatusCode::kInvalidArgument, &op,
                       StrCat("lookup ref ", ref.DebugString(),
                              ": :", attr->ident, " is not unique"));
      }
      if (ref.lookup_value == nullptr) {
        return OpError(absl::StatusCode::kInvalidArgument, &op,
                       "lookup ref without a value");
      }
      // Most lookup refs need no coercion: read the parsed value in place.
      const Value* v = ref.lookup_value.get();
      Value coerced;
      if (attr->is_ref()) {
        if (v->type() == ValueType::kLong) {
          coerced = Value::Ref(v->as_long());
          v = &coerced;
        } else if (v->type() == ValueType::kKeyword) {
          auto target = schema.EntityForIdent(v->text());
          if (!target) {
            return OpError(absl::StatusCode::kInvalidArgument, &op,
                           StrCat("unknown ident :", v->text(),
                                  " in lookup ref ", ref.DebugString()));
          }
          coerced = Value::Ref(*target);
          v = &coerced;
        }
      } else if (v->type() == ValueType::kLong &&
                 attr->type == ValueType::kDouble) {
        coerced = Value::Double(static_cast<double>(v->as_long()));
        v = &coerced;
      } else if (attr->type == ValueType::kTuple &&
                 !attr->tuple_types.empty()) {
        // Coerced as a written value is, so ["a" 1] finds ["a" 1.0].
        absl::StatusOr<Value> t = CheckTupleValue(*attr, *v);
        if (!t.ok()) {
          return OpError(absl::StatusCode::kInvalidArgument, &op,
                         StrCat("lookup ref ", ref.DebugString(), ": ",
                                t.status().message()));
        }
        coerced = *std::move(t);
        v = &coerced;
      }
      if (v->type() != attr->type) {
        return OpError(absl::StatusCode::kInvalidArgument, &op,
                       StrCat("lookup ref ", ref.DebugString(), ": :",
                              attr->ident, " takes ", TypeName(attr->type)));
      }
      // Encoded into a buffer the applier keeps: a hit in the cache (the
      // common case in bulk tx-data, which names the same few entities
      // many times) allocates nothing.
      lookup_prefix_.clear();
      AvetKey::EncodePrefix(attr->id, *v, &lookup_prefix_);
      auto& lookups = lookups_ != nullptr ? *lookups_ : lookup_cache_;
      auto cached = lookups.find(lookup_prefix_);
      if (cached != lookups.end()) return EntitySlot{cached->second, -1};
      std::optional<EntityId> found;
      absl::Status s =
          group_->Scan(IndexOrder::kAvet, lookup_prefix_, [&](const Datom& d) {
            found = d.e;
            return false;
          });
      if (!s.ok()) return s;
      if (!found) {
        return OpError(absl::StatusCode::kInvalidArgument, &op,
                       StrCat("lookup ref ", ref.DebugString(),
                              " does not resolve to an entity"));
      }
      lookups.emplace(lookup_prefix_, *found);
      return EntitySlot{*found, -1};
    }
    case EntityRef::Kind::kTxTempId:
    case EntityRef::Kind::kTempId: {
      const bool is_tx =
          ref.kind == EntityRef::Kind::kTxTempId || ref.name == kTxTempIdName;
      const std::string& name = is_tx ? kTxTempIdName : ref.name;
      auto [it, inserted] =
          tempid_index_.try_emplace(name, static_cast<int>(tempids_.size()));
      if (inserted) {
        TempId t;
        t.name = name;
        t.nested = ref.nested;
        t.is_tx = is_tx;
        t.pos = op.pos;
        if (is_tx) t.id = tx_;
        tempids_.push_back(std::move(t));
      }
      return EntitySlot{0, it->second};
    }
  }
  return OpError(absl::StatusCode::kInvalidArgument, &op, "bad entity");
}

absl::StatusOr<TxApplier::ValueSlot> TxApplier::ResolveValue(
    const TxValue& tv, const Attribute& attr, const TxOp& op) {
  ValueSlot slot;
  if (attr.is_ref()) {
    if (tv.kind == TxValue::Kind::kEntity) {
      auto e = ResolveEntity(tv.entity, op);
      if (!e.ok()) return e.status();
      slot.entity = *e;
      slot.is_entity = true;
      return slot;
    }
    const Value& v = tv.scalar;
    EntityRef ref;
    switch (v.type()) {
      case ValueType::kLong:
      case ValueType::kRef:
        ref = EntityRef::Id(v.as_long());
        break;
      case ValueType::kKeyword:
        ref = EntityRef::Ident(v.text());
        break;
      case ValueType::kString:
        ref = EntityRef::TempId(v.text());
        break;
      default:
        return OpError(
            absl::StatusCode::kInvalidArgument, &op,
            StrCat("value ", v.DebugString(), " of :", attr.ident,
                   " is not an entity id, ident, tempid or lookup ref"));
    }
    auto e = ResolveEntity(ref, op);
    if (!e.ok()) return e.status();
    slot.entity = *e;
    slot.is_entity = true;
    return slot;
  }
  if (attr.type == ValueType::kTuple) {
    // [:k v] in a value position was read as a lookup ref; for a tuple
    // attribute it is the tuple of a keyword and v.
    Value tuple = tv.scalar;
    if (tv.kind == TxValue::Kind::kEntity) {
      if (tv.entity.kind != EntityRef::Kind::kLookupRef ||
          tv.entity.lookup_value == nullptr) {
        return OpError(absl::StatusCode::kInvalidArgument, &op,
                       StrCat("value of :", attr.ident,
                              " is a nested map, but :", attr.ident,
                              " takes :db.type/tuple (a vector)"));
      }
      tuple = MakeTuple(
          {Value::Keyword(tv.entity.lookup_attr), *tv.entity.lookup_value});
    }
    absl::StatusOr<Value> checked = CheckTupleValue(attr, tuple);
    if (!checked.ok()) {
      return OpError(absl::StatusCode::kInvalidArgument, &op,
                     std::string(checked.status().message()));
    }
    slot.value = *std::move(checked);
    return slot;
  }
  if (tv.kind == TxValue::Kind::kEntity) {
    if (tv.entity.kind == EntityRef::Kind::kLookupRef) {
      return OpError(absl::StatusCode::kInvalidArgument, &op,
                     StrCat("value ", tv.entity.DebugString(), " of :",
                            attr.ident, " is a lookup ref, but :", attr.ident,
                            " takes ", TypeName(attr.type),
                            " (only a :db.type/ref attribute takes a lookup "
                            "ref)"));
    }
    return OpError(
        absl::StatusCode::kInvalidArgument, &op,
        StrCat("value of :", attr.ident, " is ",
               tv.entity.nested ? "a nested map" : "an entity reference",
               ", but :", attr.ident, " takes ", TypeName(attr.type)));
  }
  const Value& v = tv.scalar;
  if (v.type() == attr.type) {
    slot.value = v;
    return slot;
  }
  if (v.type() == ValueType::kLong) {
    if (attr.type == ValueType::kDouble) {
      slot.value = Value::Double(static_cast<double>(v.as_long()));
      return slot;
    }
    if (attr.type == ValueType::kBigInt || attr.type == ValueType::kBigDec) {
      auto parsed = attr.type == ValueType::kBigInt
                        ? ParseBigInt(std::to_string(v.as_long()))
                        : ParseBigDec(std::to_string(v.as_long()));
      if (parsed.ok()) {
        slot.value = *parsed;
        return slot;
      }
    }
  }
  if (v.type() == ValueType::kBigInt && attr.type == ValueType::kBigDec) {
    auto parsed = ParseBigDec(v.text());
    if (parsed.ok()) {
      slot.value = *parsed;
      return slot;
    }
  }
  return OpError(absl::StatusCode::kInvalidArgument, &op,
                 StrCat("value ", v.DebugString(), " of :", attr.ident,
                        " is a ", TypeName(v.type()), "; :", attr.ident,
                        " takes ", TypeName(attr.type)));
}

bool TxApplier::MapPairIsLookupRef(const Attribute& attr,
                                   const EntityRef& pair) const {
  // Datomic reads [k v] as a lookup ref for any reference attribute; a
  // lookup ref must name an attribute, so for a cardinality-many
  // reference a k that names none makes two values (enum idents).
  return attr.is_ref() && (!attr.many() || state_->schema->FindAttribute(
                                               pair.lookup_attr) != nullptr);
}

absl::Status TxApplier::ResolveOps(const TxRequest& request) {
  const Schema& schema = *state_->schema;
  ops_.reserve(request.ops.size());
  for (const TxOp& op : request.ops) {
    Op o;
    o.kind = op.kind;
    o.source = &op;
    auto e = ResolveEntity(op.e, op);
    if (!e.ok()) return e.status();
    o.e = *e;
    if (op.kind != TxOp::Kind::kRetractEntity) {
      const Attribute* attr = nullptr;
      if (op.a.kind == EntityRef::Kind::kIdent) {
        attr = schema.FindAttribute(op.a.name);
        if (attr == nullptr) {
          size_t slash = op.a.name.find('/');
          bool reverse = slash != std::string::npos &&
                         slash + 1 < op.a.name.size() &&
                         op.a.name[slash + 1] == '_';
          return OpError(
              absl::StatusCode::kInvalidArgument, &op,
              reverse ? StrCat("reverse attribute :", Excerpt(op.a.name),
                               " is only allowed in map forms")
                      : StrCat("unknown attribute :", Excerpt(op.a.name)));
        }
      } else if (op.a.kind == EntityRef::Kind::kId) {
        attr = schema.FindAttribute(op.a.id);
        if (attr == nullptr) {
          return OpError(absl::StatusCode::kInvalidArgument, &op,
                         StrCat("entity ", op.a.id, " is not an attribute"));
        }
      } else {
        return OpError(absl::StatusCode::kInvalidArgument, &op,
                       "an attribute must be an ident or an entity id");
      }
      if (attr->system && !op.system) {
        return OpError(absl::StatusCode::kInvalidArgument, &op,
                       SystemAttributeMessage(*attr));
      }
      if (attr->is_composite() && op.kind != TxOp::Kind::kAdd) {
        // The transactor retracts a composite when its members are gone;
        // an assertion is checked against the members (tx_composite.cc).
        return OpError(
            absl::StatusCode::kInvalidArgument, &op,
            StrCat(":", attr->ident, " is a composite tuple (",
                   TupleSpecText(*attr),
                   ") that the transactor maintains: tx-data "
                   "cannot ",
                   op.kind == TxOp::Kind::kCas ? "compare-and-swap" : "retract",
                   " it; change its members instead"));
      }
      if (attr->id == ids::kDbEnsure && op.kind != TxOp::Kind::kAdd) {
        return OpError(absl::StatusCode::kInvalidArgument, &op,
                       ":db/ensure is never stored, so tx-data can only "
                       "assert it ([:db/add e :db/ensure spec] checks e "
                       "against the spec at the end of the transaction)");
      }
      if (attr->id == ids::kDbEntityPreds && op.kind != TxOp::Kind::kRetract &&
          op.kind != TxOp::Kind::kRetractAttr) {
        return OpError(
            absl::StatusCode::kInvalidArgument, &op,
            ":db.entity/preds is not supported: Datomic's entity predicates "
            "are user functions of a database and an entity, and mentatd "
            "runs no user code in its transactor; require attributes with "
            ":db.entity/attrs and check values with :db.attr/preds");
      }
      o.attr = attr;
      if (o.e.tempid >= 0 && op.kind == TxOp::Kind::kAdd &&
          IsSchemaAttribute(attr->id)) {
        tempids_[o.e.tempid].schema = true;
      }
      if (op.v.spread && attr->type != ValueType::kTuple) {
        std::vector<std::optional<Value>> items;
        if (absl::Status s = DecodeTupleElements(op.v.scalar.text(), &items);
            !s.ok()) {
          return s;
        }
        for (const std::optional<Value>& item : items) {
          if (!item.has_value()) {
            return OpError(absl::StatusCode::kInvalidArgument, &op,
                           "nil is not a value; use :db/retract");
          }
          auto v = ResolveValue(TxValue::Scalar(*item), *attr, op);
          if (!v.ok()) return v.status();
          Op one = o;
          one.v = std::move(*v);
          ops_.push_back(std::move(one));
        }
        continue;
      }
      // For a tuple attribute [k v] is the tuple (ResolveValue).
      if (op.v.map_pair && op.v.entity.lookup_value != nullptr &&
          attr->type != ValueType::kTuple &&
          !MapPairIsLookupRef(*attr, op.v.entity)) {
        // [k v] written in a map form for an attribute that takes no
        // lookup ref here: the attribute's two values k and v.
        for (const Value& item : {Value::Keyword(op.v.entity.lookup_attr),
                                  *op.v.entity.lookup_value}) {
          auto v = ResolveValue(TxValue::Scalar(item), *attr, op);
          if (!v.ok()) return v.status();
          Op one = o;
          one.v = std::move(*v);
          ops_.push_back(std::move(one));
        }
        continue;
      }
      if (op.kind == TxOp::Kind::kAdd || op.kind == TxOp::Kind::kRetract ||
          op.kind == TxOp::Kind::kCas) {
        auto v = ResolveValue(op.v, *attr, op);
        if (!v.ok()) return v.status();
        o.v = std::move(*v);
      }
      if (op.kind == TxOp::Kind::kCas) {
        if (attr->many()) {
          return OpError(absl::StatusCode::kInvalidArgument, &op,
                         StrCat(":db/cas needs a cardinality-one "
                                "attribute; :",
                                attr->ident, " is cardinality many"));
        }
        o.old_is_nil = op.old_is_nil;
        if (!op.old_is_nil) {
          auto old = ResolveValue(op.old, *attr, op);
          if (!old.ok()) return old.status();
          o.old = std::move(*old);
        }
      }
    }
    ops_.push_back(std::move(o));
  }
  return absl::OkStatus();
}

absl::Status TxApplier::ResolveTempIds() {
  // Upsert: a tempid asserting a :db.unique/identity value that an entity
  // already holds becomes that entity. Resolving one tempid can resolve a
  // ref value of another, so repeat until nothing changes.
  bool changed = true;
  while (changed) {
    changed = false;
    for (const Op& o : ops_) {
      if (o.kind != TxOp::Kind::kAdd || o.e.tempid < 0) continue;
      if (o.attr->unique != Unique::kIdentity) continue;
      if (o.v.is_entity && o.v.entity.tempid >= 0 &&
          tempids_[o.v.entity.tempid].id == 0) {
        continue;
      }
      TempId& t = tempids_[o.e.tempid];
      if (t.is_tx) continue;
      Value v = ValueOf(o.v);
      std::string prefix;
      AvetKey::EncodePrefix(o.attr->id, v, &prefix);
      std::optional<EntityId> holder;
      absl::Status s =
          group_->Scan(IndexOrder::kAvet, prefix, [&](const Datom& d) {
            holder = d.e;
            return false;
          });
      if (!s.ok()) return s;
      if (!holder) continue;
      if (t.id == 0) {
        t.id = *holder;
        changed = true;
      } else if (t.id != *holder) {
        return OpError(
            absl::StatusCode::kInvalidArgument, o.source,
            StrCat("tempid \"", Excerpt(t.name), "\" upserts to two entities, ",
                   t.id, " and ", *holder, " (through :", o.attr->ident, " ",
                   v.DebugString(), ")"));
      }
    }
  }
  for (TempId& t : tempids_) {
    if (t.id != 0) continue;
    t.id = state_->Allocate(t.schema ? Partition::kDb : Partition::kUser);
    t.fresh = true;
  }
  return absl::OkStatus();
}

absl::Status TxApplier::CheckNested() {
  for (const Op& o : ops_) {
    if (!o.v.is_entity || o.v.entity.tempid < 0) continue;
    const TempId& t = tempids_[o.v.entity.tempid];
    if (!t.nested || o.attr->is_component) continue;
    bool has_unique = false;
    for (const Op& other : ops_) {
      if (other.kind == TxOp::Kind::kAdd &&
          other.e.tempid == o.v.entity.tempid &&
          other.attr->unique != Unique::kNone) {
        has_unique = true;
        break;
      }
    }
    if (!has_unique) {
      return OpError(absl::StatusCode::kInvalidArgument, o.source,
                     StrCat("a nested map under :", o.attr->ident,
                            " needs a component attribute or a unique "
                            "attribute in the nested map"));
    }
  }
  return absl::OkStatus();
}

}  // namespace mentat::storage::internal
