#ifndef MENTAT_QUERY_PARSER_PARSER_TEST_SUPPORT_H_
#define MENTAT_QUERY_PARSER_PARSER_TEST_SUPPORT_H_

// Helpers for the parser's tests.

#include <doctest/doctest.h>

#include <string>
#include <string_view>

#include "mentat/base/str_cat.h"
#include "mentat/query/parser.h"

namespace mentat::query::testing {

inline ParsedQuery MustParse(std::string_view text) {
  absl::StatusOr<ParsedQuery> q = ParseQuery(text);
  INFO(text);
  REQUIRE_MESSAGE(q.ok(), q.status().ToString());
  return *std::move(q);
}

// The message of a failed parse; fails the test if the parse succeeds or
// the error is not InvalidArgument.
inline std::string ParseError(std::string_view text) {
  absl::StatusOr<ParsedQuery> q = ParseQuery(text);
  INFO(text);
  REQUIRE(!q.ok());
  CHECK(q.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(q.status().message());
}

// Checks that `message` starts with "line L, column C: " and contains
// `part`.
inline void CheckMessage(const std::string& message, int line, int column,
                         std::string_view part) {
  INFO(message);
  const std::string prefix = StrCat("line ", line, ", column ", column, ": ");
  CHECK(message.rfind(prefix, 0) == 0);
  CHECK(message.find(part) != std::string::npos);
}

inline void CheckParseError(std::string_view text, int line, int column,
                            std::string_view part) {
  CheckMessage(ParseError(text), line, column, part);
}

// The same, for a one-line query, with the column where `at` first occurs.
inline void CheckParseErrorAt(std::string_view text, std::string_view at,
                              std::string_view part) {
  const size_t where = text.find(at);
  REQUIRE(where != std::string_view::npos);
  CheckParseError(text, 1, static_cast<int>(where) + 1, part);
}

}  // namespace mentat::query::testing

#endif  // MENTAT_QUERY_PARSER_PARSER_TEST_SUPPORT_H_
