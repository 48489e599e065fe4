#include "planner/estimator.h"

#include <algorithm>

#include "builtins/value_compare.h"

namespace mentat::query::planner {

using storage::Value;

const storage::AttributeStats* Estimator::Stats(storage::EntityId a) {
  const storage::AttributeStats* s = stats_.Find(a);
  const int64_t n = s == nullptr ? 0 : s->datoms;
  bool seen = false;
  for (const auto& [id, count] : used_) seen |= id == a;
  if (!seen) used_.emplace_back(a, n);
  return s;
}

double Estimator::Datoms(storage::EntityId a) {
  const storage::AttributeStats* s = Stats(a);
  return s == nullptr ? 0 : static_cast<double>(s->datoms);
}

double Estimator::PerValue(const storage::Attribute& a, const Value* v) {
  const storage::AttributeStats* s = Stats(a.id);
  if (s == nullptr || s->datoms == 0) return 0.1;
  if (a.unique != storage::Unique::kNone) return 1;
  if (v != nullptr && s->values_tracked) {
    auto it = s->value_counts.find(*v);
    // Not there: the value has no datom now. Keep a little weight, as the
    // plan outlives this snapshot.
    return it == s->value_counts.end() ? 0.1 : static_cast<double>(it->second);
  }
  const double distinct =
      static_cast<double>(std::max<int64_t>(1, s->distinct_values));
  return std::max(1.0, static_cast<double>(s->datoms) / distinct);
}

double Estimator::PerEntity(const storage::Attribute& a) {
  Stats(a.id);
  return a.many() ? 3 : 1;
}

double Estimator::RangeFraction(const storage::Attribute& a, const Value* lower,
                                bool lower_inclusive, bool has_lower,
                                const Value* upper, bool upper_inclusive,
                                bool has_upper) {
  const storage::AttributeStats* s = Stats(a.id);
  const bool lower_known = !has_lower || lower != nullptr;
  const bool upper_known = !has_upper || upper != nullptr;
  if (s != nullptr && s->datoms > 0 && s->values_tracked && lower_known &&
      upper_known && !s->value_counts.empty()) {
    int64_t in = 0;
    for (const auto& [v, count] : s->value_counts) {
      if (lower != nullptr) {
        auto c = builtins::CompareForPredicate(v, *lower);
        if (!(c > 0 || (lower_inclusive && c == 0))) continue;
      }
      if (upper != nullptr) {
        auto c = builtins::CompareForPredicate(v, *upper);
        if (!(c < 0 || (upper_inclusive && c == 0))) continue;
      }
      in += count;
    }
    return std::max(0.001,
                    static_cast<double>(in) / static_cast<double>(s->datoms));
  }
  double f = 1;
  if (has_lower) f *= kRangeGuess;
  if (has_upper) f *= kRangeGuess;
  return f;
}

}  // namespace mentat::query::planner
