#ifndef MENTAT_EDN_JSON_EDN_H_
#define MENTAT_EDN_JSON_EDN_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "mentat/edn/edn_value.h"

namespace mentat::edn {

// How JsonToEdn treats its input.
struct JsonReadOptions {
  // Deepest allowed nesting of arrays and objects (values are walked
  // recursively, as EdnReadOptions::max_depth says).
  int max_depth = 512;
};

// Reads one JSON document (parsed with simdjson) as an EDN value, with the
// mapping documented on mentat.v1.Input, which the server applies to JSON
// query inputs and the shell to NDJSON imports:
//  - ":ns/name" strings are keywords ("::x" is the string ":x"); other
//    strings are strings;
//  - objects with one key that is a tag are typed values: {"#inst": text
//    or microseconds}, {"#uuid": text}, {"#ref": N}, {"#bigint": text or
//    integer}, {"#bigdec": text}, {"#keyword": ...}, {"#symbol": ...},
//    {"#string": ...}, {"#uri": text} (#uri "text"), {"#set": [...]},
//    {"#list": [...]};
//  - arrays are vectors, other objects maps (their keys mapped as strings
//    are); integers beyond int64 are bigints.
// Keywords and symbols must be names the EDN reader reads back, so that
// PrintEdn of the result always reads.
//
// Errors: InvalidArgument "<where> (JSON): <what>" for malformed JSON
// (simdjson's reason), invalid UTF-8, nesting deeper than
// options.max_depth, bad tagged values, duplicate keys or set elements.
// Thread-safe (a simdjson parser per thread, reused between calls).
[[nodiscard]] absl::StatusOr<EdnValue> JsonToEdn(
    std::string_view json, std::string_view where,
    const JsonReadOptions& options = {});

}  // namespace mentat::edn

#endif  // MENTAT_EDN_JSON_EDN_H_
