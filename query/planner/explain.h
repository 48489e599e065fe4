#ifndef MENTAT_QUERY_PLANNER_EXPLAIN_H_
#define MENTAT_QUERY_PLANNER_EXPLAIN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "planner/plan.h"

namespace mentat::query::planner {

// What a profiled run measured.
struct PlanProfile {
  struct Step {
    uint64_t rows = 0;
    int64_t nanos = 0;   // inclusive of the steps after it
    std::string ran_as;  // the executor's change of access path, if any
  };
  std::vector<Step> steps;  // one per :where step, then the projection
  uint64_t result_rows = 0;
  int64_t total_nanos = 0;
  bool used_statistics = false;
  // Counted by one pass over the attribute's AVET keys (CountByScan).
  bool counted_by_scan = false;
};

// The plan as text: one line per step (clause, access path, variables it
// binds, filters, estimated rows), then the projection, and the rule
// tables the steps call. With a profile, each step line also gets the rows
// it produced and the time spent in it (its own, without the later steps).
std::string ExplainPlan(const QueryPlan& plan, const PlanProfile* profile);

}  // namespace mentat::query::planner

#endif  // MENTAT_QUERY_PLANNER_EXPLAIN_H_
