#ifndef MENTAT_SERVER_TESTING_ETCD_PROCESS_H_
#define MENTAT_SERVER_TESTING_ETCD_PROCESS_H_

// Test support: a real etcd (Debian's etcd-server, deploy/install-deps.sh
// installs it for `make test`) as a child process on free loopback ports
// with a data directory of its own. The cluster tests skip, saying why,
// only when the binary is absent.

#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "test_support.h"  // HttpGet
#include "testing/mentatd_process.h"

namespace mentat::server::testing {

// The etcd binary: $ETCD_BINARY, else the first of /usr/bin/etcd (Debian)
// and /usr/local/bin/etcd that exists; empty if none.
inline std::string EtcdBinary() {
  if (const char* env = std::getenv("ETCD_BINARY"); env != nullptr && *env) {
    return env;
  }
  for (const char* path : {"/usr/bin/etcd", "/usr/local/bin/etcd"}) {
    if (access(path, X_OK) == 0) return path;
  }
  return "";
}

// A loopback port nobody listens on now (the kernel's choice for port 0).
// etcd binds it a moment later; another process taking it in between
// would make etcd fail to start, which the test reports.
inline int FreeLoopbackPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  socklen_t len = sizeof(addr);
  REQUIRE(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  close(fd);
  return ntohs(addr.sin_port);
}

// True once something accepts TCP connections on 127.0.0.1:`port`.
inline bool Accepts(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  const bool ok =
      connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return ok;
}

// One etcd member, a cluster of its own, data in `dir`/etcd; its log in
// `dir`/etcd.log. The destructor kills it (SIGKILL).
class EtcdProcess {
 public:
  explicit EtcdProcess(const std::string& dir)
      : binary_(EtcdBinary()), log_path_(dir + "/etcd.log") {
    if (binary_.empty()) return;
    std::filesystem::create_directories(dir);
    client_port_ = FreeLoopbackPort();
    const int peer_port = FreeLoopbackPort();
    const std::string client =
        "http://127.0.0.1:" + std::to_string(client_port_);
    const std::string peer = "http://127.0.0.1:" + std::to_string(peer_port);
    std::vector<std::string> args = {
        binary_,        "--name",
        "test",         "--data-dir",
        dir + "/etcd",  "--listen-client-urls",
        client,         "--advertise-client-urls",
        client,         "--listen-peer-urls",
        peer,           "--initial-advertise-peer-urls",
        peer,           "--initial-cluster",
        "test=" + peer, "--log-level",
        "warn"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, log_path_.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    REQUIRE(posix_spawn(&pid_, binary_.c_str(), &actions, nullptr, argv.data(),
                        environ) == 0);
    posix_spawn_file_actions_destroy(&actions);
  }
  ~EtcdProcess() { Kill(); }
  EtcdProcess(const EtcdProcess&) = delete;
  EtcdProcess& operator=(const EtcdProcess&) = delete;

  // False when no etcd binary is installed: the caller skips, saying so.
  bool available() const { return !binary_.empty(); }

  // Waits (up to 20 s, polling) until etcd accepts connections on its
  // client port; false if it exited or did not.
  bool WaitReady() {
    const auto until =
        std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < until) {
      // The port opens before etcd serves: its /health says when.
      if (Accepts(client_port_) && Healthy()) return true;
      int status;
      if (pid_ > 0 && waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = 0;
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }

  // True if etcd's /health answers {"health":"true"}.
  bool Healthy() const {
    try {
      int status = 0;
      const std::string body = HttpGet(client_port_, "/health", &status);
      return status == 200 &&
             body.find("\"health\":\"true\"") != std::string::npos;
    } catch (const std::exception&) {
      return false;
    }
  }

  // "127.0.0.1:PORT", what --etcd takes.
  std::string endpoint() const {
    return "127.0.0.1:" + std::to_string(client_port_);
  }
  std::string log() const { return ReadAll(log_path_); }

  void Kill() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    int status;
    waitpid(pid_, &status, 0);
    pid_ = 0;
  }

 private:
  std::string binary_;
  std::string log_path_;
  int client_port_ = 0;
  pid_t pid_ = 0;
};

}  // namespace mentat::server::testing

#endif  // MENTAT_SERVER_TESTING_ETCD_PROCESS_H_
