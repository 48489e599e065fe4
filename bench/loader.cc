#include "loader.h"

#include <chrono>
#include <deque>
#include <fstream>
#include <future>

#include "mentat/base/str_cat.h"

namespace mentat::bench {
namespace {

using Clock = std::chrono::steady_clock;
using storage::TxReport;
using storage::TxRequest;

double Seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

// bench-meta.txt's format: 2 since t_since precedes the final quarter of
// the history changes (1 put it before the last history batch).
constexpr int64_t kLoadMetaFormat = 2;

}  // namespace

absl::StatusOr<LoadResult> LoadWorkload(storage::Store* store,
                                        const WorkloadScale& scale,
                                        int inflight) {
  LoadResult result;
  auto transact = [&](std::vector<storage::TxOp> ops) {
    return store->Transact(TxRequest{std::move(ops)}).get();
  };
  auto r = transact(SchemaOps());
  if (!r.ok()) return r.status();
  for (int64_t k = 0; k < scale.users; k += 1000) {
    r = transact(UserOps(k, std::min(k + 1000, scale.users)));
    if (!r.ok()) return r.status();
  }
  r = transact(LabelOps(0, scale.labels));
  if (!r.ok()) return r.status();

  result.issue_ids.resize(static_cast<size_t>(scale.issues));
  const auto t0 = Clock::now();
  std::deque<std::pair<int64_t, std::future<absl::StatusOr<TxReport>>>> queue;
  auto drain = [&](size_t keep) -> absl::Status {
    while (queue.size() > keep) {
      auto [begin, f] = std::move(queue.front());
      queue.pop_front();
      auto report = f.get();
      if (!report.ok()) return report.status();
      result.datoms += static_cast<int64_t>(report->datoms.size());
      for (int64_t idx = begin; idx < std::min(begin + 500, scale.issues);
           ++idx) {
        result.issue_ids[static_cast<size_t>(idx)] =
            report->tempids.at("i" + std::to_string(idx));
      }
    }
    return absl::OkStatus();
  };
  for (int64_t begin = 0; begin < scale.issues; begin += 500) {
    queue.emplace_back(
        begin, store->Transact(TxRequest{IssueOps(
                   scale, begin, std::min(begin + 500, scale.issues))}));
    absl::Status s = drain(static_cast<size_t>(inflight));
    if (!s.ok()) return s;
  }
  absl::Status s = drain(0);
  if (!s.ok()) return s;
  result.load_seconds = Seconds(Clock::now() - t0);
  result.t_mid = store->Latest()->basis_tx();

  const auto h0 = Clock::now();
  const int64_t changes = CountHistoryChanges(scale);
  const int64_t before = HistoryChangesBeforeSince(changes);
  std::vector<storage::TxOp> batch;
  result.t_since = store->Latest()->basis_tx();
  for (int64_t idx = 0; idx < scale.issues; ++idx) {
    int new_state;
    if (!HistoryChange(scale, idx, &new_state)) continue;
    batch.push_back(
        StateChangeOp(result.issue_ids[static_cast<size_t>(idx)], new_state));
    const int64_t i = result.history_changes++;
    if (!EndsHistoryTx(i, changes, before)) continue;
    r = transact(std::move(batch));
    batch.clear();
    if (!r.ok()) return r.status();
    if (i + 1 == before) result.t_since = r->tx;
  }
  result.history_seconds = Seconds(Clock::now() - h0);
  return result;
}

namespace {

// Yields the workload's transactions in load order; the history phase
// needs the issue ids the earlier reports assigned.
class WorkloadSource : public storage::ImportSource {
 public:
  WorkloadSource(const WorkloadScale& scale, LoadResult* result)
      : scale_(scale), result_(result) {
    result_->issue_ids.resize(static_cast<size_t>(scale.issues));
  }

  [[nodiscard]] absl::StatusOr<bool> Next(TxRequest* request) override {
    pending_ = phase_;
    switch (phase_) {
      case Phase::kSchema:
        request->ops = SchemaOps();
        phase_ = Phase::kUsers;
        return true;
      case Phase::kUsers:
        request->ops = UserOps(next_, std::min(next_ + 1000, scale_.users));
        next_ += 1000;
        if (next_ >= scale_.users) phase_ = Phase::kLabels, next_ = 0;
        return true;
      case Phase::kLabels:
        request->ops = LabelOps(0, scale_.labels);
        phase_ = Phase::kIssues;
        issues_start_ = Clock::now();
        return true;
      case Phase::kIssues:
        request->ops =
            IssueOps(scale_, next_, std::min(next_ + 500, scale_.issues));
        issue_batch_ = next_;
        next_ += 500;
        if (next_ >= scale_.issues) phase_ = Phase::kHistory, next_ = 0;
        return true;
      case Phase::kHistory: {
        if (history_start_ == Clock::time_point()) {
          result_->load_seconds = Seconds(Clock::now() - issues_start_);
          result_->t_mid = last_tx_;
          result_->t_since = last_tx_;
          history_start_ = Clock::now();
          changes_ = CountHistoryChanges(scale_);
          before_ = HistoryChangesBeforeSince(changes_);
        }
        // The first transaction after the boundary: t_since is the last
        // one before it.
        if (result_->history_changes == before_ && before_ < changes_) {
          result_->t_since = last_tx_;
        }
        int new_state;
        while (next_ < scale_.issues) {
          const int64_t idx = next_++;
          if (!HistoryChange(scale_, idx, &new_state)) continue;
          request->ops.push_back(StateChangeOp(
              result_->issue_ids[static_cast<size_t>(idx)], new_state));
          if (EndsHistoryTx(result_->history_changes++, changes_, before_)) {
            break;
          }
        }
        if (request->ops.empty()) {
          result_->history_seconds = Seconds(Clock::now() - history_start_);
          // Without a final quarter, since(t_since) is empty.
          if (before_ == changes_) result_->t_since = last_tx_;
          return false;
        }
        return true;
      }
    }
    return false;
  }

  void OnReport(const storage::TxReport& report) override {
    last_tx_ = report.tx;
    if (pending_ == Phase::kIssues) {
      result_->datoms += static_cast<int64_t>(report.datoms.size());
      for (int64_t idx = issue_batch_;
           idx < std::min(issue_batch_ + 500, scale_.issues); ++idx) {
        result_->issue_ids[static_cast<size_t>(idx)] =
            report.tempids.at("i" + std::to_string(idx));
      }
    }
  }

 private:
  enum class Phase { kSchema, kUsers, kLabels, kIssues, kHistory };
  const WorkloadScale& scale_;
  LoadResult* result_;
  Phase phase_ = Phase::kSchema;
  Phase pending_ = Phase::kSchema;  // the phase of the request in flight
  int64_t next_ = 0;
  int64_t issue_batch_ = 0;
  storage::EntityId last_tx_ = 0;
  Clock::time_point issues_start_, history_start_;
  int64_t changes_ = 0;  // history changes in all
  int64_t before_ = 0;   // of them, before t_since
};

}  // namespace

absl::StatusOr<LoadResult> ImportWorkload(storage::Store* store,
                                          const WorkloadScale& scale) {
  LoadResult result;
  WorkloadSource source(scale, &result);
  auto report = store->Import(&source);
  if (!report.ok()) return report.status();
  return result;
}

absl::Status SaveLoadMeta(const std::string& dir, const WorkloadScale& scale,
                          const LoadResult& result) {
  std::ofstream out(dir + "/bench-meta.txt");
  out << "format " << kLoadMetaFormat << "\n"
      << "scale " << scale.name << "\n"
      << "t_mid " << result.t_mid << "\n"
      << "t_since " << result.t_since << "\n"
      << "first_issue " << (result.issue_ids.empty() ? 0 : result.issue_ids[0])
      << "\n";
  // Issue ids are consecutive within each load transaction but not across
  // them, so keep them all (8 bytes each).
  std::ofstream ids(dir + "/bench-issue-ids.bin", std::ios::binary);
  ids.write(reinterpret_cast<const char*>(result.issue_ids.data()),
            static_cast<std::streamsize>(result.issue_ids.size() *
                                         sizeof(storage::EntityId)));
  if (!out || !ids) {
    return absl::UnavailableError(
        StrCat("cannot write bench metadata in ", dir));
  }
  return absl::OkStatus();
}

absl::StatusOr<LoadResult> ReadLoadMeta(const std::string& dir,
                                        const WorkloadScale& scale) {
  std::ifstream in(dir + "/bench-meta.txt");
  if (!in) return absl::NotFoundError("no bench metadata in " + dir);
  LoadResult result;
  std::string key, scale_name;
  int64_t value, format = 1;
  while (in >> key) {
    if (key == "scale") {
      in >> scale_name;
    } else if (in >> value) {
      if (key == "format") format = value;
      if (key == "t_mid") result.t_mid = value;
      if (key == "t_since") result.t_since = value;
    }
  }
  if (format != kLoadMetaFormat) {
    return absl::FailedPreconditionError(
        StrCat(dir, " was loaded by an older benchmark (format ", format,
               ", t_since before the last history batch); delete it and "
               "load again"));
  }
  if (scale_name != scale.name) {
    return absl::FailedPreconditionError(
        StrCat(dir, " holds scale ", scale_name, ", not ", scale.name));
  }
  result.issue_ids.resize(static_cast<size_t>(scale.issues));
  std::ifstream ids(dir + "/bench-issue-ids.bin", std::ios::binary);
  ids.read(reinterpret_cast<char*>(result.issue_ids.data()),
           static_cast<std::streamsize>(result.issue_ids.size() *
                                        sizeof(storage::EntityId)));
  if (!ids)
    return absl::DataLossError("truncated bench-issue-ids.bin in " + dir);
  return result;
}

}  // namespace mentat::bench
