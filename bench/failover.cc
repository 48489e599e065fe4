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

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "grpcpp/grpcpp.h"
#include "mentat/base/str_cat.h"
#include "mentat/v1/mentat.grpc.pb.h"
#include "stats_util.h"

extern char** environ;

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

int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

pid_t Spawn(const std::vector<std::string>& args, const std::string& log) {
  std::vector<std::string> copy = args;
  std::vector<char*> argv;
  for (auto& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = -1;
  if (posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ) !=
      0) {
    pid = -1;
  }
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

void KillAndReap(pid_t pid) {
  if (pid <= 0) return;
  kill(pid, SIGKILL);
  int status;
  waitpid(pid, &status, 0);
}

struct Node {
  std::string id;
  std::string data_dir;
  std::string log;
  pid_t pid = -1;
  std::string address;
  std::unique_ptr<v1::Mentat::Stub> stub;
};

bool StartNode(const Options& o, const std::string& etcd, int incarnation,
               Node* n) {
  n->log = StrCat(o.dir, "/", n->id, ".", incarnation, ".log");
  n->pid =
      Spawn({o.mentatd, "--data-dir", n->data_dir, "--listen", "127.0.0.1:0",
             "--http", "127.0.0.1:0",
             "--sync-commits=" + std::string(o.sync_commits ? "true" : "false"),
             "--cluster", "bench", "--etcd", etcd, "--node-id", n->id,
             "--lease-ttl", std::to_string(o.lease_ttl)},
            n->log);
  static const std::regex kPort(R"(serving gRPC on \S+ \(port (\d+)\))");
  const auto until = Clock::now() + std::chrono::seconds(30);
  while (Clock::now() < until) {
    std::smatch m;
    const std::string text = ReadAll(n->log);
    if (std::regex_search(text, m, kPort)) {
      n->address = StrCat("127.0.0.1:", m[1].str());
      n->stub = v1::Mentat::NewStub(
          grpc::CreateChannel(n->address, grpc::InsecureChannelCredentials()));
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::cerr << n->id << " did not start:\n" << ReadAll(n->log);
  return false;
}

grpc::Status Write(Node& n, const std::string& edn, int timeout_ms,
                   int64_t* tx) {
  v1::TransactRequest req;
  req.set_tx_data(edn);
  v1::TransactResponse resp;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() +
                   std::chrono::milliseconds(timeout_ms));
  grpc::Status s = n.stub->Transact(&ctx, req, &resp);
  if (s.ok() && tx != nullptr) *tx = resp.tx();
  return s;
}

// True once `n` has published `tx` (a read with min_basis_tx, retried
// while its copy of the database is still bootstrapping).
bool WaitForBasis(Node& n, int64_t tx) {
  const auto until = Clock::now() + std::chrono::seconds(60);
  while (Clock::now() < until) {
    v1::QueryRequest req;
    req.set_query("[:find ?e . :where [?e :db/ident :bench/round]]");
    req.set_min_basis_tx(tx);
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() +
                     std::chrono::seconds(10));
    auto reader = n.stub->Query(&ctx, req);
    v1::QueryResponse resp;
    while (reader->Read(&resp)) {
    }
    if (reader->Finish().ok()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

int Run(const Options& o) {
  std::filesystem::remove_all(o.dir);
  std::filesystem::create_directories(o.dir);
  const int client_port = FreePort();
  const int peer_port = FreePort();
  const std::string client = StrCat("http://127.0.0.1:", client_port);
  const std::string peer = StrCat("http://127.0.0.1:", peer_port);
  const pid_t etcd =
      Spawn({o.etcd, "--name", "bench", "--data-dir", o.dir + "/etcd",
             "--listen-client-urls", client, "--advertise-client-urls", client,
             "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
             "--initial-cluster", "bench=" + peer, "--log-level", "warn"},
            o.dir + "/etcd.log");
  if (etcd <= 0) {
    std::cerr << "cannot start " << o.etcd << "\n";
    return 1;
  }
  const std::string endpoint = StrCat("127.0.0.1:", client_port);
  std::vector<Node> nodes(3);
  std::vector<int> incarnation(3, 0);
  auto cleanup = [&] {
    for (Node& n : nodes) KillAndReap(n.pid);
    KillAndReap(etcd);
  };
  for (int i = 0; i < 3; ++i) {
    nodes[i].id = StrCat("n", i + 1);
    nodes[i].data_dir = StrCat(o.dir, "/", nodes[i].id);
    if (!StartNode(o, endpoint, 0, &nodes[i])) {
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
    if (!StartNode(o, endpoint, ++incarnation[primary], &nodes[primary])) {
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
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << a << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--mentatd") {
      o.mentatd = value();
    } else if (a == "--etcd") {
      o.etcd = value();
    } else if (a == "--dir") {
      o.dir = value();
    } else if (a == "--rounds") {
      o.rounds = std::stoi(value());
    } else if (a == "--lease-ttl") {
      o.lease_ttl = std::stoi(value());
    } else if (a == "--sync-commits") {
      o.sync_commits = value() == "true";
    } else {
      std::cerr << "usage: failover --mentatd PATH [--etcd PATH] [--rounds N] "
                   "[--lease-ttl S] [--sync-commits true|false] [--dir DIR]\n";
      return 2;
    }
  }
  if (o.mentatd.empty() || o.rounds < 1) {
    std::cerr << "failover: --mentatd is required\n";
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);
  return mentat::bench::Run(o);
}
