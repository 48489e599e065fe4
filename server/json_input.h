#ifndef MENTAT_SERVER_JSON_INPUT_H_
#define MENTAT_SERVER_JSON_INPUT_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "mentat/edn/edn_value.h"

namespace mentat::server {

// Reads a query input given as JSON text (parsed with simdjson) as EDN,
// following the mapping documented on mentat.v1.Input: ":ns/name" strings
// are keywords ("::x" is the string ":x"), single-key objects whose key is a
// tag ({"#inst": ...}, {"#uuid": ...}, {"#ref": N}, {"#bigint": "..."},
// {"#bigdec": "..."}, {"#keyword": ...}, {"#symbol": ...}, {"#string": ...},
// {"#set": [...]}, {"#list": [...]}) are typed values, arrays vectors and
// other objects maps. InvalidArgument for malformed JSON (simdjson's
// reason), invalid UTF-8, nesting deeper than kMaxInputDepth, bad tagged
// values. `where` prefixes messages ("input 1"). Thread-safe.
absl::StatusOr<edn::EdnValue> JsonToEdn(std::string_view json,
                                        std::string_view where);

}  // namespace mentat::server

#endif  // MENTAT_SERVER_JSON_INPUT_H_
