#ifndef MENTAT_SERVER_METRICS_H_
#define MENTAT_SERVER_METRICS_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mentat::server {

// The RPCs of mentat.v1.Mentat, for per-method metrics.
enum class Method : int {
  kTransact = 0,
  kQuery,
  kPull,
  kPullMany,
  kDatoms,
  kTxRange,
  kSubscribe,
  kSchema,
  kStats,
  kExplain,
  kCreateDatabase,
  kListDatabases,
  kDeleteDatabase,
  kImport,
  kBackup,
  kPing,
  kQueryFirst,
  // mentat.v1.Replication.
  kFollow,
  kSnapshot,
  kAck,
  kCount,
};

std::string_view MethodName(Method m);

// Figures of one open database, gathered when /metrics is scraped.
struct DatabaseFigures {
  std::string name;
  int64_t basis_tx = 0;
  uint64_t transactions = 0;
  uint64_t failed_transactions = 0;
  uint64_t datoms = 0;
  uint64_t groups = 0;
  uint64_t largest_group = 0;
  uint64_t queue_depth = 0;
  uint64_t clog_flushes = 0;
  uint64_t block_cache_hits = 0;
  uint64_t block_cache_misses = 0;
  uint64_t block_cache_usage = 0;
  uint64_t entity_cache_hits = 0;
  uint64_t entity_cache_misses = 0;
  uint64_t entity_cache_bytes = 0;
  uint64_t value_cache_hits = 0;
  uint64_t value_cache_misses = 0;
  uint64_t value_cache_bytes = 0;
  uint64_t column_cache_hits = 0;
  uint64_t column_cache_builds = 0;
  uint64_t column_cache_refused = 0;
  uint64_t column_cache_bytes = 0;
  uint64_t compaction_pending_bytes = 0;
  uint64_t running_compactions = 0;
  uint64_t memtable_bytes = 0;
  uint64_t disk_bytes = 0;
  // 1 while RocksDB holds a background error (Store::WriteHealth).
  uint64_t writes_stopped = 0;
};

// The server's counters: RPC counts and latency histograms by method and
// status code, open streams, running queries. Lock-free; any thread may
// record. Rendered in Prometheus' text format.
class Metrics {
 public:
  static constexpr int kCodes = 17;  // gRPC status codes 0..16
  static constexpr std::array<double, 16> kBuckets = {
      0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
      0.05,   0.1,     0.25,   0.5,   1.0,    2.5,   5.0,  10.0};

  // One finished RPC: its method, gRPC status code and latency.
  void RecordRpc(Method m, int code, double seconds);

  // Rows and datoms sent by streams.
  void AddRowsStreamed(Method m, uint64_t n);
  void AddSlowQuery() { slow_queries_.fetch_add(1, std::memory_order_relaxed); }

  std::atomic<int64_t> open_streams{0};
  std::atomic<int64_t> running_queries{0};
  std::atomic<int64_t> subscribers{0};
  // Replication, on whoever serves it: open Follow streams, and bytes sent
  // by Follow and Snapshot.
  std::atomic<int64_t> followers{0};
  std::atomic<uint64_t> replication_bytes_sent{0};

  // The gRPC listener's figures (GrpcListener::Counters).
  struct ConnectionFigures {
    int64_t accepted = 0;
    int64_t refused = 0;
    int64_t open = 0;
    int64_t fd_limit = 0;
    int64_t placeholders = 0;
  };

  // The whole exposition: the server's counters, then the databases'.
  std::string RenderPrometheus(const std::vector<DatabaseFigures>& dbs,
                               int64_t reader_queue_depth, int reader_threads,
                               const ConnectionFigures& connections) const;

 private:
  // The same RPC figures under the grpc-ecosystem names
  // (grpc_server_handled_total, grpc_server_handling_seconds), which
  // dashboards made for any gRPC server read.
  void RenderGrpcConventions(std::string* out) const;

  struct Series {
    std::atomic<uint64_t> count{0};
    std::atomic<uint64_t> sum_ns{0};
    std::array<std::atomic<uint64_t>, kBuckets.size()> buckets{};
  };
  static constexpr int kMethods = static_cast<int>(Method::kCount);
  std::array<std::array<Series, kCodes>, kMethods> rpc_;
  std::array<std::atomic<uint64_t>, kMethods> rows_{};
  std::atomic<uint64_t> slow_queries_{0};
};

// The name of a gRPC status code ("OK", "NOT_FOUND"), for labels.
std::string_view StatusCodeName(int code);

}  // namespace mentat::server

#endif  // MENTAT_SERVER_METRICS_H_
