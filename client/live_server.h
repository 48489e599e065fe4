#ifndef MENTAT_CLIENT_LIVE_SERVER_H_
#define MENTAT_CLIENT_LIVE_SERVER_H_

// For the client's tests against a live mentatd (MENTATD_BINARY, the
// build's): a server on a free loopback port and its own data directory,
// which a test can kill and start again, and a client connected to it.

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
#include <memory>
#include <string>
#include <vector>

#include "mentat/client/client.h"

extern char** environ;

namespace mentat::client::testing {

inline int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr = {};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

// mentatd on a fixed port and data dir, which can be killed and started
// again.
class TestServer {
 public:
  // `extra`: more mentatd flags (--replica-of ...).
  explicit TestServer(std::vector<std::string> extra = {})
      : extra_(std::move(extra)) {
    char tmpl[] = "/tmp/mentat-client-test-XXXXXX";
    dir_ = mkdtemp(tmpl);
    address_ = "127.0.0.1:" + std::to_string(FreePort());
    Start();
  }
  ~TestServer() {
    Kill(SIGTERM);
    std::filesystem::remove_all(dir_);
  }

  void Start() {
    const std::string data = "--data-dir=" + dir_ + "/data";
    const std::string listen = "--listen=" + address_;
    const std::string log = dir_ + "/mentatd.log";
    std::vector<char*> argv = {
        const_cast<char*>(MENTATD_BINARY), const_cast<char*>(data.c_str()),
        const_cast<char*>(listen.c_str()), const_cast<char*>("--http=")};
    for (std::string& e : extra_) argv.push_back(e.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(),
                                     O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    REQUIRE(posix_spawn(&pid_, MENTATD_BINARY, &actions, nullptr, argv.data(),
                        environ) == 0);
    posix_spawn_file_actions_destroy(&actions);
  }

  void Kill(int signal) {
    if (pid_ <= 0) return;
    kill(pid_, signal);
    kill(pid_, SIGCONT);  // a paused server takes the signal
    int status;
    waitpid(pid_, &status, 0);
    pid_ = -1;
  }

  // Stops the server's process without ending it (SIGSTOP): its sockets
  // stay open and take bytes, and nothing answers, until Resume.
  // Returns once it has stopped, so no thread of it is still mid-answer.
  void Pause() {
    kill(pid_, SIGSTOP);
    int status = 0;
    REQUIRE(waitpid(pid_, &status, WUNTRACED) == pid_);
    REQUIRE(WIFSTOPPED(status));
  }
  void Resume() { kill(pid_, SIGCONT); }

  const std::string& address() const { return address_; }

 private:
  std::vector<std::string> extra_;
  std::string dir_;
  std::string address_;
  pid_t pid_ = -1;
};

inline std::unique_ptr<Client> Connected(const TestServer& server) {
  ClientOptions options;
  options.address = server.address();
  absl::StatusOr<std::unique_ptr<Client>> client = Client::Connect(options);
  REQUIRE(client.ok());
  REQUIRE((*client)->WaitForConnected(std::chrono::seconds(20)).ok());
  return std::move(*client);
}

}  // namespace mentat::client::testing

#endif  // MENTAT_CLIENT_LIVE_SERVER_H_
