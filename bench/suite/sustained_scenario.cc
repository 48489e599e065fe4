// mentat-bench run's long scenarios: sustained (readers and a writer for
// --duration-s, in 10-second windows) and cold_vs_warm (a restart).

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "mentat/base/str_cat.h"
#include "stats_util.h"
#include "suite/runner.h"
#include "suite/server_process.h"

namespace mentat::bench {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

absl::Status Runner::ColdVsWarm() {
  if (options_.server == nullptr) {
    notes_.push_back(
        "cold_vs_warm skipped: the benchmark did not start the server "
        "(use --mentatd)");
    return absl::OkStatus();
  }
  options_.server->Stop();
  // Dropping the page cache needs root; say so when it is not possible.
  {
    std::ofstream drop("/proc/sys/vm/drop_caches");
    ::sync();
    drop << "3\n";
    drop.flush();
    notes_.push_back(drop ? "cold_vs_warm: OS page cache dropped"
                          : "cold_vs_warm: OS page cache NOT dropped (needs "
                            "root); the restart is cold for the server only");
  }
  const auto t0 = Clock::now();
  absl::Status s = options_.server->Start();
  if (!s.ok()) return s;
  const double open_ms =
      std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  std::mt19937_64 rng(5);
  std::vector<Sample> first(1), warm(1);
  auto timed = [&](Sample* into) {
    const auto c0 = Clock::now();
    std::string f = Q1(rng);
    into->ms.push_back(
        std::chrono::duration<double, std::milli>(Clock::now() - c0).count());
    Check("cold_vs_warm", f);
    if (!f.empty()) into->errors++;
  };
  timed(&first[0]);
  first[0].seconds = first[0].ms[0] / 1000;
  const auto w0 = Clock::now();
  for (int i = 0; i < 30; ++i) timed(&warm[0]);
  warm[0].seconds = std::chrono::duration<double>(Clock::now() - w0).count();
  Point open;
  open.scenario = "cold_vs_warm";
  open.op = "restart_to_ready";
  open.count = 1;
  open.p50 = open.p95 = open.p99 = open.max = open_ms;
  points_.push_back(open);
  points_.push_back(Summarize("cold_vs_warm", "first_q1", 1, first));
  points_.push_back(Summarize("cold_vs_warm", "next_30_q1", 1, warm));
  return absl::OkStatus();
}

absl::Status Runner::Sustained() {
  absl::Status s = SetUpWrites();
  if (!s.ok()) return s;
  const int readers = options_.sustained_clients;
  const double window_s = 10;
  const int windows =
      std::max(1, static_cast<int>(options_.duration_s / window_s + 0.5));
  std::ofstream csv(options_.out + "/sustained.csv", std::ios::trunc);
  // The server's memory in parts: what its caches and memtables hold (each
  // bounded by its configured size, and filling up to it during the run)
  // and the rest, which must not grow. Of the rest, RocksDB's index and
  // filter blocks (table_readers_mb) are shown apart: they follow the
  // data's size.
  csv << "window,end_s,read_ops,read_p50_ms,read_p99_ms,write_ops,write_p99_ms,"
         "errors,server_rss_mb,block_cache_mb,memtable_mb,entity_cache_mb,"
         "value_cache_mb,column_cache_mb,table_readers_mb,other_mb\n";
  std::atomic<bool> stop{false};
  absl::Mutex mu;
  std::vector<double> reads, writes;
  int64_t errors = 0;
  auto reader = [&](int w) {
    std::mt19937_64 rng(static_cast<uint64_t>(w) + 1000);
    while (!stop.load()) {
      double ms = 0;
      const std::string f = CallSpan::Time([&] { return ReadMix(rng); }, &ms);
      Check("sustained", f);
      absl::MutexLock lock(&mu);
      reads.push_back(ms);
      if (!f.empty()) errors++;
    }
  };
  auto writer = [&] {
    while (!stop.load()) {
      const auto t0 = Clock::now();
      std::string f = Write();
      const double ms =
          std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
      Check("sustained write", f);
      absl::MutexLock lock(&mu);
      writes.push_back(ms);
      if (!f.empty()) errors++;
    }
  };
  std::vector<std::thread> threads;
  for (int w = 0; w < readers; ++w) threads.emplace_back(reader, w);
  threads.emplace_back(writer);
  std::vector<double> window_p99;
  std::vector<int64_t> window_rss;
  std::vector<int64_t> window_other;
  int64_t total_errors = 0;
  std::vector<double> all_reads, all_writes;
  for (int i = 0; i < windows; ++i) {
    std::this_thread::sleep_for(std::chrono::duration<double>(window_s));
    std::vector<double> r, w;
    int64_t e;
    {
      absl::MutexLock lock(&mu);
      r.swap(reads);
      w.swap(writes);
      e = errors;
      errors = 0;
    }
    total_errors += e;
    all_reads.insert(all_reads.end(), r.begin(), r.end());
    all_writes.insert(all_writes.end(), w.begin(), w.end());
    Percentiles pr = ComputePercentiles(r), pw = ComputePercentiles(w);
    const int64_t rss = ServerRss();
    v1::StatsRequest stats_request;
    stats_request.set_database(options_.database);
    auto stats = client_.Stats(stats_request);
    v1::StorageStats storage;
    if (stats.ok()) storage = stats->storage();
    const int64_t held = static_cast<int64_t>(
        storage.block_cache_usage_bytes() + storage.memtable_bytes() +
        storage.entity_cache_bytes() + storage.value_cache_bytes() +
        storage.column_cache_bytes());
    window_p99.push_back(pr.p99);
    window_rss.push_back(rss);
    window_other.push_back(rss - held);
    csv << i << "," << (i + 1) * window_s << "," << r.size() << "," << pr.p50
        << "," << pr.p99 << "," << w.size() << "," << pw.p99 << "," << e << ","
        << rss / 1e6 << "," << storage.block_cache_usage_bytes() / 1e6 << ","
        << storage.memtable_bytes() / 1e6 << ","
        << storage.entity_cache_bytes() / 1e6 << ","
        << storage.value_cache_bytes() / 1e6 << ","
        << storage.column_cache_bytes() / 1e6 << ","
        << storage.table_readers_bytes() / 1e6 << "," << (rss - held) / 1e6
        << "\n";
    std::printf(
        "sustained window %d: %zu reads (p50 %.3f p99 %.3f ms), %zu "
        "writes, errors %lld, rss %.0f MB\n",
        i, r.size(), pr.p50, pr.p99, w.size(), static_cast<long long>(e),
        rss / 1e6);
    std::fflush(stdout);
  }
  stop = true;
  for (std::thread& t : threads) t.join();
  Sample rs{all_reads, total_errors, windows * window_s};
  Sample ws{all_writes, 0, windows * window_s};
  points_.push_back(Summarize("sustained", "read_mix", readers, {rs}));
  points_.push_back(Summarize("sustained", "write", 1, {ws}));
  Check("sustained: no errors",
        total_errors == 0 ? "" : StrCat(total_errors, " errors"));
  if (window_p99.size() >= 2) {
    notes_.push_back(StrCat(
        "sustained: read p99 first window ", window_p99.front(),
        " ms, last window ", window_p99.back(), " ms; server RSS first ",
        window_rss.front() / 1000000, " MB, last ", window_rss.back() / 1000000,
        " MB, of which outside the caches and memtables first ",
        window_other.front() / 1000000, " MB, last ",
        window_other.back() / 1000000, " MB (see sustained.csv)"));
  }
  return absl::OkStatus();
}

}  // namespace mentat::bench
