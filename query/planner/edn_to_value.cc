#include "planner/edn_to_value.h"

#include <cmath>

#include "mentat/base/str_cat.h"
#include "mentat/edn/edn_printer.h"
#include "mentat/storage/value_codec.h"

namespace mentat::query::planner {

using edn::EdnKind;
using edn::EdnValue;
using storage::Value;
using storage::ValueType;

std::string EdnForMessage(const EdnValue& v) {
  return edn::PrintEdnAbbreviated(v, 60);
}

absl::StatusOr<Value> EdnToValue(const EdnValue& v) {
  switch (v.kind()) {
    case EdnKind::kBool:
      return Value::Boolean(v.as_bool());
    case EdnKind::kInt:
      return Value::Long(v.as_int());
    case EdnKind::kBigInt:
      return storage::ParseBigInt(v.text());
    case EdnKind::kFloat:
      return Value::Double(v.as_double());
    case EdnKind::kBigDec:
      return storage::ParseBigDec(v.text());
    case EdnKind::kString:
      return Value::String(v.text());
    case EdnKind::kKeyword:
      return Value::Keyword(v.text());
    case EdnKind::kSymbol:
      return Value::Symbol(v.text());
    case EdnKind::kTagged:
      if (v.text() == "uri" && v.tagged_value().is_string()) {
        return storage::ParseUri(v.tagged_value().text());
      }
      return absl::InvalidArgumentError(StrCat("unsupported tagged value ",
                                               EdnForMessage(v),
                                               " (a #uri takes a string)"));
    case EdnKind::kInst:
      return Value::Instant(v.as_inst_micros());
    case EdnKind::kUuid:
      return Value::Uuid(v.text());
    case EdnKind::kChar: {
      // A character compares as the one-character string it is.
      std::string s;
      uint32_t c = v.as_char();
      if (c < 0x80) {
        s.push_back(static_cast<char>(c));
      } else if (c < 0x800) {
        s.push_back(static_cast<char>(0xC0 | (c >> 6)));
        s.push_back(static_cast<char>(0x80 | (c & 0x3F)));
      } else if (c < 0x10000) {
        s.push_back(static_cast<char>(0xE0 | (c >> 12)));
        s.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
        s.push_back(static_cast<char>(0x80 | (c & 0x3F)));
      } else {
        s.push_back(static_cast<char>(0xF0 | (c >> 18)));
        s.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
        s.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
        s.push_back(static_cast<char>(0x80 | (c & 0x3F)));
      }
      return Value::String(s);
    }
    case EdnKind::kNil:
      return absl::InvalidArgumentError("nil is not a value a query can match");
    default:
      return absl::InvalidArgumentError(StrCat("expected a scalar value, got ",
                                               edn::EdnKindName(v.kind()), " ",
                                               EdnForMessage(v)));
  }
}

absl::StatusOr<EntityConst> EdnToEntity(const EdnValue& v,
                                        const storage::Schema& schema) {
  EntityConst out;
  if (v.is_int()) {
    if (v.as_int() < 0) {
      return absl::InvalidArgumentError(
          StrCat("entity ids are never negative, got ", v.as_int()));
    }
    out.id = v.as_int();
    return out;
  }
  if (v.is_keyword()) {
    std::optional<storage::EntityId> id = schema.EntityForIdent(v.text());
    if (id.has_value()) {
      out.id = *id;
    } else {
      out.kind = EntityConst::Kind::kNone;
    }
    return out;
  }
  if (v.is_sequential() && v.items().size() == 2 &&
      (v.items()[0].is_keyword() || v.items()[0].is_int())) {
    const EdnValue& a = v.items()[0];
    const storage::Attribute* attr = a.is_keyword()
                                         ? schema.FindAttribute(a.text())
                                         : schema.FindAttribute(a.as_int());
    if (attr == nullptr) {
      return absl::InvalidArgumentError(
          StrCat("lookup ref ", EdnForMessage(v), " names no attribute"));
    }
    if (attr->unique == storage::Unique::kNone) {
      return absl::InvalidArgumentError(StrCat("lookup ref ", EdnForMessage(v),
                                               ": :", attr->ident,
                                               " is not a unique attribute"));
    }
    Value lv;
    absl::StatusOr<EntityConst> inner =
        EdnToAttrValue(v.items()[1], *attr, schema, &lv);
    if (!inner.ok()) return inner.status();
    if (inner->kind == EntityConst::Kind::kNone) {
      out.kind = EntityConst::Kind::kNone;
      return out;
    }
    if (inner->kind == EntityConst::Kind::kLookup) {
      return absl::InvalidArgumentError(
          StrCat("lookup ref ", EdnForMessage(v), " nests a lookup ref"));
    }
    out.kind = EntityConst::Kind::kLookup;
    out.lookup_attr = attr->id;
    out.lookup_value = std::move(lv);
    return out;
  }
  return absl::InvalidArgumentError(
      StrCat("expected an entity id, an ident or a lookup ref, got ",
             edn::EdnKindName(v.kind()), " ", EdnForMessage(v)));
}

bool CoerceValue(ValueType type, Value* v) {
  if (v->type() == type) return true;
  switch (type) {
    case ValueType::kRef:
      if (v->type() != ValueType::kLong || v->as_long() < 0) return false;
      *v = Value::Ref(v->as_long());
      return true;
    case ValueType::kLong:
      if (v->type() != ValueType::kRef) return false;
      *v = Value::Long(v->as_long());
      return true;
    case ValueType::kDouble:
      if (v->type() != ValueType::kLong) return false;
      *v = Value::Double(static_cast<double>(v->as_long()));
      return true;
    case ValueType::kBigInt:
      if (v->type() != ValueType::kLong) return false;
      *v = Value::BigInt(std::to_string(v->as_long()));
      return true;
    case ValueType::kBigDec: {
      if (v->type() == ValueType::kLong) {
        *v = Value::BigDec(std::to_string(v->as_long()));
        return true;
      }
      if (v->type() == ValueType::kBigInt) {
        *v = Value::BigDec(v->text());
        return true;
      }
      return false;
    }
    default:
      return false;
  }
}

absl::StatusOr<EntityConst> EdnToAttrValue(const EdnValue& v,
                                           const storage::Attribute& attr,
                                           const storage::Schema& schema,
                                           Value* out) {
  if (attr.is_ref()) {
    absl::StatusOr<EntityConst> e = EdnToEntity(v, schema);
    if (!e.ok()) {
      return absl::InvalidArgumentError(StrCat(
          ":", attr.ident, " is a ref attribute: ", e.status().message()));
    }
    if (e->kind == EntityConst::Kind::kId) *out = Value::Ref(e->id);
    return e;
  }
  absl::StatusOr<Value> value = EdnToValue(v);
  if (!value.ok()) {
    return absl::InvalidArgumentError(
        StrCat("value for :", attr.ident, ": ", value.status().message()));
  }
  if (!CoerceValue(attr.type, &*value)) {
    return absl::InvalidArgumentError(StrCat(
        ":", attr.ident, " holds ", storage::ValueTypeIdent(attr.type),
        " values, got ", edn::EdnKindName(v.kind()), " ", EdnForMessage(v)));
  }
  *out = *std::move(value);
  return EntityConst{};
}

}  // namespace mentat::query::planner
