#ifndef MENTAT_QUERY_BUILTINS_VALUE_TEXT_H_
#define MENTAT_QUERY_BUILTINS_VALUE_TEXT_H_

#include <string>

#include "mentat/edn/edn_value.h"
#include "mentat/storage/value.h"

namespace mentat::query::builtins {

// Appends what Clojure's `str` prints for `v`: strings raw, keywords with
// ':', longs and refs in decimal, doubles as Java prints them ("1.0",
// "1.0E10", "NaN", "Infinity"), bigints and bigdecs as their digits (no N
// or M), booleans, instants as RFC 3339 UTC (not Java's Date text), uuids
// in canonical form, bytes as #bytes "base64".
void AppendStrForm(const storage::Value& v, std::string* out);

// Java's Double.toString with shortest digits.
void AppendJavaDouble(double d, std::string* out);

// The EDN form of a value, for aggregate results: longs and refs are
// integers, keywords keywords, instants #inst, uuids #uuid, bigints N,
// bigdecs M, bytes a #bytes tagged base64 string.
edn::EdnValue ValueToEdnValue(const storage::Value& v);

}  // namespace mentat::query::builtins

#endif  // MENTAT_QUERY_BUILTINS_VALUE_TEXT_H_
