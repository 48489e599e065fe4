#ifndef MENTAT_EDN_EDN_TOKENS_H_
#define MENTAT_EDN_EDN_TOKENS_H_

#include <string_view>

#include "absl/status/status.h"
#include "mentat/edn/edn_value.h"

namespace mentat::edn {

// The rules for EDN's bare tokens, shared by the reader and by anything
// else that must accept or produce the same names and numbers (the Datalog
// parser, code that builds keywords). Messages carry no position; the
// reader adds it.

// True if `token` is read as a number: it starts with a digit, or with '+'
// or '-' followed by a digit.
bool IsEdnNumberToken(std::string_view token);

// Reads a number token (IsEdnNumberToken) into *out: kInt, kBigInt ('N', or
// too large for int64), kFloat, or kBigDec ('M'). Replaces *out, position
// included. InvalidArgument "invalid number <token>: <why>" for leading
// zeros, ratios, a missing exponent, a float beyond the double range, or
// stray characters.
[[nodiscard]] absl::Status ParseEdnNumber(std::string_view token,
                                          EdnValue* out);

// Checks a symbol's text ("name" or "ns/name", "/" alone allowed).
// InvalidArgument "invalid symbol <text>: <why>" if it breaks the EDN
// rules: a part empty or starting with a digit, ':' or '#', or with '+',
// '-' or '.' followed by a digit; more than one '/'; invalid UTF-8. Does not
// check which characters occur (the reader's tokenizer does).
[[nodiscard]] absl::Status CheckEdnSymbolName(std::string_view text);

// The same for a keyword's text after the ':' ("a/b" for :a/b), which must
// also be non-empty, not start with ':' ("::x") and not be "/".
[[nodiscard]] absl::Status CheckEdnKeywordName(std::string_view text);

}  // namespace mentat::edn

#endif  // MENTAT_EDN_EDN_TOKENS_H_
