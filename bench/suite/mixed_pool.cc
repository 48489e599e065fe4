#include "suite/mixed_pool.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <set>

#include "mentat/base/str_cat.h"

namespace mentat::bench {
namespace {

// Enough members that 64 writers can each hold four (one open) without
// waiting, few enough that since(t_since) grows by at most 512 rows (1,634
// at s).
constexpr int64_t kPoolSize = 512;
constexpr char kHeader[] = "mixed-pool 1";

std::string StatePath(const std::string& data, const std::string& database) {
  return data + "/mixed-" + database + ".state";
}

}  // namespace

absl::StatusOr<MixedPool> MixedPool::Open(
    const std::string& data, const std::string& database,
    const WorkloadScale& scale, const std::vector<int64_t>& probes,
    const std::vector<int64_t>& issue_ids) {
  MixedPool pool;
  pool.path_ = StatePath(data, database);
  pool.member_of_.assign(static_cast<size_t>(scale.issues), false);
  const std::set<int64_t> probe_set(probes.begin(), probes.end());
  // Spread over the issue range: the first eligible issue at or after each
  // of kPoolSize evenly spaced starts.
  const int64_t n = std::min(kPoolSize, scale.issues);
  int64_t next = 0;
  for (int64_t k = 0; k < n; ++k) {
    int64_t idx = std::max(next, k * scale.issues / n);
    for (; idx < scale.issues; ++idx) {
      int changed;
      if (HistoryChange(scale, idx, &changed)) continue;
      const Issue issue = GenerateIssue(scale, idx);
      if (probe_set.contains(issue.assignee)) continue;
      Member m;
      m.idx = idx;
      m.id = issue_ids[static_cast<size_t>(idx)];
      m.state = issue.state;
      m.priority = issue.priority;
      pool.members_.push_back(m);
      pool.member_of_[static_cast<size_t>(idx)] = true;
      break;
    }
    next = idx + 1;
  }

  std::ifstream in(pool.path_);
  if (!in) return pool;  // nothing written since the load
  std::string header;
  std::getline(in, header);
  int unfinished = 1;
  std::string key;
  in >> key >> unfinished;
  if (header != kHeader || key != "unfinished") {
    return absl::DataLossError(StrCat(pool.path_, " is malformed"));
  }
  if (unfinished != 0) {
    return absl::FailedPreconditionError(
        StrCat(pool.path_,
               ": an earlier mixed run did not finish, so the database may "
               "hold writes this file does not know; load the dataset again"));
  }
  for (Member& m : pool.members_) {
    int64_t idx = -1, priority = 0;
    int state = -1, changed = 0;
    if (!(in >> idx >> state >> priority >> changed) || idx != m.idx ||
        state < 0 || state > 4) {
      return absl::DataLossError(
          StrCat(pool.path_, " does not match this dataset's pool"));
    }
    m.state = state;
    m.priority = priority;
    m.changed_after_since = changed != 0;
  }
  return pool;
}

void MixedPool::Forget(const std::string& data, const std::string& database) {
  std::remove(StatePath(data, database).c_str());
}

absl::Status MixedPool::Save(bool unfinished) const {
  std::ofstream out(path_, std::ios::trunc);
  out << kHeader << "\nunfinished " << (unfinished ? 1 : 0) << "\n";
  for (const Member& m : members_) {
    out << m.idx << " " << m.state << " " << m.priority << " "
        << (m.changed_after_since ? 1 : 0) << "\n";
  }
  out.close();
  if (!out) return absl::UnavailableError(StrCat("cannot write ", path_));
  return absl::OkStatus();
}

int64_t MixedPool::ChangedAfterSince() const {
  return std::count_if(members_.begin(), members_.end(),
                       [](const Member& m) { return m.changed_after_since; });
}

}  // namespace mentat::bench
