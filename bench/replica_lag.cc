// replica-lag: replica lag and the primary's cost per write (issue 19).
//
// Starts a primary mentatd and --replicas read replicas of it (each its
// own process, unix sockets, --sync-commits as given), writes single-datom
// transactions to the primary at a fixed rate from --writers threads, and
// watches the first replica's Subscribe stream. For each transaction:
// lag = when the replica's subscriber saw it minus when the writer got
// its acknowledgement (what a client doing read-your-writes at a replica
// waits for). Prints lag p50/p95/p99/max, the rate reached, and the
// primary's CPU time per write (utime + stime from /proc), so that runs
// with 0 and 2 replicas give the replicas' cost on the primary, and the
// writers' latency (Transact sent -> answered), so that runs with
// --durability async and semi-sync give semi-synchronous commit's cost.
//
//   replica-lag --mentatd build/server/mentatd --replicas 2 --rate 10000
//       --seconds 10 --writers 64 [--durability semi-sync]

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "grpcpp/grpcpp.h"
#include "mentat/base/str_cat.h"
#include "mentat/v1/mentat.grpc.pb.h"
#include "stats_util.h"
#include "suite/server_process.h"
#include "tool_args.h"

namespace mentat::bench {
namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::string mentatd;
  std::string dir = "/tmp/replica-lag";
  int replicas = 1;
  double rate = 10000;
  double seconds = 10;
  int writers = 64;
  bool sync_commits = true;
  // The primary's --durability: async, or semi-sync (a Transact answers
  // once a replica acknowledged it).
  std::string durability = "async";
};

double CpuSecondsOf(pid_t pid) {
  std::ifstream in(StrCat("/proc/", pid, "/stat"));
  std::string stat((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  const size_t paren = stat.rfind(')');
  if (paren == std::string::npos) return 0;
  std::istringstream fields(stat.substr(paren + 2));
  std::string f;
  double utime = 0, stime = 0;
  for (int i = 3; fields >> f; ++i) {
    if (i == 14) utime = std::stod(f);
    if (i == 15) {
      stime = std::stod(f);
      break;
    }
  }
  return (utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

std::unique_ptr<v1::Mentat::Stub> StubFor(const std::string& address) {
  return v1::Mentat::NewStub(
      grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
}

int Run(const Options& o) {
  std::filesystem::remove_all(o.dir);
  std::filesystem::create_directories(o.dir);
  const std::string sync = o.sync_commits ? "true" : "false";
  ServerProcess primary(
      o.mentatd, o.dir + "/primary", "",
      {"--sync-commits=" + sync, "--durability=" + o.durability});
  absl::Status s = primary.Start();
  if (!s.ok()) {
    std::cerr << "primary: " << s << "\n";
    return 1;
  }
  std::vector<std::unique_ptr<ServerProcess>> replicas;
  for (int i = 0; i < o.replicas; ++i) {
    replicas.push_back(std::make_unique<ServerProcess>(
        o.mentatd, StrCat(o.dir, "/replica", i), "",
        std::vector<std::string>{"--sync-commits=" + sync,
                                 "--create-default=false",
                                 "--replica-of=" + primary.address()}));
    s = replicas.back()->Start();
    if (!s.ok()) {
      std::cerr << "replica " << i << ": " << s << "\n";
      return 1;
    }
  }
  // After the replicas start: with --durability semi-sync the schema's
  // Transact answers once a replica has it.
  auto pstub = StubFor(primary.address());
  {
    v1::TransactRequest req;
    req.set_tx_data(
        "[{:db/ident :lag/n :db/valueType :db.type/long "
        ":db/cardinality :db.cardinality/one}]");
    v1::TransactResponse resp;
    grpc::ClientContext ctx;
    grpc::Status g = pstub->Transact(&ctx, req, &resp);
    // (A semi-sync timeout still committed it on the primary: a replica
    // that was still bootstrapping gets it with its snapshot.)
    if (!g.ok() && g.error_message().find("committed on this primary") ==
                       std::string::npos) {
      std::cerr << "schema: " << g.error_message() << "\n";
      return 1;
    }
  }

  // The first replica's commits, as its readers see them.
  absl::Mutex seen_mu;
  std::map<int64_t, Clock::time_point> seen;
  std::unique_ptr<grpc::ClientContext> sub_ctx;
  std::thread subscriber;
  std::atomic<bool> subscribed{false};
  if (!replicas.empty()) {
    sub_ctx = std::make_unique<grpc::ClientContext>();
    subscriber = std::thread([&] {
      auto rstub = StubFor(replicas[0]->address());
      v1::SubscribeRequest req;
      req.set_omit_datoms(true);
      // Waits until the replica has bootstrapped the database.
      for (;;) {
        grpc::ClientContext ctx;
        v1::SchemaRequest sreq;
        v1::SchemaResponse sresp;
        if (rstub->Schema(&ctx, sreq, &sresp).ok()) {
          // Every transaction after the replica's basis: none is missed
          // while the stream starts.
          req.set_from_tx(sresp.basis_tx() + 1);
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      auto reader = rstub->Subscribe(sub_ctx.get(), req);
      subscribed = true;
      v1::SubscribeResponse msg;
      while (reader->Read(&msg)) {
        const auto now = Clock::now();
        absl::MutexLock lock(&seen_mu);
        for (const auto& t : msg.transactions()) seen.emplace(t.tx(), now);
      }
      reader->Finish();
    });
    while (!subscribed)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }

  struct Ack {
    int64_t tx;
    Clock::time_point at;
    double latency_ms;  // Transact sent -> answered
  };
  std::vector<std::vector<Ack>> acks(o.writers);
  std::atomic<int64_t> failures{0};
  const double cpu_before = CpuSecondsOf(primary.pid());
  const auto start = Clock::now();
  const auto end = start + std::chrono::duration_cast<Clock::duration>(
                               std::chrono::duration<double>(o.seconds));
  const double interval = static_cast<double>(o.writers) / o.rate;  // s
  std::vector<std::thread> writers;
  for (int w = 0; w < o.writers; ++w) {
    writers.emplace_back([&, w] {
      auto stub = StubFor(primary.address());
      int64_t k = 0;
      for (;;) {
        const auto due =
            start + std::chrono::duration_cast<Clock::duration>(
                        std::chrono::duration<double>(
                            interval * (static_cast<double>(k) +
                                        static_cast<double>(w) / o.writers)));
        if (due >= end) break;
        std::this_thread::sleep_until(due);
        v1::TransactRequest req;
        req.set_tx_data(StrCat("[{:lag/n ", w * 100000000 + k, "}]"));
        v1::TransactResponse resp;
        grpc::ClientContext ctx;
        const auto sent = Clock::now();
        grpc::Status g = stub->Transact(&ctx, req, &resp);
        if (g.ok()) {
          const auto now = Clock::now();
          acks[w].push_back(Ack{
              resp.tx(), now,
              std::chrono::duration<double, std::milli>(now - sent).count()});
        } else {
          failures++;
        }
        ++k;
      }
    });
  }
  for (auto& t : writers) t.join();
  const auto wrote_until = Clock::now();
  const double cpu_after = CpuSecondsOf(primary.pid());
  int64_t writes = 0;
  int64_t last_tx = 0;
  std::vector<double> write_ms;
  for (const auto& a : acks) {
    writes += static_cast<int64_t>(a.size());
    for (const Ack& x : a) {
      last_tx = std::max(last_tx, x.tx);
      write_ms.push_back(x.latency_ms);
    }
  }
  const double elapsed =
      std::chrono::duration<double>(wrote_until - start).count();

  std::vector<double> lag_ms;
  int64_t missing = 0;
  if (!replicas.empty()) {
    const auto give_up = Clock::now() + std::chrono::seconds(30);
    for (;;) {
      {
        absl::MutexLock lock(&seen_mu);
        if (seen.count(last_tx) > 0) break;
      }
      if (Clock::now() > give_up) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    sub_ctx->TryCancel();
    subscriber.join();
    for (const auto& a : acks) {
      for (const Ack& x : a) {
        auto it = seen.find(x.tx);
        if (it == seen.end()) {
          missing++;
          continue;
        }
        lag_ms.push_back(std::max(
            0.0, std::chrono::duration<double, std::milli>(it->second - x.at)
                     .count()));
      }
    }
  }
  const Percentiles p = ComputePercentiles(lag_ms);
  std::printf(
      "replica-lag: replicas=%d writers=%d target=%.0f tx/s achieved=%.0f "
      "tx/s (%lld writes, %lld failed) sync-commits=%s durability=%s\n",
      o.replicas, o.writers, o.rate, static_cast<double>(writes) / elapsed,
      static_cast<long long>(writes), static_cast<long long>(failures.load()),
      sync.c_str(), o.durability.c_str());
  const Percentiles w = ComputePercentiles(write_ms);
  std::printf(
      "writer latency (Transact sent -> answered), ms: p50 %.3f p95 %.3f "
      "p99 %.3f max %.3f\n",
      w.p50, w.p95, w.p99, w.max);
  std::printf(
      "primary CPU: %.3f s, %.1f us per write\n", cpu_after - cpu_before,
      writes > 0 ? (cpu_after - cpu_before) * 1e6 / static_cast<double>(writes)
                 : 0.0);
  if (!replicas.empty()) {
    std::printf(
        "lag (ack at the writer -> seen by the replica's subscriber), ms: "
        "p50 %.2f p95 %.2f p99 %.2f max %.2f (%zu samples, %lld never seen)\n",
        p.p50, p.p95, p.p99, p.max, p.count, static_cast<long long>(missing));
  }
  for (auto& r : replicas) r->Stop();
  primary.Stop();
  std::filesystem::remove_all(o.dir);
  return 0;
}

}  // namespace
}  // namespace mentat::bench

int main(int argc, char** argv) {
  mentat::bench::Options o;
  mentat::bench::ToolArgs args(
      argc, argv,
      "usage: replica-lag --mentatd PATH [--replicas N] [--rate TX_PER_S] "
      "[--seconds S] [--writers W] [--sync-commits true|false] "
      "[--durability async|semi-sync] [--dir DIR]");
  for (std::string a; args.Next(&a);) {
    if (a == "--mentatd") {
      o.mentatd = args.Value();
    } else if (a == "--dir") {
      o.dir = args.Value();
    } else if (a == "--replicas") {
      o.replicas = args.Int(1);
    } else if (a == "--rate") {
      o.rate = args.Positive();
    } else if (a == "--seconds") {
      o.seconds = args.Positive();
    } else if (a == "--writers") {
      o.writers = args.Int(1);
    } else if (a == "--sync-commits") {
      o.sync_commits = args.Bool();
    } else if (a == "--durability") {
      o.durability = args.Value();
      if (o.durability != "async" && o.durability != "semi-sync") {
        std::cerr << "replica-lag: --durability takes async or semi-sync\n";
        return 2;
      }
    } else {
      args.Usage();
    }
  }
  if (o.mentatd.empty()) {
    std::cerr << "replica-lag: --mentatd is required\n";
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);
  return mentat::bench::Run(o);
}
