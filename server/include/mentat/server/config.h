#ifndef MENTAT_SERVER_CONFIG_H_
#define MENTAT_SERVER_CONFIG_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace rocksdb {
class Env;
}

namespace mentat::server {

// Everything mentatd can be told. Plain struct; every field has the default
// `mentatd --help` prints. Set from (later wins) the built-in defaults, a
// config file (--config), MENTATD_* environment variables, and flags.
struct ServerConfig {
  // Where databases live: one directory per database, <data_dir>/<name>.
  std::string data_dir = "./data";
  // gRPC address: "host:port" ("127.0.0.1:0" picks a free port) or
  // "unix:/path/to/socket". Several may be given, comma-separated.
  std::string listen = "127.0.0.1:7878";
  // HTTP address for /metrics and /healthz ("host:port"); empty: off.
  // Beside the gRPC port; not 9090, which is Prometheus's own (a
  // Prometheus on the same machine would not start, or mentatd would not).
  std::string http = "127.0.0.1:7879";

  // Reader threads per NUMA node; 0: one per CPU of the node (at least 2).
  int readers_per_node = 0;
  // Pin reader threads to their node's CPUs (when libnuma works).
  bool pin_readers = true;
  // Threads that serve Ping, QueryFirst and Pull, each polling its own
  // gRPC completion queue (async_unary.h); 0: one per CPU (at least 2).
  int unary_threads = 0;
  // Microseconds a unary thread keeps polling its queue after its last
  // event before it sleeps; 0: it sleeps at once. On a VM a vCPU that
  // sleeps takes tens of microseconds to wake for the next call: a client
  // calling back to back on an otherwise idle 2-core VM measured ping
  // 0.086-0.094 -> 0.036-0.038 ms p50, q1 0.100-0.103 -> 0.038-0.040, and
  // throughput at 8 to 128 clients within the runs' noise (the poll
  // yields to any thread with work). The cost: up to this long of one
  // CPU after each call when calls are sparse; 0 on a host whose CPUs are
  // shared with other work.
  int unary_spin_us = 100;
  // gRPC's poller (mentatd sets GRPC_POLL_STRATEGY from it before gRPC
  // starts). "poll": each completion queue polls for itself, so that the
  // thread that reads a Ping, QueryFirst or Pull also answers it; measured
  // at a fifth of the context switches and half the server CPU of
  // "epoll1" per point read. "epoll1": one epoll set shared by every
  // thread, which scales better past many thousands of connections.
  std::string grpc_poll_strategy = "poll";
  // Run single-entity Pulls on the gRPC thread instead of handing them to
  // a reader (they cost less than the hand-off).
  bool inline_point_reads = true;
  // Queries (Query, Explain) admitted at once, running or queued for a
  // reader; more get RESOURCE_EXHAUSTED. 256 lets the workload's 128
  // concurrent clients (the bench's largest sweep point) run with room to
  // spare; it also bounds the spare reader threads started for queries
  // parked on slow clients.
  int max_concurrent_queries = 256;
  // Most bytes one query's intermediate results may hold.
  size_t query_memory_bytes = size_t{1} << 30;
  // Limits of every Query, Pull, PullMany and profiled Explain.
  // The time limit of a call that sets no gRPC deadline and no timeout_ms
  // (milliseconds; 0: none). A call's own deadline or timeout_ms replaces
  // it, shorter or longer, up to query_timeout_max_ms.
  int64_t query_timeout_ms = 60000;
  // The longest time limit a call may ask for with its deadline or
  // timeout_ms (milliseconds; 0: no ceiling). Also caps query_timeout_ms.
  int64_t query_timeout_max_ms = 3600000;
  // Most datoms and rows one query or pull may step through before
  // RESOURCE_EXHAUSTED (QueryOptions::max_rows_scanned; 0: no limit).
  uint64_t query_scan_limit = 1000000000;
  // Largest pull result, in bytes as the server builds it (about 80 per
  // value plus its text): one Pull, all of one PullMany, one pulled value of
  // a query row (QueryOptions::max_pull_bytes; 0: no cap).
  size_t pull_max_bytes = size_t{256} << 20;
  // Rows per Query message unless the request asks otherwise.
  int batch_rows = 1000;
  // A query that runs longer than this is logged (milliseconds; 0: all).
  int64_t slow_query_ms = 200;
  // Largest gRPC message accepted or sent.
  int max_message_bytes = 64 << 20;

  // Storage (per database).
  size_t block_cache_bytes = size_t{512} << 20;
  // Decoded entities in front of RocksDB (StoreOptions::entity_cache_bytes).
  size_t entity_cache_bytes = size_t{512} << 20;
  // Fill it in the background when a database opens, up to three quarters
  // (StoreOptions::warm_entity_cache).
  bool warm_entity_cache = true;
  // Attribute-and-value lookups (StoreOptions::value_cache_bytes).
  size_t value_cache_bytes = size_t{128} << 20;
  // Columns of attributes read in bulk (StoreOptions::column_cache_bytes).
  size_t column_cache_bytes = size_t{512} << 20;
  // All memtables together (StoreOptions::memtable_budget_bytes).
  size_t memtable_budget_bytes = size_t{128} << 20;
  // Working memory of one bulk import into an empty database
  // (storage::ImportOptions::WithinMemory): the chunks of keys being
  // applied and written, and what spares reads of earlier chunks.
  size_t import_memory_bytes = size_t{1} << 30;
  bool sync_commits = true;
  size_t transactor_queue = 10000;

  // How long a Transact request id keeps its original result (seconds).
  int64_t idempotency_window_s = 24 * 3600;
  // How many recent results keep their tempid maps in memory.
  size_t idempotency_cache_entries = 100000;
  // How long the database value of a stream stays available for resuming
  // (seconds).
  int64_t resume_window_s = 600;

  // Optional TLS: PEM files of the certificate chain and private key.
  std::string tls_cert;
  std::string tls_key;
  // Optional bearer token every RPC but health must carry; or read it from
  // a file (first line).
  std::string auth_token;
  std::string auth_token_file;
  // A gRPC address beyond loopback (0.0.0.0, a public or private address)
  // with neither TLS nor a token is refused unless this is set: anyone who
  // reaches such a port could read and write every database.
  bool insecure_listen = false;

  // Logging: "text" or "json"; level: trace, debug, info, warn, error.
  std::string log_format = "text";
  std::string log_level = "info";

  // How long shutdown waits for running calls before cancelling them
  // (milliseconds).
  int64_t shutdown_grace_ms = 5000;

  // Backup RPC destinations must lie under this directory; empty: any
  // absolute path the server may write.
  std::string backup_dir;

  // Creates "default" at startup when the data dir has no such database.
  bool create_default_database = true;

  // Connections, values and idle threads.
  // Most gRPC connections open at once; more are refused (closed at once:
  // the client sees UNAVAILABLE). 0: as many as descriptors allow.
  int max_connections = 0;
  // Descriptors kept free below RLIMIT_NOFILE (mentatd raises its soft
  // limit to the hard one at start): a connection that would take one of
  // them is refused, so the databases can always open their files.
  int reserved_fds = 64;
  // Largest value (a string, keyword, bytes, bigint or bigdec) tx-data may
  // hold; Transact and Import refuse larger ones with INVALID_ARGUMENT.
  // 0: a quarter of max_message_bytes. At most half of it, so that every
  // datom fits in a stream message (TxRange, Subscribe, Datoms).
  size_t max_value_bytes = 0;
  // A reader thread started for parked queries (beyond readers_per_node)
  // exits after waiting this long for work (milliseconds).
  int64_t reader_idle_ms = 10000;

  // Replication (docs/replication.md). With `replica_of` ("HOST:PORT" of
  // the primary) this node is a read replica: it bootstraps each of the
  // primary's databases from a checkpoint, follows its log, serves reads,
  // and refuses writes naming the primary. Empty: a primary (or a single
  // node).
  std::string replica_of;
  // How a replica reaches its primary, as the client does: the bearer
  // token (or a file holding it) and TLS (with the system's roots, or
  // trusting the CA certificates in primary_tls_ca).
  std::string primary_token;
  std::string primary_token_file;
  bool primary_tls = false;
  std::string primary_tls_ca;
  // A cluster with leader election through etcd (docs/replication.md,
  // phase 2). With `cluster` set, the node campaigns for the leader key
  // /mentat/<cluster>/leader in etcd (`etcd`: "host:port,host:port"),
  // is the primary while it holds it and a replica of whoever holds it
  // otherwise. `node_id` names the node in etcd (unique in the cluster);
  // `advertise` is the gRPC address the others reach it at (empty: the
  // first --listen address with the port it bound). The lease TTL bounds
  // failover: a primary stops writing TTL/2 after its last renewal.
  std::string cluster;
  std::string etcd;
  std::string node_id;
  std::string advertise;
  int64_t lease_ttl_s = 3;
  // "async": Transact answers once the primary has committed. "semi-sync":
  // once a replica has also made the transaction durable (it
  // acknowledges with Replication.Ack), or after semi_sync_timeout_ms with
  // DEADLINE_EXCEEDED saying it is committed on the primary only
  // (docs/replication.md).
  std::string durability = "async";
  int64_t semi_sync_timeout_ms = 5000;
  // The longest a read with min_basis_tx waits for its basis, whatever
  // the call's deadline (milliseconds).
  int64_t max_basis_wait_ms = 30000;

  // For tests, not a flag: the RocksDB Env of every database's store
  // (storage/testing/fault_env.h injects I/O faults); not owned, outlives
  // the server. Null: RocksDB's default.
  rocksdb::Env* storage_env = nullptr;
};

// The addresses of config.listen (comma-separated, spaces trimmed).
std::vector<std::string> ListenAddresses(const ServerConfig& config);

// The value-size limit in effect: config.max_value_bytes, or a quarter of
// config.max_message_bytes when that is 0.
size_t MaxValueBytes(const ServerConfig& config);

// What the command line asked for besides a configuration.
struct CommandLine {
  ServerConfig config;
  bool help = false;
  bool version = false;
};

// Parses flags ("--data-dir DIR" or "--data-dir=DIR"), the environment
// (`env`: MENTATD_DATA_DIR and so on, one per flag) and the config file
// named by --config or MENTATD_CONFIG (lines "data-dir = /var/lib/mentat";
// '#' comments). InvalidArgument names the offending flag or line.
[[nodiscard]] absl::StatusOr<CommandLine> ParseCommandLine(
    const std::vector<std::string>& args,
    const std::map<std::string, std::string>& env);

// The environment of this process, for ParseCommandLine.
std::map<std::string, std::string> ProcessEnvironment();

// The --help text.
std::string UsageText();

// A one-line rendering of the effective configuration for the startup log
// (the auth token is not shown).
std::string DescribeConfig(const ServerConfig& config);

// Reads the token file if one is configured, into config->auth_token.
[[nodiscard]] absl::Status LoadAuthToken(ServerConfig* config);

}  // namespace mentat::server

#endif  // MENTAT_SERVER_CONFIG_H_
