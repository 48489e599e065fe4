#include "process_metrics.h"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>

namespace mentat::server {
namespace {

void Series(std::string* out, std::string_view name, std::string_view type,
            std::string_view help, double value) {
  char number[32];
  std::snprintf(number, sizeof number, "%.17g", value);
  out->append("# HELP ").append(name).append(" ").append(help);
  out->append("\n# TYPE ").append(name).append(" ").append(type);
  out->append("\n").append(name).append(" ").append(number).append("\n");
}

// Seconds since the epoch at which the system booted (/proc/stat btime).
bool BootTime(double* seconds) {
  std::ifstream in("/proc/stat");
  std::string key;
  while (in >> key) {
    if (key == "btime") return static_cast<bool>(in >> *seconds);
    in.ignore(1 << 20, '\n');
  }
  return false;
}

// Field 22 of /proc/self/stat: when the process started, in clock ticks
// after boot. The command name (field 2) may hold spaces and parentheses,
// so fields are counted after its last ')'.
bool StartTicks(double* ticks) {
  std::ifstream in("/proc/self/stat");
  std::string stat((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  const size_t paren = stat.rfind(')');
  if (paren == std::string::npos) return false;
  std::istringstream fields(stat.substr(paren + 2));
  std::string field;
  for (int i = 3; i <= 22; ++i) {
    if (!(fields >> field)) return false;
  }
  *ticks = std::stod(field);
  return true;
}

}  // namespace

void AppendProcessMetrics(std::string* out) {
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) == 0) {
    const double cpu =
        static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
        static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) /
            1e6;
    Series(out, "process_cpu_seconds_total", "counter",
           "Total user and system CPU time spent in seconds.", cpu);
  }
  const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
  std::ifstream statm("/proc/self/statm");
  double virtual_pages = 0;
  double resident_pages = 0;
  if (statm >> virtual_pages >> resident_pages) {
    Series(out, "process_virtual_memory_bytes", "gauge",
           "Virtual memory size in bytes.", virtual_pages * page);
    Series(out, "process_resident_memory_bytes", "gauge",
           "Resident memory size in bytes.", resident_pages * page);
  }
  std::error_code ec;
  double fds = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++fds;
  }
  if (!ec) {
    Series(out, "process_open_fds", "gauge", "Number of open file descriptors.",
           fds);
  }
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0) {
    Series(out, "process_max_fds", "gauge",
           "Maximum number of open file descriptors.",
           static_cast<double>(limit.rlim_cur));
  }
  double boot = 0;
  double ticks = 0;
  if (BootTime(&boot) && StartTicks(&ticks)) {
    Series(out, "process_start_time_seconds", "gauge",
           "Start time of the process since unix epoch in seconds.",
           boot + ticks / static_cast<double>(sysconf(_SC_CLK_TCK)));
  }
  out->append(
      "# HELP mentatd_build_info The mentatd build: its version and "
      "compiler (value 1).\n# TYPE mentatd_build_info gauge\n"
      "mentatd_build_info{version=\"" MENTATD_VERSION "\",compiler=\"");
#if defined(__clang__)
  out->append("clang " __clang_version__);
#elif defined(__GNUC__)
  out->append("gcc " __VERSION__);
#endif
  out->append("\"} 1\n");
}

}  // namespace mentat::server
