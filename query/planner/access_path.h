#ifndef MENTAT_QUERY_PLANNER_ACCESS_PATH_H_
#define MENTAT_QUERY_PLANNER_ACCESS_PATH_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "planner/estimator.h"
#include "planner/plan.h"

namespace mentat::query::planner {

// Comparison predicates that can narrow an AVET scan of a pattern's
// value: at most one lower and one upper bound.
struct RangeCandidate {
  std::optional<RangeBound> lower, upper;
  std::vector<int> predicates;  // indexes of the predicates used
};

// How a pattern is read, given which of its positions are known.
struct Access {
  bool usable = false;
  storage::IndexOrder index = storage::IndexOrder::kEavt;
  int prefix_len = 0;
  double per_row = 0;    // datoms read per row (estimated)
  RangeCandidate range;  // the bounds used (AVET with the attribute only)
  std::string description;
};

using KnownFn = std::function<bool(const PlanTerm&)>;

// The index whose prefix covers the most known positions: e -> EAVT,
// a+v -> AVET, a alone -> AVET range or AEVT, v alone -> VAET. Unusable
// when nothing is known (a whole-database scan).
Access ChooseAccess(const PatternSpec& pattern, const KnownFn& known,
                    const RangeCandidate& range, Estimator& estimator);

// Types whose encoded order is the order of the comparison predicates.
bool RangeableType(storage::ValueType type);

}  // namespace mentat::query::planner

#endif  // MENTAT_QUERY_PLANNER_ACCESS_PATH_H_
