#ifndef MENTAT_QUERY_PARSER_FIND_PARSER_H_
#define MENTAT_QUERY_PARSER_FIND_PARSER_H_

// Parsing of :find: the four find-spec shapes and their elements
// (variables, aggregates, pull expressions).

#include <span>

#include "absl/status/status.h"
#include "mentat/edn/edn_value.h"
#include "mentat/query/ast.h"

namespace mentat::query::parser {

// One element: ?x, (agg const... ?x), (pull ?e pattern), (pull $s ?e p).
// Aggregate names are not checked here (ValidateQuery does).
[[nodiscard]] absl::Status ParseFindElement(const edn::EdnValue& v,
                                            FindElement* out);

// The forms after :find (`key` is the :find keyword, for messages):
// `?a ?b` relation, `[?a ...]` collection, `[?a ?b]` tuple, `?a .` scalar.
[[nodiscard]] absl::Status ParseFindSpec(const edn::EdnValue& key,
                                         std::span<const edn::EdnValue> items,
                                         FindSpec* out);

}  // namespace mentat::query::parser

#endif  // MENTAT_QUERY_PARSER_FIND_PARSER_H_
