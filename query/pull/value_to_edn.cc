// ValueToEdn (declared in pull.h): storage values as EDN.

#include <cstdint>
#include <string>
#include <string_view>

#include "mentat/query/pull.h"

namespace mentat::query {
namespace {

// Standard base64 (RFC 4648) with padding.
std::string Base64(std::string_view bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const uint32_t n = (static_cast<uint8_t>(bytes[i]) << 16) |
                       (static_cast<uint8_t>(bytes[i + 1]) << 8) |
                       static_cast<uint8_t>(bytes[i + 2]);
    out.push_back(kAlphabet[(n >> 18) & 63]);
    out.push_back(kAlphabet[(n >> 12) & 63]);
    out.push_back(kAlphabet[(n >> 6) & 63]);
    out.push_back(kAlphabet[n & 63]);
  }
  const size_t rest = bytes.size() - i;
  if (rest > 0) {
    uint32_t n = static_cast<uint8_t>(bytes[i]) << 16;
    if (rest == 2) n |= static_cast<uint8_t>(bytes[i + 1]) << 8;
    out.push_back(kAlphabet[(n >> 18) & 63]);
    out.push_back(kAlphabet[(n >> 12) & 63]);
    out.push_back(rest == 2 ? kAlphabet[(n >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
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
  }
  return EdnValue();
}

}  // namespace mentat::query
