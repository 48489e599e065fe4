#include "truth.h"

namespace mentat::bench {

Truth ComputeTruth(const WorkloadScale& scale,
                   const std::set<int64_t>& probe_users) {
  Truth truth;
  truth.history_changes = CountHistoryChanges(scale);
  const int64_t before = HistoryChangesBeforeSince(truth.history_changes);
  int64_t change = 0;  // position of the next change in the history
  for (int64_t idx = 0; idx < scale.issues; ++idx) {
    const Issue issue = GenerateIssue(scale, idx);
    int final_state = issue.state;
    int new_state;
    if (HistoryChange(scale, idx, &new_state)) {
      final_state = new_state;
      // Each issue changes at most once, so the changes after t_since are
      // as many distinct issues.
      if (change++ >= before) truth.changed_after_since++;
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
  return truth;
}

}  // namespace mentat::bench
