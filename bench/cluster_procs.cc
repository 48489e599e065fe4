#include "cluster_procs.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <regex>
#include <sstream>
#include <thread>

#include "mentat/base/str_cat.h"

extern char** environ;

namespace mentat::bench {

using Clock = std::chrono::steady_clock;

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

Etcd StartEtcd(const std::string& etcd_binary, const std::string& dir) {
  const int client_port = FreePort();
  const int peer_port = FreePort();
  const std::string client = StrCat("http://127.0.0.1:", client_port);
  const std::string peer = StrCat("http://127.0.0.1:", peer_port);
  Etcd e;
  e.pid =
      Spawn({etcd_binary, "--name", "bench", "--data-dir", dir + "/etcd",
             "--listen-client-urls", client, "--advertise-client-urls", client,
             "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
             "--initial-cluster", "bench=" + peer, "--log-level", "warn"},
            dir + "/etcd.log");
  e.endpoint = StrCat("127.0.0.1:", client_port);
  return e;
}

bool StartNode(const ClusterNodeOptions& o, int incarnation, Node* n) {
  n->log = StrCat(o.dir, "/", n->id, ".", incarnation, ".log");
  std::vector<std::string> args = {
      o.mentatd,
      "--data-dir",
      n->data_dir,
      "--listen",
      "127.0.0.1:0",
      "--http",
      "127.0.0.1:0",
      "--sync-commits=" + std::string(o.sync_commits ? "true" : "false"),
      "--cluster",
      "bench",
      "--etcd",
      o.etcd_endpoint,
      "--node-id",
      n->id,
      "--lease-ttl",
      std::to_string(o.lease_ttl)};
  args.insert(args.end(), o.extra.begin(), o.extra.end());
  n->pid = Spawn(args, n->log);
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

grpc::Status Write(Node& n, const std::string& edn, int timeout_ms, int64_t* tx,
                   const std::string& request_id) {
  v1::TransactRequest req;
  req.set_tx_data(edn);
  req.set_request_id(request_id);
  v1::TransactResponse resp;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() +
                   std::chrono::milliseconds(timeout_ms));
  grpc::Status s = n.stub->Transact(&ctx, req, &resp);
  if (s.ok() && tx != nullptr) *tx = resp.tx();
  return s;
}

bool WaitForBasis(Node& n, int64_t tx) {
  const auto until = Clock::now() + std::chrono::seconds(60);
  while (Clock::now() < until) {
    // A plain read, polled: a read waiting with min_basis_tx would hold
    // the node's copy of the database open, and a former primary moves
    // that copy aside and bootstraps it again (its discarded tail).
    v1::StatsRequest req;
    v1::StatsResponse resp;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() +
                     std::chrono::seconds(10));
    if (n.stub->Stats(&ctx, req, &resp).ok() && resp.basis_tx() >= tx) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

}  // namespace mentat::bench
