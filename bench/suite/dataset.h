#ifndef MENTAT_BENCH_SUITE_DATASET_H_
#define MENTAT_BENCH_SUITE_DATASET_H_

// A generated dataset on disk (mentat-bench gen): the workload's
// transactions as EDN text, one transaction per line, in files under
// DIR/tx/, plus DIR/meta.json (what the files hold) and DIR/truth.json
// (the expected answers). History transactions name issues as
// `#bench/issue <index>`; the loader replaces that with the entity id the
// server gave the issue.

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "workload.h"

namespace mentat::bench {

struct DatasetMeta {
  WorkloadScale scale;
  // Files relative to the dataset directory, in load order.
  std::vector<std::string> initial_files;  // schema, users, labels, issues
  std::string history_file;
  int64_t initial_transactions = 0;
  int64_t initial_datoms = 0;  // asserted by the initial load, tx instants too
  int64_t history_transactions = 0;
  int64_t history_changes = 0;
  // The history file's first transactions, up to t_since; the final
  // quarter of the changes follows.
  int64_t history_transactions_before_since = 0;
};

struct DatasetTruth {
  std::array<int64_t, 5> states_initial{};
  std::array<int64_t, 5> states_final{};
  std::array<int64_t, 6> open_at_least{};
  int64_t changed_after_since = 0;  // distinct issues, since(t_since)
  // Probe user -> (issue index, initial state, final state), sorted.
  std::map<int64_t, std::vector<std::array<int64_t, 3>>> assigned;
};

// Writes the dataset for `scale` into `dir` with `jobs` threads. The
// output does not depend on `jobs`; issues are streamed shard by shard.
[[nodiscard]] absl::Status GenerateDataset(const WorkloadScale& scale,
                                           const std::string& dir, int jobs);

// Read meta.json and truth.json. FailedPrecondition for a dataset an older
// mentat-bench generated (another format): it must be generated again.
[[nodiscard]] absl::StatusOr<DatasetMeta> ReadDatasetMeta(
    const std::string& dir);
[[nodiscard]] absl::StatusOr<DatasetTruth> ReadDatasetTruth(
    const std::string& dir);

// The probe users whose assigned issues truth.json lists.
std::vector<int64_t> ProbeUsers(const WorkloadScale& scale);

}  // namespace mentat::bench

#endif  // MENTAT_BENCH_SUITE_DATASET_H_
