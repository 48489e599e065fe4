#include "message_size.h"

#include <algorithm>

#include "mentat/base/str_cat.h"

namespace mentat::server {

namespace {

// A value's tag, length and a number; a datom's e, a, tx and added.
constexpr size_t kScalarBytes = 12;
constexpr size_t kDatomBytes = 40;
// What a message holds besides its items: basis, resume token, columns.
constexpr size_t kMessageOverheadBytes = 4096;

}  // namespace

size_t TargetMessageBytes(const ServerConfig& config) {
  return std::min<size_t>(size_t{256} << 10,
                          static_cast<size_t>(config.max_message_bytes) / 4);
}

size_t MaxItemBytes(const ServerConfig& config) {
  const size_t max = static_cast<size_t>(config.max_message_bytes);
  return max > 2 * kMessageOverheadBytes ? max - kMessageOverheadBytes
                                         : max / 2;
}

size_t ApproxProtoBytes(const storage::Value& v) {
  switch (v.type()) {
    case storage::ValueType::kString:
    case storage::ValueType::kKeyword:
    case storage::ValueType::kBytes:
    case storage::ValueType::kUri:
    case storage::ValueType::kSymbol:
    case storage::ValueType::kBigInt:
    case storage::ValueType::kBigDec:
    case storage::ValueType::kUuid:
      return kScalarBytes + v.text().size();
    default:
      return kScalarBytes;
  }
}

size_t ApproxProtoBytes(const storage::Datom& d) {
  return kDatomBytes + ApproxProtoBytes(d.v);
}

size_t ApproxProtoBytes(const edn::EdnValue& v) {
  if (v.is_collection() || v.is_tagged()) {
    size_t bytes = kScalarBytes;
    for (const edn::EdnValue& item : v.items()) bytes += ApproxProtoBytes(item);
    return bytes;
  }
  return kScalarBytes + v.text().size();
}

std::string TooBigForAMessage(const storage::Datom& datom,
                              const ServerConfig& config) {
  return StrCat("datom ", datom.DebugString(), " holds about ",
                ApproxProtoBytes(datom),
                " bytes, more than the largest message the server sends (",
                config.max_message_bytes,
                " bytes, --max-message-bytes); it was stored before "
                "--max-value-bytes bounded values: restart the server with a "
                "larger --max-message-bytes (and raise the client's receive "
                "limit) to read it");
}

}  // namespace mentat::server
