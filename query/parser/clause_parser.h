#ifndef MENTAT_QUERY_PARSER_CLAUSE_PARSER_H_
#define MENTAT_QUERY_PARSER_CLAUSE_PARSER_H_

// Parsing of :where clauses, binding forms and rule definitions, shared by
// the query parser and the rule-set parser. Schema-free: names of
// attributes, functions and rules are checked by ValidateQuery.

#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "mentat/edn/edn_value.h"
#include "mentat/query/ast.h"

namespace mentat::query::parser {

// Parses one clause (data pattern, predicate, function, rule call, not,
// not-join, or, or-join, with an optional leading source). `and` is an
// error here: it is only allowed as an or branch.
[[nodiscard]] absl::Status ParseClause(const edn::EdnValue& form, Clause* out);

// Parses clauses in order, appending to *out.
[[nodiscard]] absl::Status ParseClauses(std::span<const edn::EdnValue> forms,
                                        std::vector<Clause>* out);

// A binding form: ?x, [?a ?b] (tuple), [?x ...] (collection), [[?a ?b]]
// (relation); `_` is allowed inside tuples and relations. `what` names the
// place for messages (":in", "the binding of (f ...)"). Duplicate
// variables are errors.
[[nodiscard]] absl::Status ParseBinding(const edn::EdnValue& form,
                                        std::string_view what, Binding* out);

// One rule definition [(name ?a [?req] ...) clause ...].
[[nodiscard]] absl::Status ParseRule(const edn::EdnValue& form, Rule* out);

// The names of the special list forms, which cannot name rules.
bool IsSpecialForm(std::string_view name);

}  // namespace mentat::query::parser

#endif  // MENTAT_QUERY_PARSER_CLAUSE_PARSER_H_
