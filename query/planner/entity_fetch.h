#ifndef MENTAT_QUERY_PLANNER_ENTITY_FETCH_H_
#define MENTAT_QUERY_PLANNER_ENTITY_FETCH_H_

#include "planner/plan.h"

namespace mentat::query::planner {

// Merges runs of consecutive pattern steps [?e :a ?v] that look up
// cardinality-one attributes of the same bound entity (EAVT e+a, a fresh
// or blank value, no tx or added) into one kFetch step: the executor then
// seeks the entity once and walks its datoms, instead of seeking once per
// attribute.
void FuseEntityLookups(ScopePlan* scope);

}  // namespace mentat::query::planner

#endif  // MENTAT_QUERY_PLANNER_ENTITY_FETCH_H_
