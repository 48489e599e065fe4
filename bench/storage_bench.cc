// storage-bench: the storage engine's figures, in-process (no network).
//
//   storage-bench load   --scale s --dir DIR   workload load, history phase,
//                                              size on disk, open time
//   storage-bench import --scale s --dir DIR   the same through Store::Import
//   storage-bench writes --dir DIR --seconds 5 single-datom durable writes
//                                              at 1, 16 and 64 submitters
//                 [--log-presize BYTES]        (0: log files not presized)
//                 [--pipeline 0|1]             StoreOptions::pipeline_commits
//   storage-bench excise --dir DIR             on a store `load` made: one
//                                              user's excision (the commit,
//                                              which reads the whole log)
//                                              and the purge after it
//
// Prints figures; asserts nothing about speed.

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <future>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "loader.h"
#include "mentat/storage/store.h"
#include "stats_util.h"
#include "workload.h"

namespace mentat::bench {
namespace {

using Clock = std::chrono::steady_clock;
using storage::Store;
using storage::TxRequest;

double Seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

struct Args {
  std::string command;
  std::string scale = "s";
  std::string dir = "bench-store";
  double seconds = 5;
  int inflight = 2;
  // writes: StoreOptions::log_presize_bytes; -1 for its default.
  int64_t log_presize = -1;
  // writes: StoreOptions::pipeline_commits.
  bool pipeline = true;
};

bool ParseArgs(int argc, char** argv, Args* args) {
  if (argc < 2) return false;
  args->command = argv[1];
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--scale") {
      args->scale = argv[i + 1];
    } else if (flag == "--dir") {
      args->dir = argv[i + 1];
    } else if (flag == "--seconds") {
      args->seconds = std::atof(argv[i + 1]);
    } else if (flag == "--inflight") {
      args->inflight = std::atoi(argv[i + 1]);
    } else if (flag == "--log-presize") {
      args->log_presize = std::atoll(argv[i + 1]);
    } else if (flag == "--pipeline") {
      args->pipeline = std::atoi(argv[i + 1]) != 0;
    } else {
      return false;
    }
  }
  return true;
}

bool Check(const absl::Status& s, const char* what) {
  if (s.ok()) return true;
  std::fprintf(stderr, "%s: %s\n", what, s.ToString().c_str());
  return false;
}

int Load(const Args& args) {
  WorkloadScale scale;
  if (!ScaleByName(args.scale, &scale)) {
    std::fprintf(stderr, "unknown scale %s\n", args.scale.c_str());
    return 2;
  }
  std::filesystem::remove_all(args.dir);
  auto opened = Store::Open(args.dir);
  if (!Check(opened.status(), "open")) return 1;
  std::unique_ptr<Store> store = std::move(*opened);

  auto loaded = args.command == "import"
                    ? ImportWorkload(store.get(), scale)
                    : LoadWorkload(store.get(), scale, args.inflight);
  if (!Check(loaded.status(), "load")) return 1;
  const double load_s = loaded->load_seconds;
  const uint64_t load_datoms = static_cast<uint64_t>(loaded->datoms);
  const storage::EntityId t_mid = loaded->t_mid;
  const int64_t changes = loaded->history_changes;
  const double history_s = loaded->history_seconds;
  const auto counters = store->transactor_counters();

  if (!Check(store->Flush(), "flush")) return 1;
  if (!Check(store->CompactAll(), "compact")) return 1;
  if (!Check(SaveLoadMeta(args.dir, scale, *loaded), "save markers")) return 1;
  const uint64_t bytes = store->DiskSizeBytes();
  const double total_datoms = static_cast<double>(counters.datoms);
  store.reset();

  const auto o0 = Clock::now();
  auto reopened = Store::Open(args.dir);
  const double open_ms = Seconds(Clock::now() - o0) * 1000;
  if (!Check(reopened.status(), "reopen")) return 1;

  std::printf("scale %s: %lld users, %lld issues, %lld labels\n",
              scale.name.c_str(), static_cast<long long>(scale.users),
              static_cast<long long>(scale.issues),
              static_cast<long long>(scale.labels));
  std::printf(
      "%s: %llu datoms in %.2f s = %.0f datoms/s (txs of 500 issues, "
      "%s)\n",
      args.command.c_str(), static_cast<unsigned long long>(load_datoms),
      load_s, static_cast<double>(load_datoms) / load_s,
      args.command == "import" ? "SST ingestion" : "Transact");
  std::printf("t_mid: %lld\n", static_cast<long long>(t_mid));
  std::printf("history: %lld state changes in %.2f s = %.0f changes/s\n",
              static_cast<long long>(changes), history_s,
              static_cast<double>(changes) / history_s);
  std::printf("datoms written (history included): %.0f\n", total_datoms);
  std::printf(
      "size on disk after compaction: %.1f MB = %.3f GB per million "
      "datoms\n",
      static_cast<double>(bytes) / 1e6,
      static_cast<double>(bytes) / 1e9 / (total_datoms / 1e6));
  std::printf("open time: %.1f ms\n", open_ms);
  return 0;
}

int Writes(const Args& args) {
  std::filesystem::remove_all(args.dir);
  storage::StoreOptions options;
  if (args.log_presize >= 0) {
    options.log_presize_bytes = static_cast<uint64_t>(args.log_presize);
  }
  options.pipeline_commits = args.pipeline;
  auto opened = Store::Open(args.dir, options);
  if (!Check(opened.status(), "open")) return 1;
  std::unique_ptr<Store> store = std::move(*opened);
  if (!Check(store->Transact(TxRequest{SchemaOps()}).get().status(),
             "schema")) {
    return 1;
  }
  // 1,000 issues to change.
  WorkloadScale scale{"writes", 100, 1000, 10};
  if (!Check(store->Transact(TxRequest{UserOps(0, 100)}).get().status(),
             "users") ||
      !Check(store->Transact(TxRequest{LabelOps(0, 10)}).get().status(),
             "labels")) {
    return 1;
  }
  auto r = store->Transact(TxRequest{IssueOps(scale, 0, 1000)}).get();
  if (!Check(r.status(), "issues")) return 1;
  std::vector<storage::EntityId> ids;
  for (int i = 0; i < 1000; ++i)
    ids.push_back(r->tempids.at("i" + std::to_string(i)));

  std::printf(
      "single-datom durable writes (fsync per group), %.0f s per point\n",
      args.seconds);
  std::printf("%8s %10s %9s %9s %9s %11s\n", "writers", "tx/s", "p50 ms",
              "p99 ms", "max ms", "avg group");
  for (int writers : {1, 16, 64}) {
    std::atomic<bool> stop{false};
    std::vector<std::vector<double>> latencies(static_cast<size_t>(writers));
    const auto before = store->transactor_counters();
    const auto t0 = Clock::now();
    std::vector<std::thread> threads;
    for (int w = 0; w < writers; ++w) {
      threads.emplace_back([&, w] {
        std::mt19937 rng(static_cast<uint32_t>(w + 1));
        while (!stop.load(std::memory_order_relaxed)) {
          const auto issue = ids[rng() % ids.size()];
          const int state = static_cast<int>(rng() % 5);
          const auto s0 = Clock::now();
          auto result =
              store->Transact(TxRequest{{StateChangeOp(issue, state)}}).get();
          latencies[static_cast<size_t>(w)].push_back(
              Seconds(Clock::now() - s0) * 1000);
          if (!result.ok()) {
            std::fprintf(stderr, "write: %s\n",
                         result.status().ToString().c_str());
            return;
          }
        }
      });
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(args.seconds));
    stop = true;
    for (auto& t : threads) t.join();
    const double elapsed = Seconds(Clock::now() - t0);
    const auto after = store->transactor_counters();
    std::vector<double> all;
    for (auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
    const Percentiles p = ComputePercentiles(all);
    const double txs =
        static_cast<double>(after.transactions - before.transactions);
    const double groups = static_cast<double>(after.groups - before.groups);
    std::printf("%8d %10.0f %9.3f %9.3f %9.3f %11.1f\n", writers, txs / elapsed,
                p.p50, p.p99, p.max, groups > 0 ? txs / groups : 0);
  }
  return 0;
}

int Excise(const Args& args) {
  auto opened = Store::Open(args.dir);
  if (!Check(opened.status(), "open")) return 1;
  std::unique_ptr<Store> store = std::move(*opened);
  storage::TxOp op;
  op.kind = storage::TxOp::Kind::kAdd;
  op.e = storage::EntityRef::TempId("x");
  op.a = storage::EntityRef::Ident("db/excise");
  op.v = storage::TxValue::Entity(storage::EntityRef::LookupRef(
      "user/email", storage::Value::String(UserEmail(1))));
  const auto t0 = Clock::now();
  auto report = store->Transact(TxRequest{{op}}).get();
  const double commit_ms = Seconds(Clock::now() - t0) * 1000;
  if (!Check(report.status(), "excise")) return 1;
  const auto p0 = Clock::now();
  if (!Check(store->PurgeExcised(), "purge")) return 1;
  const double purge_s = Seconds(Clock::now() - p0);
  std::printf("excision of %s: %zu datoms in %.1f ms (the commit)\n",
              UserEmail(1).c_str(), report->excised_datoms, commit_ms);
  std::printf("purge (flush, compact every family): %.2f s; %.1f MB on disk\n",
              purge_s, static_cast<double>(store->DiskSizeBytes()) / 1e6);
  return 0;
}

}  // namespace
}  // namespace mentat::bench

int main(int argc, char** argv) {
  mentat::bench::Args args;
  if (!mentat::bench::ParseArgs(argc, argv, &args)) {
    std::fprintf(stderr,
                 "usage: storage-bench load|import|writes|excise [--scale "
                 "xs|s|m] [--dir DIR] "
                 "[--seconds N] [--inflight N] [--log-presize BYTES] "
                 "[--pipeline 0|1]\n");
    return 2;
  }
  if (args.command == "load" || args.command == "import") {
    return mentat::bench::Load(args);
  }
  if (args.command == "writes") return mentat::bench::Writes(args);
  if (args.command == "excise") return mentat::bench::Excise(args);
  std::fprintf(stderr, "unknown command %s\n", args.command.c_str());
  return 2;
}
