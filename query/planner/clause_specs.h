#ifndef MENTAT_QUERY_PLANNER_CLAUSE_SPECS_H_
#define MENTAT_QUERY_PLANNER_CLAUSE_SPECS_H_

// Turning one clause of the AST into the spec of a step: constants
// resolved against the schema, variables as slots. Which slots are bound
// is filled in later, when the clause is placed.

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "mentat/query/ast.h"
#include "mentat/storage/schema.h"
#include "planner/plan.h"

namespace mentat::query::planner {

using SlotLookup = std::function<Slot(const std::string&)>;

// A status message as a std::string_view (Debian's abseil has its own
// string_view type).
inline std::string_view Msg(const absl::Status& s) {
  return std::string_view(s.message().data(), s.message().size());
}

// "line 3, column 9: " for a position, "" without one.
std::string Where(const Pos& pos);
// InvalidArgument "line L, column C: <message> in <clause>".
[[nodiscard]] absl::Status ClauseError(const Clause& clause,
                                       std::string_view message);

// The terms of a pattern (e, a, v, tx, added). Sets *never when a constant
// names no entity.
[[nodiscard]] absl::Status MakePattern(const Clause& clause,
                                       const storage::Schema& schema,
                                       const SlotLookup& slot, PatternSpec* out,
                                       bool* never);

// A predicate clause. Names and arities are ValidateQuery's to check.
// Errors: a source other than $ (a rule body's), a non-constant attribute
// of missing?.
[[nodiscard]] absl::Status MakePredicate(const Clause& clause,
                                         const storage::Schema& schema,
                                         const SlotLookup& slot,
                                         PredicateSpec* out);

// A function clause. Names and arities are ValidateQuery's to check.
// Errors: fulltext of an attribute that is not :db/fulltext, bad ground
// constants, a source other
// than $ (a rule body's; for tx-ids and tx-data, any other source: `$` is
// the log), non-constant attributes of get-else and get-some.
[[nodiscard]] absl::Status MakeFunction(const Clause& clause,
                                        const storage::Schema& schema,
                                        const SlotLookup& slot,
                                        FunctionSpec* out);

// The variable slots a predicate or function reads (must be bound first).
std::vector<Slot> ArgSlots(const std::vector<PlanTerm>& args);

// "<" -> 1, "<=" -> 2, ">" -> 3, ">=" -> 4 (with or without
// clojure.core/), else 0.
int ComparisonOp(std::string_view fn);

// Variables of a clause, nested clauses included (rule calls: their
// arguments), each once, in order of appearance.
void AllVars(const Clause& clause, std::vector<std::string>* out);
void AllVars(const std::vector<Clause>& clauses, std::vector<std::string>* out);

}  // namespace mentat::query::planner

#endif  // MENTAT_QUERY_PLANNER_CLAUSE_SPECS_H_
