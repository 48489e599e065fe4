#include "metrics.h"

#include "mentat/base/str_cat.h"
#include "process_metrics.h"

namespace mentat::server {

std::string_view MethodName(Method m) {
  switch (m) {
    case Method::kTransact:
      return "Transact";
    case Method::kQuery:
      return "Query";
    case Method::kPull:
      return "Pull";
    case Method::kPullMany:
      return "PullMany";
    case Method::kDatoms:
      return "Datoms";
    case Method::kTxRange:
      return "TxRange";
    case Method::kSubscribe:
      return "Subscribe";
    case Method::kSchema:
      return "Schema";
    case Method::kStats:
      return "Stats";
    case Method::kExplain:
      return "Explain";
    case Method::kCreateDatabase:
      return "CreateDatabase";
    case Method::kListDatabases:
      return "ListDatabases";
    case Method::kDeleteDatabase:
      return "DeleteDatabase";
    case Method::kImport:
      return "Import";
    case Method::kBackup:
      return "Backup";
    case Method::kPing:
      return "Ping";
    case Method::kQueryFirst:
      return "QueryFirst";
    case Method::kFollow:
      return "Follow";
    case Method::kSnapshot:
      return "Snapshot";
    case Method::kAck:
      return "Ack";
    case Method::kCount:
      break;
  }
  return "unknown";
}

std::string_view StatusCodeName(int code) {
  static constexpr std::string_view kNames[] = {"OK",
                                                "CANCELLED",
                                                "UNKNOWN",
                                                "INVALID_ARGUMENT",
                                                "DEADLINE_EXCEEDED",
                                                "NOT_FOUND",
                                                "ALREADY_EXISTS",
                                                "PERMISSION_DENIED",
                                                "RESOURCE_EXHAUSTED",
                                                "FAILED_PRECONDITION",
                                                "ABORTED",
                                                "OUT_OF_RANGE",
                                                "UNIMPLEMENTED",
                                                "INTERNAL",
                                                "UNAVAILABLE",
                                                "DATA_LOSS",
                                                "UNAUTHENTICATED"};
  if (code < 0 || code >= Metrics::kCodes) return "UNKNOWN";
  return kNames[code];
}

void Metrics::RecordRpc(Method m, int code, double seconds) {
  const int mi = static_cast<int>(m);
  if (mi < 0 || mi >= kMethods) return;
  if (code < 0 || code >= kCodes) code = 2;
  Series& s = rpc_[mi][code];
  s.count.fetch_add(1, std::memory_order_relaxed);
  s.sum_ns.fetch_add(static_cast<uint64_t>(seconds * 1e9),
                     std::memory_order_relaxed);
  for (size_t b = 0; b < kBuckets.size(); ++b) {
    if (seconds <= kBuckets[b]) {
      s.buckets[b].fetch_add(1, std::memory_order_relaxed);
      break;
    }
  }
}

void Metrics::AddRowsStreamed(Method m, uint64_t n) {
  const int mi = static_cast<int>(m);
  if (mi < 0 || mi >= kMethods) return;
  rows_[mi].fetch_add(n, std::memory_order_relaxed);
}

namespace {

void Header(std::string* out, std::string_view name, std::string_view type,
            std::string_view help) {
  StrAppend(out, "# HELP ", name, " ", help, "\n# TYPE ", name, " ", type,
            "\n");
}

std::string FormatDouble(double d) {
  char buf[32];
  snprintf(buf, sizeof(buf), "%.9g", d);
  return buf;
}

}  // namespace

std::string Metrics::RenderPrometheus(
    const std::vector<DatabaseFigures>& dbs, int64_t reader_queue_depth,
    int reader_threads, const ConnectionFigures& connections) const {
  std::string out;
  out.reserve(16 << 10);
  Header(&out, "mentat_rpc_requests_total", "counter",
         "Finished RPCs by method and gRPC status code.");
  for (int m = 0; m < kMethods; ++m) {
    for (int c = 0; c < kCodes; ++c) {
      const uint64_t n = rpc_[m][c].count.load(std::memory_order_relaxed);
      if (n == 0) continue;
      StrAppend(&out, "mentat_rpc_requests_total{method=\"",
                MethodName(static_cast<Method>(m)), "\",code=\"",
                StatusCodeName(c), "\"} ", n, "\n");
    }
  }
  Header(&out, "mentat_rpc_duration_seconds", "histogram",
         "RPC latency (streams: until the last message) by method and code.");
  for (int m = 0; m < kMethods; ++m) {
    for (int c = 0; c < kCodes; ++c) {
      const Series& s = rpc_[m][c];
      const uint64_t n = s.count.load(std::memory_order_relaxed);
      if (n == 0) continue;
      const std::string labels =
          StrCat("method=\"", MethodName(static_cast<Method>(m)), "\",code=\"",
                 StatusCodeName(c), "\"");
      uint64_t cumulative = 0;
      for (size_t b = 0; b < kBuckets.size(); ++b) {
        cumulative += s.buckets[b].load(std::memory_order_relaxed);
        StrAppend(&out, "mentat_rpc_duration_seconds_bucket{", labels, ",le=\"",
                  FormatDouble(kBuckets[b]), "\"} ", cumulative, "\n");
      }
      StrAppend(&out, "mentat_rpc_duration_seconds_bucket{", labels,
                ",le=\"+Inf\"} ", n, "\n");
      StrAppend(&out, "mentat_rpc_duration_seconds_sum{", labels, "} ",
                FormatDouble(static_cast<double>(
                                 s.sum_ns.load(std::memory_order_relaxed)) /
                             1e9),
                "\n");
      StrAppend(&out, "mentat_rpc_duration_seconds_count{", labels, "} ", n,
                "\n");
    }
  }
  Header(&out, "mentat_stream_items_total", "counter",
         "Rows, datoms or transactions sent by streaming RPCs.");
  for (int m = 0; m < kMethods; ++m) {
    const uint64_t n = rows_[m].load(std::memory_order_relaxed);
    if (n == 0) continue;
    StrAppend(&out, "mentat_stream_items_total{method=\"",
              MethodName(static_cast<Method>(m)), "\"} ", n, "\n");
  }
  Header(&out, "mentat_open_streams", "gauge", "Streaming RPCs in progress.");
  StrAppend(&out, "mentat_open_streams ", open_streams.load(), "\n");
  Header(&out, "mentat_running_queries", "gauge", "Queries running now.");
  StrAppend(&out, "mentat_running_queries ", running_queries.load(), "\n");
  Header(&out, "mentat_subscribers", "gauge", "Open Subscribe streams.");
  StrAppend(&out, "mentat_subscribers ", subscribers.load(), "\n");
  Header(&out, "mentat_replication_followers", "gauge",
         "Open Replication.Follow streams (replicas following this node).");
  StrAppend(&out, "mentat_replication_followers ", followers.load(), "\n");
  Header(&out, "mentat_replication_bytes_sent_total", "counter",
         "Bytes of Follow and Snapshot messages sent.");
  StrAppend(&out, "mentat_replication_bytes_sent_total ",
            replication_bytes_sent.load(), "\n");
  Header(&out, "mentat_slow_queries_total", "counter",
         "Queries slower than --slow-query-ms.");
  StrAppend(&out, "mentat_slow_queries_total ", slow_queries_.load(), "\n");
  Header(&out, "mentat_reader_queue_depth", "gauge",
         "Tasks waiting for a reader thread.");
  StrAppend(&out, "mentat_reader_queue_depth ", reader_queue_depth, "\n");
  Header(&out, "mentat_reader_threads", "gauge", "Reader threads.");
  StrAppend(&out, "mentat_reader_threads ", reader_threads, "\n");
  Header(&out, "mentat_connections_accepted_total", "counter",
         "gRPC connections accepted and handed to gRPC.");
  StrAppend(&out, "mentat_connections_accepted_total ", connections.accepted,
            "\n");
  Header(&out, "mentat_connections_refused_total", "counter",
         "gRPC connections refused (--max-connections, --reserved-fds, "
         "out of descriptors).");
  StrAppend(&out, "mentat_connections_refused_total ", connections.refused,
            "\n");
  Header(&out, "mentat_connections_placeholder_total", "counter",
         "Placeholder connections handed to gRPC to take the callback "
         "API's completion queue's turns (server/grpc_listener.h).");
  StrAppend(&out, "mentat_connections_placeholder_total ",
            connections.placeholders, "\n");
  Header(&out, "mentat_connections_open", "gauge", "gRPC connections open.");
  StrAppend(&out, "mentat_connections_open ", connections.open, "\n");
  Header(&out, "mentat_descriptor_limit", "gauge",
         "RLIMIT_NOFILE (soft) of the process.");
  StrAppend(&out, "mentat_descriptor_limit ", connections.fd_limit, "\n");

  struct DbMetric {
    const char* name;
    const char* type;
    const char* help;
    uint64_t DatabaseFigures::*field;
  };
  static constexpr DbMetric kDbMetrics[] = {
      {"mentat_transactions_total", "counter",
       "Transactions committed since the database opened.",
       &DatabaseFigures::transactions},
      {"mentat_failed_transactions_total", "counter",
       "Transactions refused since the database opened.",
       &DatabaseFigures::failed_transactions},
      {"mentat_datoms_written_total", "counter",
       "Datoms written since the database opened.", &DatabaseFigures::datoms},
      {"mentat_group_commits_total", "counter",
       "Group commits (one fsync each); transactions/group commits is the "
       "mean group size.",
       &DatabaseFigures::groups},
      {"mentat_group_commit_largest", "gauge",
       "Largest group commit (transactions) since the database opened.",
       &DatabaseFigures::largest_group},
      {"mentat_transactor_queue_depth", "gauge",
       "Transactions waiting for the transactor.",
       &DatabaseFigures::queue_depth},
      {"mentat_clog_flushes_total", "counter",
       "Memtable flushes asked for because commits stepped over more than "
       "256 deleted keys of one busy entity or value.",
       &DatabaseFigures::clog_flushes},
      {"mentat_block_cache_hits_total", "counter", "RocksDB block cache hits.",
       &DatabaseFigures::block_cache_hits},
      {"mentat_block_cache_misses_total", "counter",
       "RocksDB block cache misses.", &DatabaseFigures::block_cache_misses},
      {"mentat_block_cache_usage_bytes", "gauge",
       "Bytes in the RocksDB block cache.",
       &DatabaseFigures::block_cache_usage},
      {"mentat_entity_cache_hits_total", "counter",
       "Entity reads answered by the entity cache.",
       &DatabaseFigures::entity_cache_hits},
      {"mentat_entity_cache_misses_total", "counter",
       "Entity reads that went to RocksDB.",
       &DatabaseFigures::entity_cache_misses},
      {"mentat_entity_cache_bytes", "gauge", "Bytes held by the entity cache.",
       &DatabaseFigures::entity_cache_bytes},
      {"mentat_value_cache_hits_total", "counter",
       "Attribute-and-value reads answered by the value cache.",
       &DatabaseFigures::value_cache_hits},
      {"mentat_value_cache_misses_total", "counter",
       "Attribute-and-value reads that went to RocksDB.",
       &DatabaseFigures::value_cache_misses},
      {"mentat_value_cache_bytes", "gauge", "Bytes held by the value cache.",
       &DatabaseFigures::value_cache_bytes},
      {"mentat_column_cache_hits_total", "counter",
       "Attribute scans answered by a column of the column cache.",
       &DatabaseFigures::column_cache_hits},
      {"mentat_column_cache_builds_total", "counter",
       "Columns built for attributes read in bulk.",
       &DatabaseFigures::column_cache_builds},
      {"mentat_column_cache_refused_total", "counter",
       "Columns not kept because each would take more than half the column "
       "cache (logged once each).",
       &DatabaseFigures::column_cache_refused},
      {"mentat_column_cache_bytes", "gauge", "Bytes held by the column cache.",
       &DatabaseFigures::column_cache_bytes},
      {"mentat_compaction_pending_bytes", "gauge",
       "RocksDB's estimate of bytes compaction still has to rewrite.",
       &DatabaseFigures::compaction_pending_bytes},
      {"mentat_running_compactions", "gauge", "RocksDB compactions running.",
       &DatabaseFigures::running_compactions},
      {"mentat_memtable_bytes", "gauge", "Bytes in RocksDB memtables.",
       &DatabaseFigures::memtable_bytes},
      {"mentat_disk_bytes", "gauge", "Size of the database's files.",
       &DatabaseFigures::disk_bytes},
      {"mentat_writes_stopped", "gauge",
       "1 while storage refuses writes or pauses compactions after an I/O "
       "error (a full disk); reads go on.",
       &DatabaseFigures::writes_stopped},
  };
  for (const DbMetric& m : kDbMetrics) {
    Header(&out, m.name, m.type, m.help);
    for (const DatabaseFigures& db : dbs) {
      StrAppend(&out, m.name, "{database=\"", db.name, "\"} ", db.*(m.field),
                "\n");
    }
  }
  Header(&out, "mentat_basis_tx", "gauge", "Latest committed transaction.");
  for (const DatabaseFigures& db : dbs) {
    StrAppend(&out, "mentat_basis_tx{database=\"", db.name, "\"} ", db.basis_tx,
              "\n");
  }
  RenderGrpcConventions(&out);
  AppendProcessMetrics(&out);
  return out;
}

namespace {

std::string_view GrpcType(Method m) {
  switch (m) {
    case Method::kQuery:
    case Method::kDatoms:
    case Method::kTxRange:
    case Method::kSubscribe:
    case Method::kFollow:
    case Method::kSnapshot:
      return "server_stream";
    case Method::kImport:
      return "client_stream";
    default:
      return "unary";
  }
}

// Follow and Snapshot belong to mentat.v1.Replication.
std::string_view GrpcService(Method m) {
  return m == Method::kFollow || m == Method::kSnapshot || m == Method::kAck
             ? "mentat.v1.Replication"
             : "mentat.v1.Mentat";
}

}  // namespace

void Metrics::RenderGrpcConventions(std::string* out) const {
  Header(out, "grpc_server_handled_total", "counter",
         "RPCs completed on the server, by method and status code.");
  for (int m = 0; m < kMethods; ++m) {
    const auto method = static_cast<Method>(m);
    for (int c = 0; c < kCodes; ++c) {
      const uint64_t n = rpc_[m][c].count.load(std::memory_order_relaxed);
      if (n == 0) continue;
      StrAppend(out, "grpc_server_handled_total{grpc_service=\"",
                GrpcService(method), "\",grpc_method=\"", MethodName(method),
                "\",grpc_type=\"", GrpcType(method), "\",grpc_code=\"",
                StatusCodeName(c), "\"} ", n, "\n");
    }
  }
  Header(out, "grpc_server_handling_seconds", "histogram",
         "Time from an RPC's start to its last message, by method.");
  for (int m = 0; m < kMethods; ++m) {
    const auto method = static_cast<Method>(m);
    uint64_t count = 0;
    uint64_t sum_ns = 0;
    std::array<uint64_t, kBuckets.size()> buckets{};
    for (int c = 0; c < kCodes; ++c) {
      const Series& s = rpc_[m][c];
      count += s.count.load(std::memory_order_relaxed);
      sum_ns += s.sum_ns.load(std::memory_order_relaxed);
      for (size_t b = 0; b < kBuckets.size(); ++b) {
        buckets[b] += s.buckets[b].load(std::memory_order_relaxed);
      }
    }
    if (count == 0) continue;
    const std::string labels =
        StrCat("grpc_service=\"", GrpcService(method), "\",grpc_method=\"",
               MethodName(method), "\",grpc_type=\"", GrpcType(method), "\"");
    uint64_t cumulative = 0;
    for (size_t b = 0; b < kBuckets.size(); ++b) {
      cumulative += buckets[b];
      StrAppend(out, "grpc_server_handling_seconds_bucket{", labels, ",le=\"",
                FormatDouble(kBuckets[b]), "\"} ", cumulative, "\n");
    }
    StrAppend(out, "grpc_server_handling_seconds_bucket{", labels,
              ",le=\"+Inf\"} ", count, "\n");
    StrAppend(out, "grpc_server_handling_seconds_sum{", labels, "} ",
              FormatDouble(static_cast<double>(sum_ns) / 1e9), "\n");
    StrAppend(out, "grpc_server_handling_seconds_count{", labels, "} ", count,
              "\n");
  }
}

}  // namespace mentat::server
