#ifndef MENTAT_SERVER_PROCESS_METRICS_H_
#define MENTAT_SERVER_PROCESS_METRICS_H_

#include <string>

namespace mentat::server {

// Appends the series every Prometheus client library exports for its
// process (process_cpu_seconds_total, process_resident_memory_bytes,
// process_virtual_memory_bytes, process_open_fds, process_max_fds,
// process_start_time_seconds), read from /proc and getrusage at scrape
// time, and mentatd_build_info (its version and compiler, value 1). A
// figure that cannot be read is left out rather than reported as 0.
// Thread-safe.
void AppendProcessMetrics(std::string* out);

}  // namespace mentat::server

#endif  // MENTAT_SERVER_PROCESS_METRICS_H_
