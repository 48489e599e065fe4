#ifndef MENTAT_BENCH_TRUTH_H_
#define MENTAT_BENCH_TRUTH_H_

#include <array>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "workload.h"

namespace mentat::bench {

// The expected answers of the workload's queries, computed from the
// generator alone (never from a database), for checking every answer.
struct Truth {
  // Issues per state before and after the history phase.
  std::array<int64_t, 5> states_initial{};
  std::array<int64_t, 5> states_final{};
  // Open issues (final state) with priority >= p, for p in 1..5.
  std::array<int64_t, 6> open_at_least{};
  // Per user: (issue index, initial state, final state) of assigned issues.
  std::map<int64_t, std::vector<std::array<int64_t, 3>>> assigned;
  // Distinct issues whose state changed after t_since, the final quarter
  // of the history changes (what since(t_since) sees).
  int64_t changed_after_since = 0;
  int64_t history_changes = 0;
};

// Computes the truth for `scale`, keeping the assigned issues of the users
// in `probe_users` (every user if empty). Two passes over the issues;
// nothing but the probe users' issues is kept.
Truth ComputeTruth(const WorkloadScale& scale,
                   const std::set<int64_t>& probe_users);

}  // namespace mentat::bench

#endif  // MENTAT_BENCH_TRUTH_H_
