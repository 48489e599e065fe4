#include "mentat/storage/tx_op.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace mentat::storage {
namespace {

// Idents are held without the leading colon; accept either spelling.
std::string StripColon(std::string_view ident) {
  if (!ident.empty() && ident.front() == ':') ident.remove_prefix(1);
  return std::string(ident);
}

std::string Quoted(std::string_view s) {
  return Value::String(s).DebugString();
}

}  // namespace

EntityRef EntityRef::Id(EntityId id) {
  EntityRef r;
  r.kind = Kind::kId;
  r.id = id;
  return r;
}

EntityRef EntityRef::Ident(std::string ident) {
  EntityRef r;
  r.kind = Kind::kIdent;
  r.name = StripColon(ident);
  return r;
}

EntityRef EntityRef::TempId(std::string tempid) {
  EntityRef r;
  r.kind = Kind::kTempId;
  r.name = std::move(tempid);
  return r;
}

EntityRef EntityRef::LookupRef(std::string attr, Value value) {
  EntityRef r;
  r.kind = Kind::kLookupRef;
  r.lookup_attr = StripColon(attr);
  r.lookup_value = std::make_shared<const Value>(std::move(value));
  return r;
}

EntityRef EntityRef::TxTempId() {
  EntityRef r;
  r.kind = Kind::kTxTempId;
  r.name = "datomic.tx";
  return r;
}

std::string EntityRef::DebugString() const {
  switch (kind) {
    case Kind::kId:
      return absl::StrCat(id);
    case Kind::kIdent:
      return Value::Keyword(name).DebugString();
    case Kind::kTempId:
      // Tempids the tx-data parser made up for maps without :db/id start
      // with 0xFF; the user never wrote them, so do not show them.
      if (!name.empty() && name[0] == '\xFF') return "<map entity>";
      return Quoted(name);
    case Kind::kLookupRef: {
      std::string attr = lookup_attr_id != 0
                             ? absl::StrCat(lookup_attr_id)
                             : Value::Keyword(lookup_attr).DebugString();
      return absl::StrCat(
          "[", attr, " ",
          lookup_value ? lookup_value->DebugString() : std::string("nil"), "]");
    }
    case Kind::kTxTempId:
      return Quoted("datomic.tx");
  }
  return "#unknown-entity";
}

TxValue TxValue::Scalar(Value v) {
  TxValue t;
  t.kind = Kind::kScalar;
  t.scalar = std::move(v);
  return t;
}

TxValue TxValue::Entity(EntityRef e) {
  TxValue t;
  t.kind = Kind::kEntity;
  t.entity = std::move(e);
  return t;
}

std::string TxValue::DebugString() const {
  return kind == Kind::kScalar ? scalar.DebugString() : entity.DebugString();
}

std::string TxOp::DebugString() const {
  switch (kind) {
    case Kind::kAdd:
      return absl::StrCat("[:db/add ", e.DebugString(), " ", a.DebugString(),
                          " ", v.DebugString(), "]");
    case Kind::kRetract:
      return absl::StrCat("[:db/retract ", e.DebugString(), " ",
                          a.DebugString(), " ", v.DebugString(), "]");
    case Kind::kRetractAttr:
      return absl::StrCat("[:db/retract ", e.DebugString(), " ",
                          a.DebugString(), "]");
    case Kind::kRetractEntity:
      return absl::StrCat("[:db/retractEntity ", e.DebugString(), "]");
    case Kind::kCas:
      return absl::StrCat("[:db/cas ", e.DebugString(), " ", a.DebugString(),
                          " ", old_is_nil ? "nil" : old.DebugString(), " ",
                          v.DebugString(), "]");
  }
  return "#unknown-op";
}

}  // namespace mentat::storage
