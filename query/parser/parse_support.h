#ifndef MENTAT_QUERY_PARSER_PARSE_SUPPORT_H_
#define MENTAT_QUERY_PARSER_PARSE_SUPPORT_H_

// Shared pieces of the Datalog parser and validator: positioned errors,
// short renderings of forms for messages, and the symbol classes of the
// query language (?vars, $sources, _).

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "mentat/edn/edn_value.h"
#include "mentat/query/ast.h"

namespace mentat::query::parser {

// Longest rendering of a user's form inside a message, and of Clause::text.
inline constexpr size_t kShowBytes = 80;
inline constexpr size_t kClauseTextBytes = 200;

inline Pos PosOf(const edn::EdnValue& v) { return Pos{v.line(), v.column()}; }

// InvalidArgument "line L, column C: <message>" (no prefix for line 0).
[[nodiscard]] absl::Status ErrorAt(Pos pos, std::string_view message);
[[nodiscard]] inline absl::Status ErrorAt(const edn::EdnValue& at,
                                          std::string_view message) {
  return ErrorAt(PosOf(at), message);
}

// A form printed for a message, cut to kShowBytes.
std::string Show(const edn::EdnValue& v);

// "a map", "an integer": the kind of a form, for messages.
std::string KindWithArticle(const edn::EdnValue& v);

// ?x (a '?' and at least one more character).
inline bool IsVariable(const edn::EdnValue& v) {
  return v.is_symbol() && v.text().size() > 1 && v.text()[0] == '?';
}
// _
inline bool IsBlank(const edn::EdnValue& v) {
  return v.is_symbol() && v.text() == "_";
}
// $ or $name
inline bool IsSourceSymbol(const edn::EdnValue& v) {
  return v.is_symbol() && !v.text().empty() && v.text()[0] == '$';
}
inline bool IsSymbol(const edn::EdnValue& v, std::string_view text) {
  return v.is_symbol() && v.text() == text;
}

// Where a term stands, which decides what it may be.
enum class TermPlace : uint8_t {
  kPattern,      // a data pattern: vars, _, constants
  kFunctionArg,  // a predicate or function argument: vars, $src, constants
  kRuleArg,      // a rule call argument: vars, _, constants
};

// Parses one term. `clause` is the enclosing form, named in messages.
// Errors: symbols that are not variables (or sources where allowed), lists
// (nested expressions), nil.
[[nodiscard]] absl::Status ParseTerm(const edn::EdnValue& v, TermPlace place,
                                     const edn::EdnValue& clause, Term* out);

}  // namespace mentat::query::parser

#endif  // MENTAT_QUERY_PARSER_PARSE_SUPPORT_H_
