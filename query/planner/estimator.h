#ifndef MENTAT_QUERY_PLANNER_ESTIMATOR_H_
#define MENTAT_QUERY_PLANNER_ESTIMATOR_H_

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "mentat/storage/schema.h"
#include "mentat/storage/statistics.h"
#include "mentat/storage/value.h"

namespace mentat::query::planner {

// Cost-model constants, in "datoms read" units: a seek costs about as much
// as reading this many datoms in a row.
inline constexpr double kSeekCost = 12;
// Building a hash join's side costs this many datoms read per datom
// hashed, probing it this many per row (kHashBuildCost and kHashProbeCost
// weigh a hash join against a walk in entity order alone; elsewhere a
// hash join costs its datoms plus its rows).
inline constexpr double kHashBuildCost = 3;
inline constexpr double kHashProbeCost = 2;
// A walk of an attribute in entity order (PatternSpec::entity_order)
// needs at least this many rows, at most this many of the attribute's
// datoms per row on average.
inline constexpr double kOrderedMinRows = 1000;
inline constexpr double kOrderedMaxGap = 4 * kSeekCost;
// Rows a guessed-at comparison predicate keeps.
inline constexpr double kRangeGuess = 1.0 / 3;
inline constexpr double kPredicateGuess = 0.5;

// Cardinality estimates from the per-attribute statistics. Records the
// datom count of every attribute it looked at (the plan is re-made when
// those move by more than 2x). Not thread-safe; one per planning.
class Estimator {
 public:
  Estimator(const storage::Schema& schema, const storage::Statistics& stats)
      : schema_(schema), stats_(stats) {}

  // Current datoms of `a`.
  double Datoms(storage::EntityId a);
  // Datoms of `a` with value `v`; `v` null means "some value not known
  // while planning".
  double PerValue(const storage::Attribute& a, const storage::Value* v);
  // Values of `a` per entity that has it.
  double PerEntity(const storage::Attribute& a);
  // The fraction of `a`'s datoms whose value lies within the bounds
  // (a null bound: open, or a bound not known while planning).
  double RangeFraction(const storage::Attribute& a, const storage::Value* lower,
                       bool lower_inclusive, bool has_lower,
                       const storage::Value* upper, bool upper_inclusive,
                       bool has_upper);

  const std::vector<std::pair<storage::EntityId, int64_t>>& used() const {
    return used_;
  }

 private:
  const storage::AttributeStats* Stats(storage::EntityId a);

  const storage::Schema& schema_;
  const storage::Statistics& stats_;
  std::vector<std::pair<storage::EntityId, int64_t>> used_;
};

}  // namespace mentat::query::planner

#endif  // MENTAT_QUERY_PLANNER_ESTIMATOR_H_
