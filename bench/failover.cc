// failover: time from kill -9 of a cluster's primary to the first write the
// new primary accepts (issue 19's goal: at most 5 s in every one of at
// least 20 rounds).
//
// Starts an etcd (a member of its own, loopback ports, data in --dir) and
// three mentatd cluster nodes. Each round: finds the primary (the node
// whose write commits), waits until both others have its basis, kills it
// (SIGKILL), then writes to the two survivors in turn until one accepts;
// the time from the kill to that acknowledgement is the round's figure.
// The killed node is restarted on its data directory (it rejoins as a
// replica) before the next round. Prints every round and the percentiles.
//
//   failover --mentatd build/server/mentatd --rounds 20 --lease-ttl 3

#include <signal.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "cluster_procs.h"
#include "mentat/base/str_cat.h"
#include "stats_util.h"
#include "tool_args.h"

namespace mentat::bench {
namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::string mentatd;
  std::string etcd = "/usr/bin/etcd";
  std::string dir = "/tmp/failover-bench";
  int rounds = 20;
  int lease_ttl = 3;
  bool sync_commits = true;
};

int Run(const Options& o) {
  std::filesystem::remove_all(o.dir);
  std::filesystem::create_directories(o.dir);
  const Etcd started = StartEtcd(o.etcd, o.dir);
  const pid_t etcd = started.pid;
  if (etcd <= 0) {
    std::cerr << "cannot start " << o.etcd << "\n";
    return 1;
  }
  ClusterNodeOptions node_options;
  node_options.mentatd = o.mentatd;
  node_options.dir = o.dir;
  node_options.etcd_endpoint = started.endpoint;
  node_options.lease_ttl = o.lease_ttl;
  node_options.sync_commits = o.sync_commits;
  std::vector<Node> nodes(3);
  std::vector<int> incarnation(3, 0);
  auto cleanup = [&] {
    for (Node& n : nodes) KillAndReap(n.pid);
    KillAndReap(etcd);
  };
  for (int i = 0; i < 3; ++i) {
    nodes[i].id = StrCat("n", i + 1);
    nodes[i].data_dir = StrCat(o.dir, "/", nodes[i].id);
    if (!StartNode(node_options, 0, &nodes[i])) {
      cleanup();
      return 1;
    }
  }
  // The schema, at whichever node is elected first.
  bool schema = false;
  for (auto until = Clock::now() + std::chrono::seconds(60);
       !schema && Clock::now() < until;) {
    for (Node& n : nodes) {
      if (Write(n,
                "[{:db/ident :bench/round :db/valueType :db.type/long "
                ":db/cardinality :db.cardinality/one}]",
                2000, nullptr)
              .ok()) {
        schema = true;
        break;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (!schema) {
    std::cerr << "no primary was elected\n";
    cleanup();
    return 1;
  }

  std::vector<double> seconds;
  for (int round = 1; round <= o.rounds; ++round) {
    // The primary: the node whose write commits.
    int primary = -1;
    int64_t tx = 0;
    for (auto until = Clock::now() + std::chrono::seconds(60);
         primary < 0 && Clock::now() < until;) {
      for (int i = 0; i < 3 && primary < 0; ++i) {
        if (Write(nodes[i], StrCat("[{:bench/round ", round, "}]"), 2000, &tx)
                .ok()) {
          primary = i;
        }
      }
    }
    if (primary < 0) {
      std::cerr << "round " << round << ": no primary\n";
      cleanup();
      return 1;
    }
    for (int i = 0; i < 3; ++i) {
      if (i != primary && !WaitForBasis(nodes[i], tx)) {
        std::cerr << "round " << round << ": " << nodes[i].id
                  << " did not reach the primary's basis\n";
        cleanup();
        return 1;
      }
    }
    const auto killed = Clock::now();
    KillAndReap(nodes[primary].pid);
    int winner = -1;
    while (winner < 0 && Clock::now() - killed < std::chrono::seconds(60)) {
      for (int i = 0; i < 3 && winner < 0; ++i) {
        if (i == primary) continue;
        if (Write(nodes[i], StrCat("[{:bench/round ", -round, "}]"), 500,
                  nullptr)
                .ok()) {
          winner = i;
        }
      }
    }
    const double took =
        std::chrono::duration<double>(Clock::now() - killed).count();
    if (winner < 0) {
      std::cerr << "round " << round << ": no new primary within 60 s\n";
      cleanup();
      return 1;
    }
    seconds.push_back(took);
    std::printf("round %d: killed %s, %s accepted a write after %.3f s\n",
                round, nodes[primary].id.c_str(), nodes[winner].id.c_str(),
                took);
    std::fflush(stdout);
    // The killed node rejoins before the next round.
    if (!StartNode(node_options, ++incarnation[primary], &nodes[primary])) {
      cleanup();
      return 1;
    }
  }
  const Percentiles p = ComputePercentiles(seconds);
  std::printf(
      "failover (kill -9 -> first accepted write), %zu rounds, lease TTL %d "
      "s: p50 %.3f s, p95 %.3f s, p99 %.3f s, max %.3f s\n",
      p.count, o.lease_ttl, p.p50, p.p95, p.p99, p.max);
  cleanup();
  std::filesystem::remove_all(o.dir);
  return 0;
}

}  // namespace
}  // namespace mentat::bench

int main(int argc, char** argv) {
  mentat::bench::Options o;
  mentat::bench::ToolArgs args(
      argc, argv,
      "usage: failover --mentatd PATH [--etcd PATH] [--rounds N] "
      "[--lease-ttl S] [--sync-commits true|false] [--dir DIR]");
  for (std::string a; args.Next(&a);) {
    if (a == "--mentatd") {
      o.mentatd = args.Value();
    } else if (a == "--etcd") {
      o.etcd = args.Value();
    } else if (a == "--dir") {
      o.dir = args.Value();
    } else if (a == "--rounds") {
      o.rounds = args.Int(1);
    } else if (a == "--lease-ttl") {
      o.lease_ttl = args.Int(1);
    } else if (a == "--sync-commits") {
      o.sync_commits = args.Bool();
    } else {
      args.Usage();
    }
  }
  if (o.mentatd.empty()) {
    std::cerr << "failover: --mentatd is required\n";
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);
  return mentat::bench::Run(o);
}
