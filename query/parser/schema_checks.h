#ifndef MENTAT_QUERY_PARSER_SCHEMA_CHECKS_H_
#define MENTAT_QUERY_PARSER_SCHEMA_CHECKS_H_

// The schema- and name-dependent parts of ValidateQuery: attribute
// constants, value types, and the names, arities and argument shapes of
// predicates and functions.

#include <string_view>

#include "absl/status/status.h"
#include "mentat/query/ast.h"
#include "mentat/storage/schema.h"

namespace mentat::query::parser {

// Checks the constants of a data pattern: the attribute is installed
// (reverse-looking names like :a/_b are let through), the entity is an id,
// an ident or a lookup ref on a unique attribute, the value fits the
// attribute's type, tx is an id and added a boolean.
[[nodiscard]] absl::Status CheckPatternConstants(const Clause& clause,
                                                 const storage::Schema& schema);

// Checks a predicate or function clause: the name is a built-in or one of
// the database functions the executor handles (ground get-else get-some
// missing? tuple untuple tx-ids tx-data fulltext identity), its number of
// arguments fits, and attribute arguments of the database functions name
// installed attributes.
[[nodiscard]] absl::Status CheckCall(const Clause& clause,
                                     const storage::Schema& schema);

// True if `name` is any built-in predicate or function, or a database
// function, whatever the arity (to explain a misplaced call).
bool IsKnownFunctionName(std::string_view name);

// Checks an aggregate of :find: name and arity (IsAggregate).
[[nodiscard]] absl::Status CheckAggregate(const FindElement& element);

}  // namespace mentat::query::parser

#endif  // MENTAT_QUERY_PARSER_SCHEMA_CHECKS_H_
