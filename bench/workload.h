#ifndef MENTAT_BENCH_WORKLOAD_H_
#define MENTAT_BENCH_WORKLOAD_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mentat/storage/tx_op.h"

namespace mentat::bench {

// The issue-tracker workload of ../shared/workload/WORKLOAD.md, generated
// deterministically: every record is a pure function of (scale, index), so
// any number of threads produce the same data.

struct WorkloadScale {
  std::string name;
  int64_t users = 0;
  int64_t issues = 0;
  int64_t labels = 0;
};

// xs, s, m, l, xl; false for an unknown name.
bool ScaleByName(std::string_view name, WorkloadScale* out);

inline constexpr const char* kStates[] = {"state/open", "state/in-progress",
                                          "state/closed", "state/resolved",
                                          "state/reopened"};
inline constexpr const char* kTitleWords[] = {
    "crash", "ui glitch", "perf regression", "typo", "feature request"};

struct Issue {
  int64_t idx = 0;
  std::string title;
  int state = 0;  // index into kStates
  int64_t priority = 1;
  int64_t assignee = 0;  // user index
  int64_t reporter = 0;
  int64_t created_at_micros = 0;
  std::vector<int64_t> labels;  // distinct label indexes
};

Issue GenerateIssue(const WorkloadScale& scale, int64_t idx);

// The later :issue/state change of issue `idx`, if it gets one (about 5%
// of issues): the new state, different from the initial one.
bool HistoryChange(const WorkloadScale& scale, int64_t idx, int* new_state);

// The history phase commits the changes in issue order, in transactions of
// kHistoryChangesPerTx, with a transaction boundary where the final
// quarter of the changes starts: t_since is the last tx before it, so
// about 1.25% of all issues change after t_since, whatever the scale.
inline constexpr int64_t kHistoryChangesPerTx = 500;

// The number of issues that get a history change. A pass over the issues
// that keeps nothing in memory.
int64_t CountHistoryChanges(const WorkloadScale& scale);

// Of `changes` history changes, how many come before t_since (the final
// quarter, changes / 4, follows it).
inline int64_t HistoryChangesBeforeSince(int64_t changes) {
  return changes - changes / 4;
}

// True if a history transaction ends after the change at position `i`
// (from 0) of `changes`, of which `before` precede t_since.
inline bool EndsHistoryTx(int64_t i, int64_t changes, int64_t before) {
  const int64_t start = i < before ? 0 : before;
  return i + 1 == changes || i + 1 == before ||
         (i + 1 - start) % kHistoryChangesPerTx == 0;
}

std::string UserEmail(int64_t k);
std::string UserName(int64_t k);
std::string LabelName(int64_t k);

// Tx ops: the schema (schema.edn), users [begin, end), labels, issues
// [begin, end) with lookup refs for users and labels, and state changes.
std::vector<storage::TxOp> SchemaOps();
std::vector<storage::TxOp> UserOps(int64_t begin, int64_t end);
std::vector<storage::TxOp> LabelOps(int64_t begin, int64_t end);
std::vector<storage::TxOp> IssueOps(const WorkloadScale& scale, int64_t begin,
                                    int64_t end);
// A state change of issue `idx` (identified by its title through a lookup
// ref would need a unique title, so callers pass the entity id).
storage::TxOp StateChangeOp(storage::EntityId issue, int new_state);

}  // namespace mentat::bench

#endif  // MENTAT_BENCH_WORKLOAD_H_
