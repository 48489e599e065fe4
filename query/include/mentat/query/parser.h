#ifndef MENTAT_QUERY_PARSER_H_
#define MENTAT_QUERY_PARSER_H_

#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "mentat/edn/edn_value.h"
#include "mentat/query/ast.h"
#include "mentat/storage/schema.h"

namespace mentat::query {

// Parses a query given as EDN text, in vector form
// ([:find ... :in ... :with ... :where ...]) or map form
// ({:find [...] :in [...] :where [...]}), with Mentat's :order, :limit and
// :offset. Syntax errors are InvalidArgument naming the clause and its
// line/column ("line 1, column 30: ...").
[[nodiscard]] absl::StatusOr<ParsedQuery> ParseQuery(std::string_view text);
[[nodiscard]] absl::StatusOr<ParsedQuery> ParseQuery(const edn::EdnValue& form);

// Parses a rule set (the `%` input): a vector of [(name ?a ...) clause ...].
[[nodiscard]] absl::StatusOr<std::vector<Rule>> ParseRules(
    const edn::EdnValue& rules);
[[nodiscard]] absl::StatusOr<std::vector<Rule>> ParseRules(
    std::string_view text);

// Checks a parsed query against a schema and its rules, before planning:
// every :find and :with variable is bound somewhere in :in or :where; an
// attribute constant names an installed attribute; a constant value has
// the attribute's type (a keyword for a ref is an ident); rule calls name a
// defined rule with the right arity; or branches bind the same variables;
// not-join/or-join variables occur in their clauses; built-in functions
// and predicates exist and get a valid number of arguments. Each error is
// InvalidArgument naming the clause and its position.
[[nodiscard]] absl::Status ValidateQuery(const ParsedQuery& query,
                                         const storage::Schema& schema,
                                         const std::vector<Rule>& rules);

}  // namespace mentat::query

#endif  // MENTAT_QUERY_PARSER_H_
