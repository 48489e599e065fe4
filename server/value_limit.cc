#include "value_limit.h"

#include <string>

#include "mentat/base/str_cat.h"

namespace mentat::server {

namespace {

// The size a value occupies beyond its fixed-size part.
size_t TextBytes(const storage::Value& v) {
  switch (v.type()) {
    case storage::ValueType::kString:
    case storage::ValueType::kKeyword:
    case storage::ValueType::kBytes:
    case storage::ValueType::kUri:
    case storage::ValueType::kSymbol:
    case storage::ValueType::kBigInt:
    case storage::ValueType::kBigDec:
      return v.text().size();
    default:
      return 0;
  }
}

// What is over the limit in `ref`, or empty.
std::string Oversized(const storage::EntityRef& ref, size_t max_bytes,
                      size_t* bytes) {
  switch (ref.kind) {
    case storage::EntityRef::Kind::kTempId:
    case storage::EntityRef::Kind::kIdent:
      if (ref.name.size() > max_bytes) {
        *bytes = ref.name.size();
        return ref.kind == storage::EntityRef::Kind::kTempId ? "a tempid"
                                                             : "an ident";
      }
      return std::string();
    case storage::EntityRef::Kind::kLookupRef:
      if (ref.lookup_value != nullptr &&
          TextBytes(*ref.lookup_value) > max_bytes) {
        *bytes = TextBytes(*ref.lookup_value);
        return "a lookup ref's value";
      }
      return std::string();
    default:
      return std::string();
  }
}

std::string Oversized(const storage::TxValue& v, size_t max_bytes,
                      size_t* bytes) {
  if (v.kind == storage::TxValue::Kind::kEntity) {
    return Oversized(v.entity, max_bytes, bytes);
  }
  if (TextBytes(v.scalar) > max_bytes) {
    *bytes = TextBytes(v.scalar);
    return StrCat("a ", storage::ValueTypeIdent(v.scalar.type()), " value");
  }
  return std::string();
}

}  // namespace

[[nodiscard]] absl::Status CheckValueSizes(const storage::TxRequest& request,
                                           size_t max_bytes) {
  for (const storage::TxOp& op : request.ops) {
    size_t bytes = 0;
    std::string what = Oversized(op.e, max_bytes, &bytes);
    if (what.empty()) what = Oversized(op.a, max_bytes, &bytes);
    if (what.empty()) what = Oversized(op.v, max_bytes, &bytes);
    if (what.empty() && op.kind == storage::TxOp::Kind::kCas &&
        !op.old_is_nil) {
      what = Oversized(op.old, max_bytes, &bytes);
    }
    if (what.empty()) continue;
    std::string message;
    if (op.pos.line > 0) {
      StrAppend(&message, "line ", op.pos.line, ", column ", op.pos.column,
                ": ");
    }
    StrAppend(&message, what, " of ", bytes, " bytes is over the limit of ",
              max_bytes, " bytes per value (--max-value-bytes) in ",
              op.DebugString());
    return absl::InvalidArgumentError(message);
  }
  return absl::OkStatus();
}

}  // namespace mentat::server
