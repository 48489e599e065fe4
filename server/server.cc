#include "mentat/server/server.h"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <rocksdb/statistics.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <sstream>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "async_unary.h"
#include "basis_wait.h"
#include "cluster/cluster_member.h"
#include "cluster/cluster_node.h"
#include "cluster/etcd_client.h"
#include "cluster/node_role.h"
#include "database_registry.h"
#include "grpc_listener.h"
#include "http_server.h"
#include "mentat/base/str_cat.h"
#include "mentat/query/query_engine.h"
#include "metrics.h"
#include "reader_pool.h"
#include "replica.h"
#include "replication_service.h"
#include "semi_sync.h"
#include "service.h"
#include "service_context.h"
#include "tls_files.h"

#ifndef MENTATD_VERSION
#define MENTATD_VERSION "0.0.0"
#endif

namespace mentat::server {

std::string VersionString() { return StrCat("mentatd ", MENTATD_VERSION); }

class ServerImpl {
 public:
  explicit ServerImpl(const ServerConfig& c) : config(c) {}
  ~ServerImpl() { Shutdown(); }

  [[nodiscard]] absl::Status Start();
  void Shutdown();
  // Stats' replication part (role, term, lag, semi-sync waits).
  void ReplicationStatsOf(const std::string& database,
                          v1::ReplicationStats* out);

  HttpServer::Response Http(const std::string& target);

  ServerConfig config;
  Metrics metrics;
  // A cluster node's role (--cluster), before the registry: its stores'
  // write gate reads it.
  std::unique_ptr<cluster::NodeRole> role;
  std::unique_ptr<DatabaseRegistry> registry;
  std::unique_ptr<ReaderPool> readers;
  std::unique_ptr<query::QueryEngine> engine;
  std::unique_ptr<ServiceContext> sc;
  std::unique_ptr<MentatService> service;
  std::unique_ptr<BasisWaiters> basis_waiters;
  // --durability semi-sync: Transacts wait here for a replica's Ack.
  std::unique_ptr<SemiSync> semi_sync;
  std::unique_ptr<ReplicationService> replication_service;
  // Set on a read replica (--replica-of).
  std::unique_ptr<Replica> replica;
  // Set on a cluster node (--cluster): what its role changes do, and the
  // election.
  std::unique_ptr<cluster::ClusterMember> member;
  std::unique_ptr<cluster::ClusterNode> cluster_node;
  std::unique_ptr<GrpcListener> listener;
  std::unique_ptr<grpc::experimental::ExternalConnectionAcceptor>
      external_acceptor;
  // Its completion queues outlive the gRPC server (declared before it).
  std::unique_ptr<AsyncUnaryServer> unary;
  std::unique_ptr<grpc::Server> grpc_server;
  std::unique_ptr<HttpServer> http;
  int port = 0;

  absl::Mutex shutdown_mu;
  bool shut_down ABSL_GUARDED_BY(shutdown_mu) = false;
};

namespace {

// The mentat-cli command line that reaches this server, for the start-up
// log: the first listening address (a wildcard host as loopback, port 0 as
// the port gRPC chose), and the flags its TLS and token settings need,
// naming where the secrets are rather than printing them.
std::string ConnectHint(const ServerConfig& config, int port) {
  const std::vector<std::string> listen = ListenAddresses(config);
  if (listen.empty()) return "(no gRPC address)";
  std::string address = listen.front();
  if (!address.starts_with("unix:")) {
    const size_t colon = address.rfind(':');
    std::string host = address.substr(0, colon);
    if (host == "0.0.0.0" || host.empty()) host = "127.0.0.1";
    if (host == "[::]") host = "[::1]";
    address = StrCat(host, ":", port);
  }
  std::string hint = StrCat("mentat-cli --addr ", address);
  if (!config.tls_cert.empty()) {
    hint += " --tls-ca CA_FILE (the CA that signed --tls-cert)";
  }
  if (!config.auth_token_file.empty()) {
    hint += StrCat(" --token \"$(cat ", config.auth_token_file, ")\"");
  } else if (!config.auth_token.empty()) {
    hint += " --token TOKEN (the --auth-token)";
  }
  return hint;
}

// The address a cluster node advertises: --advertise, else the first
// --listen address with the port it bound (a wildcard host cannot be
// reached: InvalidArgument asking for --advertise).
absl::StatusOr<std::string> AdvertisedAddress(const ServerConfig& config,
                                              int port) {
  if (!config.advertise.empty()) return config.advertise;
  const std::vector<std::string> listen = ListenAddresses(config);
  for (const std::string& address : listen) {
    if (address.starts_with("unix:")) continue;
    const size_t colon = address.rfind(':');
    const std::string host = address.substr(0, colon);
    if (host.empty() || host == "0.0.0.0" || host == "[::]") break;
    return StrCat(host, ":", port);
  }
  return absl::InvalidArgumentError(
      "--cluster: give --advertise HOST:PORT, the address the other nodes "
      "reach this one at (--listen has no TCP address with a host to "
      "advertise)");
}

}  // namespace

absl::Status ServerImpl::Start() {
  // Debian builds abseil without NDEBUG, which leaves absl::Mutex's
  // deadlock detection on: a global graph update on every lock of every
  // new mutex. Our lock order is fixed by design; turn it off.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  absl::Status s = LoadAuthToken(&config);
  if (!s.ok()) return s;

  // The TLS files and the listening addresses are checked before any
  // database opens, so that a mistake in them is reported at once, by name.
  std::shared_ptr<grpc::ServerCredentials> credentials;
  if (!config.tls_cert.empty()) {
    auto tls = LoadTlsFiles(config.tls_cert, config.tls_key);
    if (!tls.ok()) return tls.status();
    for (const std::string& warning : tls->warnings) {
      spdlog::warn("{}", warning);
    }
    grpc::SslServerCredentialsOptions ssl;
    ssl.pem_key_cert_pairs.push_back({tls->key_pem, tls->cert_pem});
    credentials = grpc::SslServerCredentials(ssl);
  } else {
    credentials = grpc::InsecureServerCredentials();
  }
  const int64_t fd_limit = RaiseDescriptorLimit();
  GrpcListener::Options listen_options;
  listen_options.addresses = ListenAddresses(config);
  listen_options.max_connections = config.max_connections;
  listen_options.reserved_fds = config.reserved_fds;
  const int unary_threads =
      config.unary_threads > 0
          ? config.unary_threads
          : std::max(2, static_cast<int>(std::thread::hardware_concurrency()));
  // The callback API's completion queue, then one per unary thread (with
  // `epoll1` every queue polls every connection: no turns to steer).
  if (config.grpc_poll_strategy == "poll") {
    listen_options.queue_turns = 1 + unary_threads;
  }
  auto bound = GrpcListener::Bind(listen_options);
  if (!bound.ok()) return bound.status();
  listener = *std::move(bound);

  DatabaseOptions db_options;
  db_options.store.sync_commits = config.sync_commits;
  db_options.store.block_cache_bytes = config.block_cache_bytes;
  db_options.store.entity_cache_bytes = config.entity_cache_bytes;
  db_options.store.warm_entity_cache = config.warm_entity_cache;
  db_options.store.value_cache_bytes = config.value_cache_bytes;
  db_options.store.memtable_budget_bytes = config.memtable_budget_bytes;
  db_options.store.column_cache_bytes = config.column_cache_bytes;
  db_options.store.queue_capacity = config.transactor_queue;
  db_options.store.env = config.storage_env;
  db_options.idempotency_window_micros = config.idempotency_window_s * 1000000;
  db_options.idempotency_cache_entries = config.idempotency_cache_entries;
  db_options.resume_window_micros = config.resume_window_s * 1000000;
  const bool is_replica = !config.replica_of.empty();
  const bool is_cluster = !config.cluster.empty();
  std::vector<std::string> etcd_endpoints;
  if (is_cluster) {
    auto endpoints = cluster::EtcdClient::ParseEndpoints(config.etcd);
    if (!endpoints.ok()) return endpoints.status();
    etcd_endpoints = *std::move(endpoints);
  }
  // A cluster node starts as a replica: it writes only once elected, and
  // each commit passes its lease deadline again on the transactor (a
  // transaction admitted in time but queued past it is refused).
  db_options.replica = is_replica || is_cluster;
  if (is_cluster) {
    role = std::make_unique<cluster::NodeRole>(config.cluster);
    db_options.store.write_gate = [r = role.get()] {
      return r->CheckWritable("the commit");
    };
  }
  // A semi-synchronous primary answers once a replica holds a commit
  // durably: streamed before the primary's own fsync, the two fsyncs
  // overlap instead of adding up (docs/replication.md).
  db_options.store.stream_before_sync = config.durability == "semi-sync";
  registry = std::make_unique<DatabaseRegistry>(config.data_dir, db_options);
  // Backups go under --backup-dir: made here, so that the first Backup
  // does not fail on a directory nobody created (and a bad path fails at
  // start, not at the first backup).
  if (!config.backup_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(config.backup_dir, ec);
    if (ec) {
      return absl::FailedPreconditionError(StrCat("cannot create --backup-dir ",
                                                  config.backup_dir, ": ",
                                                  ec.message()));
    }
  }
  // A replica's databases come from its primary: one made here would not
  // be the primary's. (A cluster's first primary makes "default".)
  s = registry->OpenAll(config.create_default_database && !is_replica &&
                        !is_cluster);
  if (!s.ok()) return s;

  readers = std::make_unique<ReaderPool>(
      ReaderPool::Options{config.readers_per_node, config.pin_readers,
                          std::chrono::milliseconds(config.reader_idle_ms)});
  engine = std::make_unique<query::QueryEngine>();
  sc = std::unique_ptr<ServiceContext>(new ServiceContext{
      config, *registry, *readers, *engine, metrics,
      config.auth_token.empty() ? "" : StrCat("Bearer ", config.auth_token)});
  basis_waiters = std::make_unique<BasisWaiters>(
      *readers, std::chrono::milliseconds(config.max_basis_wait_ms));
  sc->basis_waiters = basis_waiters.get();
  sc->role = role.get();
  if (config.durability == "semi-sync") {
    semi_sync = std::make_unique<SemiSync>(
        *readers, std::chrono::milliseconds(config.semi_sync_timeout_ms));
    sc->semi_sync = semi_sync.get();
  }
  sc->replication_stats = [this](const std::string& database,
                                 v1::ReplicationStats* out) {
    ReplicationStatsOf(database, out);
  };
  service = std::make_unique<MentatService>(*sc);
  replication_service = std::make_unique<ReplicationService>(*sc);

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  // mentatd accepts connections itself (GrpcListener) and hands them to
  // gRPC, whose own listener stops for good when it runs out of
  // descriptors.
  external_acceptor = builder.experimental().AddExternalConnectionAcceptor(
      grpc::ServerBuilder::experimental_type::ExternalConnectionType::FROM_FD,
      credentials);
  builder.SetMaxReceiveMessageSize(config.max_message_bytes);
  builder.SetMaxSendMessageSize(config.max_message_bytes);
  builder.RegisterService(service.get());
  builder.RegisterService(replication_service.get());
  unary = std::make_unique<AsyncUnaryServer>(
      *sc, service.get(), builder, unary_threads, config.unary_spin_us);
  grpc_server = builder.BuildAndStart();
  if (grpc_server == nullptr) {
    return absl::UnavailableError(
        "gRPC could not start its server (its log lines above say why)");
  }
  unary->Start();
  listener->Start(external_acceptor.get());
  port = listener->port();

  if (!config.http.empty()) {
    auto h = HttpServer::Start(config.http, [this](const std::string& target) {
      return Http(target);
    });
    if (!h.ok()) return h.status();
    http = *std::move(h);
  }

  if (is_replica) {
    replica = std::make_unique<Replica>(config, *registry, config.replica_of);
    s = replica->Start();
    if (!s.ok()) return s;
  }
  std::string advertised;
  if (is_cluster) {
    auto address = AdvertisedAddress(config, port);
    if (!address.ok()) return address.status();
    advertised = *address;
    member = std::make_unique<cluster::ClusterMember>(config, *registry);
    cluster::ClusterNode::Options options;
    options.cluster = config.cluster;
    options.node_id = config.node_id;
    options.advertise = advertised;
    options.etcd = etcd_endpoints;
    options.lease_ttl_s = config.lease_ttl_s;
    auto node = cluster::ClusterNode::Start(options, role.get(), member.get());
    if (!node.ok()) return node.status();
    cluster_node = *std::move(node);
  }

  // The configuration line comes first: whoever waits for the serving line
  // (an operator's script, the process tests) then has both.
  spdlog::info("configuration: {}", DescribeConfig(config));
  spdlog::info(
      "{} serving gRPC on {} (port {}), HTTP on {}; {} reader threads "
      "on {} NUMA node(s){}; databases: {}; descriptor limit {}; {}",
      VersionString(), config.listen, port,
      http ? StrCat("port ", http->port()) : std::string("(off)"),
      readers->threads(), readers->nodes(), readers->pinned() ? ", pinned" : "",
      registry->List().size(), fd_limit,
      is_replica   ? StrCat("read replica of ", config.replica_of)
      : is_cluster ? StrCat("node ", config.node_id, " of cluster ",
                            config.cluster, " at ", advertised)
                   : std::string("primary"));
  spdlog::info("connect with: {}", ConnectHint(config, port));
  return absl::OkStatus();
}

HttpServer::Response ServerImpl::Http(const std::string& target) {
  HttpServer::Response r;
  if (target == "/healthz") {
    // Says whether a new client would be served: a server that is up but
    // refuses connections is not healthy.
    std::string problem;
    if (sc->shutting_down.load()) {
      problem = "shutting down";
    } else if (listener != nullptr) {
      problem = listener->Problem();
    }
    if (!problem.empty()) {
      r.status = 503;
      r.body = problem + "\n";
    } else if (std::string why = registry->WriteProblems(); !why.empty()) {
      // Still 200: reads are served (docs/bad-input.md, "Full disk").
      r.body = StrCat("degraded: ", why, "\n");
    } else {
      r.body = "ok\n";
    }
    return r;
  }
  if (target == "/metrics") {
    std::vector<DatabaseFigures> figures;
    for (const auto& db : registry->List()) {
      DatabaseFigures f;
      f.name = db->name();
      storage::Store& store = db->store();
      f.basis_tx = db->Latest()->basis_tx();
      const auto c = store.transactor_counters();
      f.transactions = c.transactions;
      f.failed_transactions = c.failed_transactions;
      f.datoms = c.datoms;
      f.groups = c.groups;
      f.largest_group = c.largest_group;
      f.queue_depth = c.queue_depth;
      f.clog_flushes = c.clog_flushes;
      f.block_cache_hits = store.RocksDbTicker(rocksdb::BLOCK_CACHE_HIT);
      f.block_cache_misses = store.RocksDbTicker(rocksdb::BLOCK_CACHE_MISS);
      f.block_cache_usage = store.RocksDbProperty("rocksdb.block-cache-usage");
      const auto entities = store.entity_cache_counters();
      f.entity_cache_hits = entities.hits;
      f.entity_cache_misses = entities.misses;
      f.entity_cache_bytes = entities.bytes;
      const auto values = store.value_cache_counters();
      f.value_cache_hits = values.hits;
      f.value_cache_misses = values.misses;
      f.value_cache_bytes = values.bytes;
      const auto columns = store.column_cache_counters();
      f.column_cache_hits = columns.hits;
      f.column_cache_builds = columns.misses;
      f.column_cache_refused = columns.refused;
      f.column_cache_bytes = columns.bytes;
      f.compaction_pending_bytes =
          store.RocksDbProperty("rocksdb.estimate-pending-compaction-bytes");
      f.running_compactions =
          store.RocksDbProperty("rocksdb.num-running-compactions");
      f.memtable_bytes =
          store.RocksDbProperty("rocksdb.cur-size-all-mem-tables");
      f.disk_bytes = store.DiskSizeBytes();
      f.writes_stopped = store.WriteHealth().ok() ? 0 : 1;
      figures.push_back(std::move(f));
    }
    r.content_type = "text/plain; version=0.0.4; charset=utf-8";
    Metrics::ConnectionFigures connections;
    if (listener != nullptr) {
      const GrpcListener::Counters c = listener->counters();
      connections = {c.accepted, c.refused, c.open, c.fd_limit, c.placeholders};
    }
    r.body = metrics.RenderPrometheus(figures, readers->queue_depth(),
                                      readers->threads(), connections);
    StrAppend(&r.body,
              "# HELP mentat_replication_role 0: primary (or a single node), "
              "1: read replica.\n# TYPE mentat_replication_role gauge\n"
              "mentat_replication_role ",
              replica != nullptr ||
                      (role != nullptr &&
                       role->Get().kind != cluster::NodeRole::Kind::kPrimary)
                  ? 1
                  : 0,
              "\n");
    StrAppend(&r.body,
              "# HELP mentat_basis_waits Reads waiting for min_basis_tx.\n"
              "# TYPE mentat_basis_waits gauge\nmentat_basis_waits ",
              basis_waiters->waiting(), "\n");
    if (replica != nullptr) r.body += replica->RenderPrometheus();
    if (cluster_node != nullptr) r.body += cluster_node->RenderPrometheus();
    if (member != nullptr) r.body += member->RenderPrometheus();
    if (semi_sync != nullptr) r.body += semi_sync->RenderPrometheus();
    return r;
  }
  r.status = 404;
  r.body = "not found (try /metrics or /healthz)\n";
  return r;
}

void ServerImpl::ReplicationStatsOf(const std::string& database,
                                    v1::ReplicationStats* out) {
  out->set_durability(config.durability);
  out->set_cluster(config.cluster);
  out->set_node_id(config.node_id);
  if (role != nullptr) {
    const cluster::NodeRole::View view = role->Get();
    out->set_role(cluster::KindName(view.kind));
    out->set_term(static_cast<uint64_t>(view.term));
    out->set_primary(view.primary);
  } else if (replica != nullptr) {
    out->set_role("replica");
    out->set_primary(config.replica_of);
  } else {
    out->set_role(semi_sync != nullptr ? "primary" : "single");
  }
  int64_t primary_tx = 0, lag_tx = 0, lag_ms = 0;
  const bool following =
      (replica != nullptr &&
       replica->LagOf(database, &primary_tx, &lag_tx, &lag_ms)) ||
      (member != nullptr &&
       member->LagOf(database, &primary_tx, &lag_tx, &lag_ms));
  if (following) {
    out->set_primary_basis_tx(primary_tx);
    out->set_lag_tx(lag_tx);
    out->set_lag_ms(lag_ms);
  }
  if (semi_sync != nullptr) {
    out->set_semi_sync_waiting(semi_sync->waiting());
    out->set_semi_sync_acked_tx(semi_sync->acked(database));
    out->set_semi_sync_timeouts(semi_sync->timeouts());
  }
}

void ServerImpl::Shutdown() {
  absl::MutexLock lock(&shutdown_mu);
  if (shut_down) return;
  shut_down = true;
  if (sc != nullptr) sc->shutting_down.store(true);
  spdlog::info("shutting down: refusing new calls, ending subscriptions");
  // A cluster's primary resigns first (the next election need not wait
  // for its lease); a replica stops applying: nothing writes while
  // databases close.
  if (cluster_node != nullptr) cluster_node->Stop();
  if (member != nullptr) member->Stop();
  if (replica != nullptr) replica->Stop();
  if (grpc_server != nullptr) {
    if (auto* health = grpc_server->GetHealthCheckService()) {
      health->SetServingStatus(false);
    }
    for (const auto& db : registry->List()) {
      db->EndSubscriptions(
          absl::UnavailableError("the server is shutting down"));
    }
    // No replica acknowledges any more: Transacts waiting for one are
    // answered now (committed here only), not at the grace period's end.
    if (semi_sync != nullptr) semi_sync->Stop();
    // Running calls get the grace period to finish (transactions commit
    // and are answered). gRPC's own Shutdown would also wait for every
    // idle client connection to acknowledge its GOAWAY, which an idle
    // client may take seconds to read; so count the calls ourselves and
    // close the connections once they are done.
    const auto grace_end = std::chrono::steady_clock::now() +
                           std::chrono::milliseconds(config.shutdown_grace_ms);
    while (sc->active_calls.load(std::memory_order_acquire) > 0 &&
           std::chrono::steady_clock::now() < grace_end) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    const int64_t left = sc->active_calls.load();
    if (left > 0) {
      spdlog::warn("shutdown: cancelling {} call(s) still running after {} ms",
                   left, config.shutdown_grace_ms);
    }
    if (listener != nullptr) listener->Stop();
    grpc_server->Shutdown(std::chrono::system_clock::now());
    spdlog::debug("shutdown: gRPC calls ended");
    grpc_server->Wait();
  }
  // Waits end (UNAVAILABLE) while readers still run their answers.
  if (basis_waiters != nullptr) basis_waiters->Stop();
  if (readers != nullptr) readers->Stop();
  spdlog::debug("shutdown: readers stopped");
  if (registry != nullptr) registry->CloseAll();
  spdlog::debug("shutdown: databases closed");
  // Nothing can finish a call now (transactors answered what they had
  // queued when their databases closed): the async calls' queues drain.
  if (unary != nullptr) unary->Stop();
  if (http != nullptr) http->Stop();
  spdlog::info("shut down");
  spdlog::default_logger()->flush();
}

MentatServer::MentatServer(std::unique_ptr<ServerImpl> impl)
    : impl_(std::move(impl)) {}

MentatServer::~MentatServer() { Shutdown(); }

absl::StatusOr<std::unique_ptr<MentatServer>> MentatServer::Start(
    const ServerConfig& config) {
  auto impl = std::make_unique<ServerImpl>(config);
  absl::Status s = impl->Start();
  if (!s.ok()) {
    impl->Shutdown();
    return s;
  }
  return std::unique_ptr<MentatServer>(new MentatServer(std::move(impl)));
}

int MentatServer::port() const { return impl_->port; }
int MentatServer::http_port() const {
  return impl_->http ? impl_->http->port() : 0;
}
const ServerConfig& MentatServer::config() const { return impl_->config; }
void MentatServer::Shutdown() { impl_->Shutdown(); }

}  // namespace mentat::server
