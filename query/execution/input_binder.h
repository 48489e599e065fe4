#ifndef MENTAT_QUERY_EXECUTION_INPUT_BINDER_H_
#define MENTAT_QUERY_EXECUTION_INPUT_BINDER_H_

#include <vector>

#include "absl/status/status.h"
#include "execution/batch.h"
#include "execution/exec_context.h"
#include "mentat/edn/edn_value.h"
#include "planner/plan.h"

namespace mentat::query::execution {

// Turns the :in values (after the sources and rules) into the first rows
// of the :where scope: scalars and tuples fill their slots in every row,
// collections and relations multiply the rows (their elements made
// distinct first). Values are converted by how the query uses each
// variable: entity positions take ids, idents and lookup refs; attribute
// positions idents; typed value positions the attribute's type.
//
// An ident or lookup ref that names no entity matches nothing (the
// element is dropped; a scalar leaves no rows). InvalidArgument for a
// wrong number of inputs, a wrong shape (a scalar where a collection is
// declared), or a value of the wrong type; the message names the input.
[[nodiscard]] absl::Status BindInputs(ExecContext* ctx,
                                      const planner::QueryPlan& plan,
                                      const std::vector<edn::EdnValue>& inputs,
                                      Batch* rows);

}  // namespace mentat::query::execution

#endif  // MENTAT_QUERY_EXECUTION_INPUT_BINDER_H_
