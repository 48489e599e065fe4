#ifndef MENTAT_BENCH_LOADER_H_
#define MENTAT_BENCH_LOADER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "mentat/storage/store.h"
#include "workload.h"

namespace mentat::bench {

// What loading the workload into a store produced.
struct LoadResult {
  int64_t datoms = 0;       // datoms of the initial load
  double load_seconds = 0;  // initial load only
  int64_t history_changes = 0;
  double history_seconds = 0;
  storage::EntityId t_mid = 0;               // last tx of the initial load
  storage::EntityId t_since = 0;             // last tx before the final quarter
  std::vector<storage::EntityId> issue_ids;  // by issue index
};

// Loads the workload at `scale` through Store::Transact: schema, users,
// labels, issues in transactions of 500 (`inflight` of them queued at
// once), then the history phase. The store must be empty.
[[nodiscard]] absl::StatusOr<LoadResult> LoadWorkload(
    storage::Store* store, const WorkloadScale& scale, int inflight);

// The same load through Store::Import (SST ingestion): the same
// transactions, so the same datoms, history and statistics.
[[nodiscard]] absl::StatusOr<LoadResult> ImportWorkload(
    storage::Store* store, const WorkloadScale& scale);

// A loaded store remembers its scale and markers in DIR/bench-meta.txt, so
// benchmarks can reuse it. ReadLoadMeta: NotFound when DIR holds none;
// FailedPrecondition for another scale or a store an older benchmark
// loaded (its t_since means something else): load it again.
[[nodiscard]] absl::Status SaveLoadMeta(const std::string& dir,
                                        const WorkloadScale& scale,
                                        const LoadResult& result);
[[nodiscard]] absl::StatusOr<LoadResult> ReadLoadMeta(
    const std::string& dir, const WorkloadScale& scale);

}  // namespace mentat::bench

#endif  // MENTAT_BENCH_LOADER_H_
