#ifndef MENTAT_SERVER_SERVICE_CONTEXT_H_
#define MENTAT_SERVER_SERVICE_CONTEXT_H_

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "basis_wait.h"
#include "cluster/node_role.h"
#include "database_registry.h"
#include "mentat/query/query_engine.h"
#include "mentat/server/config.h"
#include "metrics.h"
#include "reader_pool.h"
#include "semi_sync.h"

namespace mentat::v1 {
class ReplicationStats;
}  // namespace mentat::v1

namespace mentat::server {

// What every RPC handler needs: the configuration, the databases, the
// reader threads, the query engine, the counters. Owned by MentatServer;
// outlives every call. Thread-safe (each member is).
struct ServiceContext {
  const ServerConfig& config;
  DatabaseRegistry& registry;
  ReaderPool& readers;
  query::QueryEngine& engine;
  Metrics& metrics;
  // "Bearer <token>", or empty when no token is required.
  std::string expected_authorization;
  // Set when shutdown begins: new calls get UNAVAILABLE.
  std::atomic<bool> shutting_down{false};
  // Calls whose reactor gRPC has not yet released (OnDone). Shutdown waits
  // for this to reach zero before it closes the connections.
  std::atomic<int64_t> active_calls{0};
  // Reads with min_basis_tx wait here (basis_wait.h). Set before the
  // first call; owned by MentatServer.
  BasisWaiters* basis_waiters = nullptr;
  // A cluster node's role (--cluster), which gates writes; null
  // otherwise. Owned by MentatServer.
  cluster::NodeRole* role = nullptr;
  // With --durability semi-sync, where Transacts wait for a replica's
  // Ack; null otherwise. Owned by MentatServer.
  SemiSync* semi_sync = nullptr;
  // Fills Stats' replication part for a database (role, term, lag,
  // semi-sync waits). Set by MentatServer before the first call.
  std::function<void(const std::string& database, v1::ReplicationStats*)>
      replication_stats = nullptr;
};

// OK on a primary. On a read replica (config.replica_of set),
// FailedPrecondition naming the primary, for `what` ("Transact") a replica
// does not do: writes go to the primary (docs/replication.md says why
// they are refused rather than forwarded). On a cluster node,
// NodeRole::CheckWritable: OK only on the elected primary before its
// lease deadline.
[[nodiscard]] absl::Status RefuseAtReplica(const ServiceContext& sc,
                                           std::string_view what);

// Runs `then` once `database` has published `min_basis_tx` (a read's
// read-your-writes): at once on this thread when it has, else later on a
// reader thread, or with the error that ended the wait
// (BasisWaiters::RunAt); `deadline` is the call's.
void AfterMinBasis(ServiceContext& sc, std::shared_ptr<Database> database,
                   int64_t min_basis_tx,
                   std::chrono::steady_clock::time_point deadline,
                   std::function<void(absl::Status)> then);

}  // namespace mentat::server

#endif  // MENTAT_SERVER_SERVICE_CONTEXT_H_
