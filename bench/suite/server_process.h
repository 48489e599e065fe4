#ifndef MENTAT_BENCH_SUITE_SERVER_PROCESS_H_
#define MENTAT_BENCH_SUITE_SERVER_PROCESS_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace mentat::bench {

// A mentatd the benchmark starts itself (for cold_vs_warm restarts and
// for reading its RSS): listens on a unix socket, pinned to `cpus` (a list
// like "0" or "2-3"; empty: unpinned). Not thread-safe.
class ServerProcess {
 public:
  ServerProcess(std::string binary, std::string data_dir, std::string cpus,
                std::vector<std::string> extra_args);
  ~ServerProcess();

  // Starts mentatd and waits until the socket accepts calls.
  [[nodiscard]] absl::Status Start();
  // SIGTERM and wait (graceful shutdown).
  void Stop();

  std::string address() const { return "unix:" + socket_; }
  pid_t pid() const { return pid_; }
  const std::string& binary() const { return binary_; }
  std::string command_line() const;
  // Resident set size of the server, in bytes (0 if unknown).
  int64_t RssBytes() const;

 private:
  std::vector<std::string> Args() const;

  std::string binary_, data_dir_, cpus_, socket_;
  std::vector<std::string> extra_args_;
  pid_t pid_ = -1;
};

// Parses "0,2-3" into CPU numbers.
std::vector<int> ParseCpuList(const std::string& list);
// Pins the calling process (every later thread) to `cpus`; no-op if empty.
[[nodiscard]] absl::Status PinProcess(const std::string& cpus);

}  // namespace mentat::bench

#endif  // MENTAT_BENCH_SUITE_SERVER_PROCESS_H_
