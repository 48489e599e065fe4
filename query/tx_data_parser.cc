#include "mentat/query/tx_data_parser.h"

#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "mentat/base/excerpt.h"
#include "mentat/base/str_cat.h"
#include "mentat/edn/edn_printer.h"
#include "mentat/edn/edn_reader.h"
#include "mentat/storage/value_codec.h"

namespace mentat::query {
namespace {

using edn::EdnKind;
using edn::EdnValue;
using storage::EntityRef;
using storage::TxOp;
using storage::TxRequest;
using storage::TxValue;
using storage::Value;

// Offending forms are quoted in messages up to this many bytes.
constexpr size_t kQuotedFormBytes = 100;

std::string_view ToStd(absl::string_view s) {
  return std::string_view(s.data(), s.size());
}

// "a map", "an integer": for messages.
std::string Described(const EdnValue& v) {
  const std::string_view name = edn::EdnKindName(v.kind());
  const bool vowel = name[0] == 'a' || name[0] == 'i' || name[0] == 'u';
  return StrCat(vowel ? "an " : "a ", name, " ",
                edn::PrintEdnAbbreviated(v, 40));
}

// [:attr value] in a value position (Datomic's rule for the ambiguity with
// a two-valued cardinality-many attribute: a keyword first means lookup ref).
bool IsLookupRefVector(const EdnValue& v) {
  return v.is_vector() && v.items().size() == 2 && v.items()[0].is_keyword();
}

// (lookup-ref :attr value), Mentat's spelling.
bool IsLookupRefList(const EdnValue& v) {
  return v.is_list() && !v.items().empty() && v.items()[0].is_symbol() &&
         v.items()[0].text() == "lookup-ref";
}

storage::SourcePos PosOf(const EdnValue& v) {
  return storage::SourcePos{v.line(), v.column()};
}

// Expands one transaction. Fails with the first error found.
class TxDataParser {
 public:
  explicit TxDataParser(TxRequest* request) : ops_(&request->ops) {}

  [[nodiscard]] absl::Status Parse(const EdnValue& tx) {
    if (!tx.is_sequential()) {
      form_ = &tx;
      return Error(tx,
                   StrCat("tx-data must be a vector or list of forms, found ",
                          Described(tx)));
    }
    // Usually exact: one op per op form and per top-level map attribute.
    size_t expected_ops = 0;
    for (const EdnValue& form : tx.items()) {
      expected_ops += form.is_map() ? form.size() : 1;
    }
    ops_->reserve(expected_ops);
    for (const EdnValue& form : tx.items()) {
      form_ = &form;
      absl::Status s;
      if (form.is_sequential()) {
        s = ParseOpForm(form);
      } else if (form.is_map()) {
        s = ParseMapForm(form);
      } else if (form.is_keyword() && &form == &tx.items().front() &&
                 tx.size() > 1) {
        // [:db/add e a v] alone: one operation, not yet a list of them.
        s = Error(form, StrCat("expected an operation like [:db/add e a v] "
                               "or a map, found ",
                               Described(form),
                               "; tx-data is a vector of operations: wrap a "
                               "single one in another vector, [[",
                               edn::PrintEdnAbbreviated(form, 40), " ...]]"));
      } else {
        s = Error(form,
                  StrCat("expected an operation like [:db/add e a v] or a map, "
                         "found ",
                         Described(form)));
      }
      if (!s.ok()) return s;
    }
    return absl::OkStatus();
  }

 private:
  // "line L, column C: <message> in <current form>".
  [[nodiscard]] absl::Status Error(const EdnValue& at,
                                   std::string_view message) const {
    std::string text(message);
    if (form_ != nullptr) {
      text += " in ";
      text += edn::PrintEdnAbbreviated(*form_, kQuotedFormBytes);
    }
    return edn::EdnError({at.line(), at.column()}, text);
  }

  [[nodiscard]] absl::Status ParseOpForm(const EdnValue& form) {
    const std::vector<EdnValue>& items = form.items();
    if (items.empty()) return Error(form, "empty operation");
    const EdnValue& op = items[0];
    if (!op.is_keyword()) {
      return Error(op, StrCat("expected an operation keyword (:db/add, "
                              ":db/retract, ...), found ",
                              Described(op)));
    }
    const std::string& name = op.text();
    const size_t args = items.size() - 1;
    auto arity = [&](std::string_view expected) {
      return Error(form, StrCat(":", name, " takes ", expected, ", found ",
                                args, args == 1 ? " argument" : " arguments"));
    };
    TxOp tx_op;
    tx_op.pos = PosOf(form);
    if (name == "db/add" || name == "db/retract") {
      const bool add = name == "db/add";
      if (args != 3 && (add || args != 2)) {
        return arity(add ? "3 arguments (e a v)"
                         : "2 or 3 arguments (e a, or e a v)");
      }
      if (absl::Status s = ParseEntity(items[1], &tx_op.e); !s.ok()) return s;
      if (absl::Status s = ParseAttribute(items[2], &tx_op.a); !s.ok()) {
        return s;
      }
      if (args == 2) {
        tx_op.kind = TxOp::Kind::kRetractAttr;
      } else {
        tx_op.kind = add ? TxOp::Kind::kAdd : TxOp::Kind::kRetract;
        if (absl::Status s = ParseOpValue(items[3], &tx_op.v); !s.ok()) {
          return s;
        }
      }
    } else if (name == "db/retractEntity" || name == "db.fn/retractEntity") {
      if (args != 1) return arity("1 argument (e)");
      tx_op.kind = TxOp::Kind::kRetractEntity;
      if (absl::Status s = ParseEntity(items[1], &tx_op.e); !s.ok()) return s;
    } else if (name == "db/cas" || name == "db.fn/cas") {
      if (args != 4) return arity("4 arguments (e a old new)");
      tx_op.kind = TxOp::Kind::kCas;
      if (absl::Status s = ParseEntity(items[1], &tx_op.e); !s.ok()) return s;
      if (absl::Status s = ParseAttribute(items[2], &tx_op.a); !s.ok()) {
        return s;
      }
      if (items[3].is_nil()) {
        tx_op.old_is_nil = true;
      } else if (absl::Status s = ParseOpValue(items[3], &tx_op.old); !s.ok()) {
        return s;
      }
      if (absl::Status s = ParseOpValue(items[4], &tx_op.v); !s.ok()) {
        return s;
      }
    } else {
      return Error(op, StrCat("unknown operation :", name));
    }
    ops_->push_back(std::move(tx_op));
    return absl::OkStatus();
  }

  [[nodiscard]] absl::Status ParseMapForm(const EdnValue& map) {
    EntityRef entity;
    if (absl::Status s = MapEntity(map, /*nested=*/false, &entity); !s.ok()) {
      return s;
    }
    return ExpandMap(map, entity);
  }

  // The entity a map describes: its :db/id, or a new tempid. Fails if the
  // map has no attribute besides :db/id.
  [[nodiscard]] absl::Status MapEntity(const EdnValue& map, bool nested,
                                       EntityRef* out) {
    const EdnValue* id = nullptr;
    size_t attributes = 0;
    const std::vector<EdnValue>& items = map.items();
    for (size_t i = 0; i + 1 < items.size(); i += 2) {
      if (items[i].is_keyword("db/id")) {
        id = &items[i + 1];
      } else {
        ++attributes;
      }
    }
    if (attributes == 0) {
      return Error(map, "a map needs at least one attribute besides :db/id");
    }
    if (id != nullptr) return ParseEntity(*id, out);
    *out = EntityRef::TempId(StrCat(kGeneratedTempIdPrefix, next_tempid_++));
    out->nested = nested;
    return absl::OkStatus();
  }

  // One kAdd per attribute value of `map`, whose entity is `entity`.
  [[nodiscard]] absl::Status ExpandMap(const EdnValue& map,
                                       const EntityRef& entity) {
    const std::vector<EdnValue>& items = map.items();
    for (size_t i = 0; i + 1 < items.size(); i += 2) {
      const EdnValue& key = items[i];
      if (key.is_keyword("db/id")) continue;
      const EdnValue& value = items[i + 1];
      EntityRef attr;
      bool reverse = false;
      if (key.is_keyword() && !key.name().empty() && key.name()[0] == '_') {
        const std::string_view forward = key.name().substr(1);
        if (forward.empty()) {
          return Error(
              key, StrCat("invalid reverse attribute :", Excerpt(key.text())));
        }
        reverse = true;
        attr = key.ns().empty()
                   ? EntityRef::Ident(std::string(forward))
                   : EntityRef::Ident(StrCat(key.ns(), "/", forward));
      } else if (absl::Status s = ParseAttribute(key, &attr); !s.ok()) {
        return s;
      }
      if (value.is_nil()) {
        return Error(value, "nil is not a value; use :db/retract");
      }
      absl::Status s = reverse ? AddReverse(key, attr, value, entity)
                               : AddForward(key, attr, value, entity);
      if (!s.ok()) return s;
    }
    return absl::OkStatus();
  }

  // attr value -> [entity attr value], once per value of a collection.
  [[nodiscard]] absl::Status AddForward(const EdnValue& key,
                                        const EntityRef& attr,
                                        const EdnValue& value,
                                        const EntityRef& entity) {
    if (value.is_collection() && !value.is_map() && !IsLookupRef(value)) {
      for (const EdnValue& item : value.items()) {
        if (item.is_collection() && !item.is_map() && !IsLookupRef(item)) {
          return Error(item, StrCat("a nested collection is not a value: ",
                                    edn::PrintEdnAbbreviated(item, 40)));
        }
        if (item.is_nil()) {
          return Error(item, "nil is not a value; use :db/retract");
        }
        if (absl::Status s = AddOneForward(key, attr, item, entity,
                                           /*whole_value=*/false);
            !s.ok()) {
          return s;
        }
      }
      return absl::OkStatus();
    }
    return AddOneForward(key, attr, value, entity, /*whole_value=*/true);
  }

  // `whole_value`: `value` is the map's whole value for `key`, not an
  // element of a collection, so [k v] may also be two values (map_pair).
  [[nodiscard]] absl::Status AddOneForward(const EdnValue& key,
                                           const EntityRef& attr,
                                           const EdnValue& value,
                                           const EntityRef& entity,
                                           bool whole_value) {
    TxOp op;
    op.kind = TxOp::Kind::kAdd;
    op.e = entity;
    op.a = attr;
    op.pos = PosOf(key);
    if (value.is_map()) {
      EntityRef nested;
      if (absl::Status s = MapEntity(value, /*nested=*/true, &nested);
          !s.ok()) {
        return s;
      }
      op.v = TxValue::Entity(nested);
      ops_->push_back(std::move(op));
      return ExpandMap(value, nested);
    }
    if (absl::Status s = ParseOpValue(value, &op.v); !s.ok()) return s;
    op.v.map_pair = whole_value && IsLookupRefVector(value);
    ops_->push_back(std::move(op));
    return absl::OkStatus();
  }

  // :ns/_attr value -> [value ns/attr entity], once per entity in value.
  [[nodiscard]] absl::Status AddReverse(const EdnValue& key,
                                        const EntityRef& attr,
                                        const EdnValue& value,
                                        const EntityRef& entity) {
    if (value.is_collection() && !value.is_map() && !IsLookupRef(value)) {
      for (const EdnValue& item : value.items()) {
        if (absl::Status s = AddOneReverse(key, attr, item, entity); !s.ok()) {
          return s;
        }
      }
      return absl::OkStatus();
    }
    return AddOneReverse(key, attr, value, entity);
  }

  [[nodiscard]] absl::Status AddOneReverse(const EdnValue& key,
                                           const EntityRef& attr,
                                           const EdnValue& value,
                                           const EntityRef& entity) {
    TxOp op;
    op.kind = TxOp::Kind::kAdd;
    op.a = attr;
    op.v = TxValue::Entity(entity);
    op.pos = PosOf(key);
    if (value.is_map()) {
      if (absl::Status s = MapEntity(value, /*nested=*/true, &op.e); !s.ok()) {
        return s;
      }
      EntityRef nested = op.e;
      ops_->push_back(std::move(op));
      return ExpandMap(value, nested);
    }
    if (absl::Status s = ParseEntity(value, &op.e); !s.ok()) return s;
    ops_->push_back(std::move(op));
    return absl::OkStatus();
  }

  static bool IsLookupRef(const EdnValue& v) {
    return IsLookupRefVector(v) || IsLookupRefList(v);
  }

  // An entity position: id, ident, tempid or lookup ref.
  [[nodiscard]] absl::Status ParseEntity(const EdnValue& v, EntityRef* out) {
    switch (v.kind()) {
      case EdnKind::kInt:
        *out = EntityRef::Id(v.as_int());
        return absl::OkStatus();
      case EdnKind::kKeyword:
        *out = EntityRef::Ident(v.text());
        return absl::OkStatus();
      case EdnKind::kString:
        *out = v.text() == "datomic.tx" ? EntityRef::TxTempId()
                                        : EntityRef::TempId(v.text());
        return absl::OkStatus();
      case EdnKind::kNil:
        return Error(v, "nil is not an entity");
      case EdnKind::kVector:
      case EdnKind::kList:
        if (v.is_list() && !IsLookupRefList(v)) break;
        return ParseLookupRef(v, /*allow_attr_id=*/true, out);
      default:
        break;
    }
    return Error(v, StrCat("expected an entity (id, ident, tempid or lookup "
                           "ref), found ",
                           Described(v)));
  }

  // [attr value] or (lookup-ref attr value).
  [[nodiscard]] absl::Status ParseLookupRef(const EdnValue& v,
                                            bool allow_attr_id,
                                            EntityRef* out) {
    const std::vector<EdnValue>& items = v.items();
    const size_t first = v.is_list() ? 1 : 0;
    if (items.size() != first + 2) {
      return Error(v,
                   StrCat("a lookup ref has an attribute and a value, found ",
                          Described(v)));
    }
    const EdnValue& attr = items[first];
    const EdnValue& value = items[first + 1];
    Value lookup_value;
    if (value.is_nil()) return Error(value, "a lookup ref value cannot be nil");
    if (absl::Status s = ParseScalar(value, &lookup_value); !s.ok()) return s;
    if (attr.is_keyword()) {
      *out = EntityRef::LookupRef(attr.text(), std::move(lookup_value));
      return absl::OkStatus();
    }
    if (attr.is_int() && allow_attr_id) {
      *out = EntityRef::LookupRef(std::string(), std::move(lookup_value));
      out->lookup_attr_id = attr.as_int();
      return absl::OkStatus();
    }
    return Error(attr, StrCat("a lookup ref attribute must be a keyword or an "
                              "entity id, found ",
                              Described(attr)));
  }

  [[nodiscard]] absl::Status ParseAttribute(const EdnValue& v, EntityRef* out) {
    if (v.is_keyword()) {
      *out = EntityRef::Ident(v.text());
      return absl::OkStatus();
    }
    if (v.is_int()) {
      *out = EntityRef::Id(v.as_int());
      return absl::OkStatus();
    }
    return Error(v,
                 StrCat("expected an attribute (keyword or entity id), found ",
                        Described(v)));
  }

  // A value in an op form or a map: a scalar or a lookup ref.
  [[nodiscard]] absl::Status ParseOpValue(const EdnValue& v, TxValue* out) {
    if (v.is_nil()) return Error(v, "nil is not a value; use :db/retract");
    if (IsLookupRef(v)) {
      EntityRef ref;
      if (absl::Status s = ParseLookupRef(v, /*allow_attr_id=*/false, &ref);
          !s.ok()) {
        return s;
      }
      *out = TxValue::Entity(std::move(ref));
      return absl::OkStatus();
    }
    if (v.is_map()) {
      return Error(v,
                   "a map is not a value here (nested maps belong in map "
                   "forms)");
    }
    if (v.is_collection()) {
      return Error(v, StrCat("a collection is not a value here: ",
                             edn::PrintEdnAbbreviated(v, 40)));
    }
    Value scalar;
    if (absl::Status s = ParseScalar(v, &scalar); !s.ok()) return s;
    *out = TxValue::Scalar(std::move(scalar));
    return absl::OkStatus();
  }

  [[nodiscard]] absl::Status ParseScalar(const EdnValue& v, Value* out) {
    switch (v.kind()) {
      case EdnKind::kInt:
        *out = Value::Long(v.as_int());
        return absl::OkStatus();
      case EdnKind::kFloat:
        *out = Value::Double(v.as_double());
        return absl::OkStatus();
      case EdnKind::kBool:
        *out = Value::Boolean(v.as_bool());
        return absl::OkStatus();
      case EdnKind::kString:
        *out = Value::String(v.text());
        return absl::OkStatus();
      case EdnKind::kKeyword:
        *out = Value::Keyword(v.text());
        return absl::OkStatus();
      case EdnKind::kInst:
        *out = Value::Instant(v.as_inst_micros());
        return absl::OkStatus();
      case EdnKind::kUuid:
        *out = Value::Uuid(v.text());
        return absl::OkStatus();
      case EdnKind::kBigInt:
      case EdnKind::kBigDec: {
        absl::StatusOr<Value> big = v.is_bigint()
                                        ? storage::ParseBigInt(v.text())
                                        : storage::ParseBigDec(v.text());
        if (!big.ok()) return Error(v, ToStd(big.status().message()));
        *out = *std::move(big);
        return absl::OkStatus();
      }
      case EdnKind::kNil:
        return Error(v, "nil is not a value; use :db/retract");
      case EdnKind::kSymbol:
        *out = Value::Symbol(v.text());
        return absl::OkStatus();
      case EdnKind::kTagged: {
        if (v.text() != "uri") {
          return Error(v, StrCat("unsupported tagged value #",
                                 Excerpt(v.text()), " (known here: #uri)"));
        }
        if (!v.tagged_value().is_string()) {
          return Error(v, StrCat("#uri takes a string, found ",
                                 Described(v.tagged_value())));
        }
        absl::StatusOr<Value> uri = storage::ParseUri(v.tagged_value().text());
        if (!uri.ok()) return Error(v, ToStd(uri.status().message()));
        *out = *std::move(uri);
        return absl::OkStatus();
      }
      default:
        break;
    }
    return Error(v, StrCat(Described(v), " is not a value"));
  }

  const EdnValue* form_ = nullptr;  // the top-level form being expanded
  std::vector<TxOp>* ops_;
  uint64_t next_tempid_ = 0;
};

}  // namespace

bool IsGeneratedTempId(std::string_view tempid) {
  return tempid.substr(0, kGeneratedTempIdPrefix.size()) ==
         kGeneratedTempIdPrefix;
}

[[nodiscard]] absl::StatusOr<storage::TxRequest> ParseTxData(
    std::string_view edn_text) {
  absl::StatusOr<EdnValue> tx = edn::ParseEdn(edn_text);
  if (!tx.ok()) return tx.status();
  return ParseTxData(*tx);
}

[[nodiscard]] absl::StatusOr<storage::TxRequest> ParseTxData(
    const edn::EdnValue& tx_data) {
  TxRequest request;
  TxDataParser parser(&request);
  if (absl::Status s = parser.Parse(tx_data); !s.ok()) return s;
  return request;
}

}  // namespace mentat::query
