#ifndef MENTAT_SERVER_REPLICA_H_
#define MENTAT_SERVER_REPLICA_H_

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "database_registry.h"
#include "mentat/server/config.h"
#include "mentat/v1/mentat.grpc.pb.h"
#include "mentat/v1/replication.grpc.pb.h"

namespace mentat::server {

// OK when a Follow entry's `term` is the term its stored bytes carry
// (storage::TxLogEntryTerm); DataLoss naming both when they differ (a
// primary, or a proxy between, that mislabels its log: the fencing of
// docs/replication.md's phase 2 reads the wire field), or when the
// entry's header does not decode.
[[nodiscard]] absl::Status CheckEntryTerm(const v1::LogEntry& entry);

// The replica side of replication (docs/replication.md): for each database
// of the primary (config.replica_of), bootstraps it from a Snapshot when
// this node has no copy, then follows the primary's log from its basis and
// applies each entry (Database::ApplyReplicated), reconnecting with
// backoff when the stream breaks. Readers see each applied basis as the
// store publishes it. The primary's list of databases is read again every
// few seconds, so databases created there later are followed too.
//
// A replica bootstraps what it lacks before it serves (Start), so a
// client that reaches it finds the primary's databases. One thread lists
// databases; one thread per database follows its log
// (blocking gRPC reads). Thread-safe; Start once, Stop once (the
// destructor stops).
class Replica {
 public:
  // Follows the primary at `primary` ("HOST:PORT"; --replica-of, or the
  // address etcd's leader key names). With `discard_tails` (a cluster
  // node, docs/replication.md "Failover"), a database whose log the
  // primary refuses as ahead of its own or different from it (a former
  // primary's tail that no replica received) is moved aside
  // (DatabaseRegistry::SetAside, logged, counted) and bootstrapped again
  // from the primary; without it (--replica-of) the replica only reports
  // and retries, never dropping data by itself.
  //
  // `term` (a cluster node: the term etcd's leader key gave; 0 for
  // --replica-of) is the lowest primary term followed: it goes in every
  // FollowRequest (min_term), each FollowResponse's term raises it, and a
  // stream whose term is older ends before its entries apply.
  //
  // When a stream asks for acknowledgements (a semi-synchronous primary),
  // the replica sends Replication.Ack with each basis it has made durable,
  // at most one at a time per database.
  Replica(const ServerConfig& config, DatabaseRegistry& registry,
          std::string primary, bool discard_tails = false, uint64_t term = 0);
  ~Replica();
  Replica(const Replica&) = delete;
  Replica& operator=(const Replica&) = delete;

  // Makes the channel to the primary (TLS files are read here: an
  // unreadable CA file is InvalidArgument) and starts following.
  [[nodiscard]] absl::Status Start();
  // Cancels the streams and joins the threads. Idempotent.
  void Stop();

  // Prometheus text: role, per database applied basis, lag (transactions
  // and milliseconds), bytes received, reconnects, bootstraps.
  std::string RenderPrometheus() const;

  const std::string& primary() const { return primary_; }
  // The etcd leader key names a later term of the same primary.
  void RaiseTerm(uint64_t term);
  uint64_t term() const { return term_.load(); }
  // The primary's basis of `database` as last heard, and this replica's
  // lag behind it in transactions and milliseconds; false if `database`
  // is not followed.
  bool LagOf(const std::string& database, int64_t* primary_tx, int64_t* lag_tx,
             int64_t* lag_ms) const;
  // Databases moved aside because their tail was not the primary's.
  uint64_t tails_discarded() const { return tails_discarded_.load(); }

 private:
  struct Follower;
  // Before serving: bootstraps every database of the primary this node
  // lacks, so that a replica serves once it holds them (when the primary
  // answers within seconds; otherwise the followers do it later).
  void InitialSync();
  void ListLoop();
  void FollowLoop(Follower* f);
  // One Follow stream, until it ends; returns why.
  [[nodiscard]] absl::Status FollowOnce(Follower* f,
                                        std::shared_ptr<Database> database);
  // Sleeps up to `d` unless stopping; false if stopping.
  bool Pause(std::chrono::milliseconds d);
  void AddToken(grpc::ClientContext* ctx) const;
  // Sends an Ack of f's applied basis unless one is in flight or the
  // stream asks for none (semi-synchronous primaries ask).
  void MaybeAck(Follower* f);

  const ServerConfig& config_;
  DatabaseRegistry& registry_;
  const std::string primary_;
  const bool discard_tails_;
  // FollowRequest.follower: --node-id, or "replica".
  const std::string name_;
  std::atomic<uint64_t> term_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Mentat::Stub> mentat_;
  std::unique_ptr<v1::Replication::Stub> replication_;

  // Pause waits on stopping_ with Mutex::AwaitWithTimeout: Stop's
  // unlock wakes it, no condition variable needed.
  mutable absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::map<std::string, std::unique_ptr<Follower>> followers_
      ABSL_GUARDED_BY(mu_);
  std::thread list_thread_;
  std::atomic<uint64_t> bytes_received_{0};
  std::atomic<uint64_t> bootstraps_{0};
  std::atomic<uint64_t> tails_discarded_{0};
  std::atomic<uint64_t> acks_sent_{0};
  std::atomic<uint64_t> ack_errors_{0};
};

}  // namespace mentat::server

#endif  // MENTAT_SERVER_REPLICA_H_
