#ifndef MENTAT_SERVER_MENTATD_PROCESS_H_
#define MENTAT_SERVER_MENTATD_PROCESS_H_

// Test support: mentatd as a child process (the process and crash tests).

#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <chrono>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

extern char** environ;

namespace mentat::server::testing {

inline std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The MENTATD_BINARY built beside the tests, run with `args`, the caller's
// environment without its MENTATD_* variables plus `env`, and stdout and
// stderr in `log_path`; with `fd_limit` > 0, under that RLIMIT_NOFILE (soft
// and hard, so mentatd cannot raise it). The destructor kills it (SIGKILL)
// if it still runs.
class MentatdProcess {
 public:
  MentatdProcess(std::vector<std::string> args, std::vector<std::string> env,
                 const std::string& log_path, int fd_limit = 0)
      : log_path_(log_path) {
    std::vector<std::string> argv_s = {MENTATD_BINARY};
    if (fd_limit > 0) {
      // The shell sets both limits and execs mentatd (same pid).
      argv_s = {
          "/bin/sh", "-c",
          "ulimit -n " + std::to_string(fd_limit) + " && exec \"$0\" \"$@\"",
          MENTATD_BINARY};
    }
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<std::string> env_s;
    for (char** e = environ; *e != nullptr; ++e) {
      if (std::string_view(*e).starts_with("MENTATD_")) continue;
      env_s.push_back(*e);
    }
    env_s.insert(env_s.end(), env.begin(), env.end());
    std::vector<char*> envp;
    for (auto& e : env_s) envp.push_back(e.data());
    envp.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, log_path.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    REQUIRE(posix_spawn(&pid_, argv_s[0].c_str(), &actions, nullptr,
                        argv.data(), envp.data()) == 0);
    posix_spawn_file_actions_destroy(&actions);
  }
  ~MentatdProcess() { Kill(); }
  MentatdProcess(const MentatdProcess&) = delete;
  MentatdProcess& operator=(const MentatdProcess&) = delete;

  // The gRPC port from the startup line; -1 when it serves only a unix
  // socket; 0 once the process exited or after `timeout`.
  int WaitForPort(
      std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    static const std::regex kPort(R"(serving gRPC on \S+ \(port (\d+)\))");
    const auto until = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < until) {
      std::smatch m;
      const std::string log = ReadAll(log_path_);
      if (std::regex_search(log, m, kPort)) return std::stoi(m[1]);
      if (log.find("serving gRPC on") != std::string::npos) return -1;
      int status;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = 0;
        exit_status_ = status;
        return 0;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return 0;
  }
  // True once `text` appears in the log (within 10 seconds).
  bool WaitForLog(const std::string& text) {
    for (int i = 0; i < 1000; ++i) {
      if (ReadAll(log_path_).find(text) != std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }
  void Signal(int sig) { kill(pid_, sig); }
  pid_t pid() const { return pid_; }
  // The exit status (as waitpid reports it).
  int Wait() {
    if (pid_ > 0) {
      waitpid(pid_, &exit_status_, 0);
      pid_ = 0;
    }
    return exit_status_;
  }
  // SIGKILL, and reap. Idempotent.
  void Kill() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    Wait();
  }
  std::string log() const { return ReadAll(log_path_); }

 private:
  std::string log_path_;
  pid_t pid_ = 0;
  int exit_status_ = 0;
};

}  // namespace mentat::server::testing

#endif  // MENTAT_SERVER_MENTATD_PROCESS_H_
