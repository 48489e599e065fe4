#ifndef MENTAT_SERVER_VALUE_CONVERT_H_
#define MENTAT_SERVER_VALUE_CONVERT_H_

// Translation between the wire's typed values (mentat.v1.Value) and the
// engine's types (storage::Value, edn::EdnValue). The edge of the server:
// nothing below server/ sees protobuf.

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "mentat/edn/edn_value.h"
#include "mentat/storage/datom.h"
#include "mentat/storage/schema.h"
#include "mentat/storage/value.h"
#include "mentat/v1/mentat.pb.h"

namespace mentat::server {

namespace pb = ::mentat::v1;

// Deepest nesting accepted in typed and JSON inputs (as the EDN reader's).
inline constexpr int kMaxInputDepth = 512;

// A storage value as a wire value (refs as `ref`).
void StorageToProto(const storage::Value& v, pb::Value* out);
void DatomToProto(const storage::Datom& d, pb::Datom* out);

// An EDN value (a query row cell, a pull map) as a wire value. Integers
// become long_value; #bytes "<base64>" becomes bytes_value; other tags stay
// tagged. Recursive in the value's depth (bounded by the reader).
void EdnToProto(const edn::EdnValue& v, pb::Value* out);

// A wire value as EDN, for query inputs. InvalidArgument for an unset
// value, invalid UTF-8, a malformed uuid, bigint or bigdec, or nesting
// deeper than kMaxInputDepth. `where` names the value in messages
// ("input 2").
[[nodiscard]] absl::StatusOr<edn::EdnValue> ProtoToEdn(const pb::Value& v,
                                                       std::string_view where);

// A query input (EDN text, typed value or JSON) as EDN.
[[nodiscard]] absl::StatusOr<edn::EdnValue> InputToEdn(const pb::Input& input,
                                                       std::string_view where);

// A wire value as a storage value of attribute `attr`'s type: a long is
// accepted for double, ref, bigint and bigdec; a keyword for a ref is an
// ident (NotFound if unknown). InvalidArgument on other mismatches.
[[nodiscard]] absl::StatusOr<storage::Value> ProtoToAttributeValue(
    const pb::Value& v, const storage::Attribute& attr,
    const storage::Schema& schema, std::string_view where);

// Standard base64 with padding; decoding returns false on bad input.
std::string Base64Encode(std::string_view bytes);
bool Base64Decode(std::string_view text, std::string* out);

}  // namespace mentat::server

#endif  // MENTAT_SERVER_VALUE_CONVERT_H_
