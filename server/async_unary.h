#ifndef MENTAT_SERVER_ASYNC_UNARY_H_
#define MENTAT_SERVER_ASYNC_UNARY_H_

// The unary calls (Ping, QueryFirst, Pull, Transact, PullMany, Schema,
// Stats, Explain, Backup and the database calls) served on threads of
// mentatd's own.
//
// gRPC's callback API, which the other methods use, reads a call on one of
// its poller threads and runs the handler on its executor, then hands the
// answer back: for a point read whose work takes a few microseconds, those
// hand-offs between threads cost more than the read. These methods are
// async methods instead. Each thread here polls its own completion queue:
// it reads a call, runs it (a point read inline, anything bigger is posted
// to the reader pool as before; a transaction is queued on its
// transactor) and starts its answer, all on one thread.
//
// Thread safety: Start and Stop from one thread (the server's). Calls
// finish from any thread (UnaryCall::Finish).

#include <grpcpp/grpcpp.h>

#include <memory>
#include <thread>
#include <vector>

#include "service.h"
#include "service_context.h"

namespace mentat::server {

class AsyncUnaryServer {
 public:
  // Adds `threads` completion queues (at least one) to `builder`; call
  // before BuildAndStart. `service` is registered with the same builder
  // and outlives this object. Each thread polls without sleeping for
  // `spin_us` microseconds after its last event (ServerConfig::
  // unary_spin_us) before it blocks.
  AsyncUnaryServer(ServiceContext& sc, RawMentatService* service,
                   grpc::ServerBuilder& builder, int threads, int spin_us);
  ~AsyncUnaryServer();

  AsyncUnaryServer(const AsyncUnaryServer&) = delete;
  AsyncUnaryServer& operator=(const AsyncUnaryServer&) = delete;

  // After BuildAndStart: asks gRPC for calls and starts the threads.
  void Start();

  // After the gRPC server's Shutdown, and once nothing else can finish a
  // call (the reader pool has stopped): shuts the queues down, lets the
  // threads drain them, joins them. Idempotent.
  void Stop();

  int threads() const { return static_cast<int>(queues_.size()); }

 private:
  ServiceContext& sc_;
  RawMentatService* service_;
  std::vector<std::unique_ptr<grpc::ServerCompletionQueue>> queues_;
  std::vector<std::thread> threads_;
  const int spin_us_;
  bool stopped_ = false;
};

}  // namespace mentat::server

#endif  // MENTAT_SERVER_ASYNC_UNARY_H_
