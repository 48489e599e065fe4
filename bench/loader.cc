#include "loader.h"

#include <chrono>
#include <deque>
#include <fstream>
#include <future>

#include "mentat/storage/str_cat.h"

namespace mentat::bench {
namespace {

using Clock = std::chrono::steady_clock;
using storage::TxReport;
using storage::TxRequest;

double Seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

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
  std::vector<storage::TxOp> batch;
  std::vector<std::vector<storage::TxOp>> batches;
  for (int64_t idx = 0; idx < scale.issues; ++idx) {
    int new_state;
    if (!HistoryChange(scale, idx, &new_state)) continue;
    batch.push_back(
        StateChangeOp(result.issue_ids[static_cast<size_t>(idx)], new_state));
    result.history_changes++;
    if (batch.size() == 500) batches.push_back(std::move(batch)), batch.clear();
  }
  if (!batch.empty()) batches.push_back(std::move(batch));
  for (size_t i = 0; i < batches.size(); ++i) {
    if (i + 1 == batches.size()) result.t_since = store->Latest()->basis_tx();
    r = transact(std::move(batches[i]));
    if (!r.ok()) return r.status();
  }
  if (batches.empty()) result.t_since = store->Latest()->basis_tx();
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

  absl::StatusOr<bool> Next(TxRequest* request) override {
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
          history_start_ = Clock::now();
        }
        int new_state;
        while (next_ < scale_.issues && request->ops.size() < 500) {
          if (HistoryChange(scale_, next_, &new_state)) {
            request->ops.push_back(StateChangeOp(
                result_->issue_ids[static_cast<size_t>(next_)], new_state));
            result_->history_changes++;
          }
          next_++;
        }
        if (request->ops.empty()) {
          result_->history_seconds = Seconds(Clock::now() - history_start_);
          if (result_->t_since == 0) result_->t_since = last_tx_;
          return false;
        }
        // t_since: the last tx before the final history batch.
        result_->t_since = last_tx_;
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
  out << "scale " << scale.name << "\n"
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
  int64_t value;
  while (in >> key) {
    if (key == "scale") {
      in >> scale_name;
    } else if (in >> value) {
      if (key == "t_mid") result.t_mid = value;
      if (key == "t_since") result.t_since = value;
    }
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
