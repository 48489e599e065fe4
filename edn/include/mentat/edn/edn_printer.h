#ifndef MENTAT_EDN_EDN_PRINTER_H_
#define MENTAT_EDN_EDN_PRINTER_H_

#include <cstddef>
#include <string>

#include "mentat/edn/edn_value.h"

namespace mentat::edn {

// Prints `value` as EDN text on one line that the reader reads back to an
// equal value: ParseEdn(PrintEdn(v)) == v for every value the reader can
// produce, and for values built in code whose texts obey the reader's rules
// (valid UTF-8, well-formed keyword and symbol names, char code points that
// are not surrogates).
//
//  - Floats: the shortest text that reads back to the same double, always
//    with a '.' or an exponent ("1.0", "1.5e-07"); ##Inf, ##-Inf, ##NaN.
//  - Strings: escapes for '"', '\', newline, tab, return, backspace,
//    formfeed, \uXXXX for other control characters; other bytes as is.
//  - Characters: \newline \return \space \tab \formfeed \backspace,
//    \uXXXX for other control characters, the character itself otherwise.
//  - Bigints with 'N', bigdecs with 'M'; #inst as RFC 3339 UTC (see
//    FormatInstant); #uuid in canonical lower case.
//  - Collections: elements separated by one space, map entries by ", ".
//
// Recursive in the depth of the value. Thread-safe.
std::string PrintEdn(const EdnValue& value);

// Appends the text of PrintEdn(value) to *out.
void PrintEdnTo(const EdnValue& value, std::string* out);

// For messages: PrintEdn(value) cut to at most about `max_bytes` bytes, with
// "..." appended when cut. Stops walking a large value early.
std::string PrintEdnAbbreviated(const EdnValue& value, size_t max_bytes);

}  // namespace mentat::edn

#endif  // MENTAT_EDN_EDN_PRINTER_H_
