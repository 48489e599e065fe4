// ValueToEdn (declared in pull.h): storage values as EDN.

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/strings/escaping.h"
#include "mentat/query/pull.h"

namespace mentat::query {
namespace {

// Standard base64 (RFC 4648) with padding.
std::string Base64(std::string_view bytes) {
  return absl::Base64Escape(absl::string_view(bytes.data(), bytes.size()));
}

}  // namespace

edn::EdnValue ValueToEdn(const storage::Value& v) {
  using edn::EdnValue;
  using storage::ValueType;
  switch (v.type()) {
    case ValueType::kRef:
    case ValueType::kLong:
      return EdnValue::Int(v.as_long());
    case ValueType::kBoolean:
      return EdnValue::Bool(v.as_bool());
    case ValueType::kDouble:
      return EdnValue::Float(v.as_double());
    case ValueType::kInstant:
      return EdnValue::Inst(v.as_long());
    case ValueType::kUuid:
      return EdnValue::Uuid(v.text());
    case ValueType::kKeyword:
      return EdnValue::Keyword(v.text());
    case ValueType::kString:
      return EdnValue::String(v.text());
    case ValueType::kBigInt:
      return EdnValue::BigInt(v.text());
    case ValueType::kBigDec:
      return EdnValue::BigDec(v.text());
    case ValueType::kBytes:
      return EdnValue::Tagged("bytes", EdnValue::String(Base64(v.text())));
    case ValueType::kUri:
      return EdnValue::Tagged("uri", EdnValue::String(v.text()));
    case ValueType::kSymbol:
      return EdnValue::Symbol(v.text());
  }
  return EdnValue();
}

}  // namespace mentat::query
