#include "suite/server_process.h"

#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <thread>

#include "mentat/base/str_cat.h"
#include "mentat/client/client.h"

namespace mentat::bench {

std::vector<int> ParseCpuList(const std::string& list) {
  std::vector<int> cpus;
  size_t pos = 0;
  while (pos < list.size()) {
    size_t comma = list.find(',', pos);
    if (comma == std::string::npos) comma = list.size();
    const std::string part = list.substr(pos, comma - pos);
    const size_t dash = part.find('-');
    if (!part.empty()) {
      const int a = std::stoi(part.substr(0, dash));
      const int b =
          dash == std::string::npos ? a : std::stoi(part.substr(dash + 1));
      for (int c = a; c <= b; ++c) cpus.push_back(c);
    }
    pos = comma + 1;
  }
  return cpus;
}

absl::Status PinProcess(const std::string& cpus) {
  if (cpus.empty()) return absl::OkStatus();
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : ParseCpuList(cpus)) CPU_SET(c, &set);
  if (sched_setaffinity(0, sizeof(set), &set) != 0) {
    return absl::InvalidArgumentError(StrCat("cannot pin to CPUs ", cpus));
  }
  return absl::OkStatus();
}

namespace {

// One socket per process the benchmark starts (replica-lag starts several).
std::string NextSocketPath() {
  static std::atomic<int> n{0};
  const int i = n.fetch_add(1);
  return i == 0 ? StrCat("/tmp/mentat-bench-", ::getpid(), ".sock")
                : StrCat("/tmp/mentat-bench-", ::getpid(), "-", i, ".sock");
}

}  // namespace

ServerProcess::ServerProcess(std::string binary, std::string data_dir,
                             std::string cpus,
                             std::vector<std::string> extra_args)
    : binary_(std::move(binary)),
      data_dir_(std::move(data_dir)),
      cpus_(std::move(cpus)),
      socket_(NextSocketPath()),
      extra_args_(std::move(extra_args)) {}

ServerProcess::~ServerProcess() { Stop(); }

std::vector<std::string> ServerProcess::Args() const {
  std::vector<std::string> args = {
      binary_,   "--data-dir=" + data_dir_, "--listen=unix:" + socket_,
      "--http=", "--create-default=true",   "--log-level=warn"};
  args.insert(args.end(), extra_args_.begin(), extra_args_.end());
  return args;
}

std::string ServerProcess::command_line() const {
  std::string s = cpus_.empty() ? "" : "taskset -c " + cpus_ + " ";
  for (const std::string& a : Args()) s += a + " ";
  return s;
}

absl::Status ServerProcess::Start() {
  ::unlink(socket_.c_str());
  const std::vector<std::string> args = Args();
  pid_ = ::fork();
  if (pid_ < 0) return absl::UnavailableError("fork failed");
  if (pid_ == 0) {
    if (!PinProcess(cpus_).ok()) _exit(126);
    std::vector<char*> argv;
    for (const std::string& a : args)
      argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    _exit(127);
  }
  client::ClientOptions options;
  options.address = address();
  auto client = client::Client::Connect(options);
  if (!client.ok()) return client.status();
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (std::chrono::steady_clock::now() < deadline) {
    int status;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return absl::UnavailableError(
          StrCat("mentatd exited at start: ", command_line()));
    }
    if (::access(socket_.c_str(), F_OK) == 0 &&
        (*client)->ListDatabases().ok()) {
      return absl::OkStatus();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return absl::DeadlineExceededError("mentatd did not start in 120 s");
}

void ServerProcess::Stop() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  int status;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
}

int64_t ServerProcess::RssBytes() const {
  if (pid_ <= 0) return 0;
  std::ifstream in(StrCat("/proc/", pid_, "/status"));
  std::string key;
  while (in >> key) {
    if (key == "VmRSS:") {
      int64_t kb = 0;
      in >> kb;
      return kb * 1024;
    }
    std::string rest;
    std::getline(in, rest);
  }
  return 0;
}

}  // namespace mentat::bench
