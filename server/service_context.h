#ifndef MENTAT_SERVER_SERVICE_CONTEXT_H_
#define MENTAT_SERVER_SERVICE_CONTEXT_H_

#include <atomic>
#include <string>

#include "database_registry.h"
#include "mentat/query/query_engine.h"
#include "mentat/server/config.h"
#include "metrics.h"
#include "reader_pool.h"

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
};

}  // namespace mentat::server

#endif  // MENTAT_SERVER_SERVICE_CONTEXT_H_
