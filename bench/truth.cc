#include "truth.h"

namespace mentat::bench {

Truth ComputeTruth(const WorkloadScale& scale,
                   const std::set<int64_t>& probe_users) {
  Truth truth;
  std::vector<int64_t> changed;
  for (int64_t idx = 0; idx < scale.issues; ++idx) {
    const Issue issue = GenerateIssue(scale, idx);
    int final_state = issue.state;
    int new_state;
    if (HistoryChange(scale, idx, &new_state)) {
      final_state = new_state;
      changed.push_back(idx);
    }
    truth.states_initial[issue.state]++;
    truth.states_final[final_state]++;
    if (final_state == 0) {
      for (int p = 1; p <= issue.priority; ++p) truth.open_at_least[p]++;
    }
    if (probe_users.empty() || probe_users.contains(issue.assignee)) {
      truth.assigned[issue.assignee].push_back({idx, issue.state, final_state});
    }
  }
  truth.history_changes = static_cast<int64_t>(changed.size());
  // The loader commits changes in batches of 500 in issue order; the last
  // batch holds the remainder (or a full 500).
  const int64_t n = truth.history_changes;
  truth.changed_in_last_batch = n == 0 ? 0 : (n % 500 == 0 ? 500 : n % 500);
  return truth;
}

}  // namespace mentat::bench
