#ifndef MENTAT_BENCH_SUITE_SUITE_H_
#define MENTAT_BENCH_SUITE_SUITE_H_

// mentat-bench's subcommands over gRPC: load a generated dataset into a
// running mentatd, run the workload's scenarios with every answer checked,
// report and compare results.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "mentat/client/client.h"

namespace mentat::bench {

// What `load` recorded (DATA/load-<db>.json and DATA/load-<db>.ids).
struct LoadRecord {
  std::string method;  // "transact" or "import"
  int64_t datoms = 0;  // datoms the server reported for the initial load
  double load_seconds = 0;
  double history_seconds = 0;
  int64_t history_changes = 0;
  int64_t t_mid = 0;
  int64_t t_since = 0;
  int64_t disk_bytes = 0;
  std::vector<int64_t> issue_ids;  // by issue index
};

struct LoadOptions {
  std::string data;  // the dataset directory
  std::string database = "default";
  std::string method = "import";
  int inflight = 8;
};

[[nodiscard]] absl::Status RunLoad(client::Client& client,
                                   const LoadOptions& options);
// FailedPrecondition for a record an older mentat-bench load wrote (its
// t_since means something else): regenerate and load again.
[[nodiscard]] absl::StatusOr<LoadRecord> ReadLoadRecord(
    const std::string& data, const std::string& database, size_t issues);

struct RunOptions {
  std::string data;
  std::string database = "default";
  std::string out;
  std::vector<std::string> scenarios;  // empty: all
  std::vector<int> clients = {1, 8, 32, 64, 128};
  std::vector<int> write_clients = {1, 16, 64};
  // How the write scenario (and the ping beside it) keeps its clients'
  // calls in flight: "calls", each client a call that starts the next
  // when its answer arrives, all on gRPC's threads (as pgbench drives
  // many connections from a few threads); "threads", each client a
  // thread blocked on its call (the client then costs more CPU than a
  // write on the server, and 64 threads on 2 cores wait to be scheduled).
  std::string write_drive = "calls";
  // The same for the read mix (concurrency_sweep) above one client:
  // "calls" sends each read as one QueryFirst call (the reads of the mix
  // are small) and needs --query-rpc first; "threads" as before.
  std::string read_drive = "calls";
  int sustained_clients = 128;
  double duration_s = 60;  // sustained
  int reps = 3;
  double min_s = 10;
  // Samples each point takes at least, over all its clients (a q4 of 20 s
  // at scale l would otherwise hold one point for 10 minutes).
  int min_samples = 30;
  // Seconds each operation runs unmeasured before its first point (0: the
  // 3 warm-up calls per client only).
  double warmup_s = 0;
  // mixed: the writer's rates (tx/s), the queries measured under it (ops
  // of the read scenarios: q1, q2, pull, q2_as_of, inputs_100, since, q3,
  // q4; empty: all), and its threads (0: one per 100 tx/s, 2 to 64).
  std::vector<int> mixed_rates = {1000, 5000};
  std::vector<std::string> mixed_queries;
  int mixed_writers = 0;
  std::string client_cpus;
  // paired: a copy of the server's database directory to run each read in
  // this process as well (EngineBeside); empty: served calls and pings
  // only.
  std::string engine_data;
  // Set when the benchmark started the server itself.
  class ServerProcess* server = nullptr;
  std::string server_description;
};

// Runs the scenarios; writes timings.csv, checks.txt, env.txt (and
// sustained.csv) into options.out. A failed check is an error.
[[nodiscard]] absl::Status RunScenarios(client::Client& client,
                                        const RunOptions& options);

// summary.md and plots of a run directory.
[[nodiscard]] absl::Status WriteReport(const std::string& dir);

// Compares two run directories; the number of regressions beyond
// `threshold_percent`, printed to stdout.
[[nodiscard]] absl::StatusOr<int> CompareRuns(const std::string& old_dir,
                                              const std::string& new_dir,
                                              double threshold_percent);

}  // namespace mentat::bench

#endif  // MENTAT_BENCH_SUITE_SUITE_H_
