#ifndef MENTAT_SERVER_SEMI_SYNC_H_
#define MENTAT_SERVER_SEMI_SYNC_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "reader_pool.h"

namespace mentat::server {

// Semi-synchronous durability (--durability semi-sync,
// docs/replication.md): a Transact committed on the primary is answered
// only once a replica has acknowledged (Replication.Ack) a basis at least
// its tx, i.e. holds it durably; or, after `timeout`, with
// DEADLINE_EXCEEDED saying that it is committed here but on no replica
// yet. The transactor never waits: a commit registers a waiter and goes
// on, an Ack (on a gRPC thread) or the timer thread of this class settles
// it, and the answer is posted to the reader pool. Thread-safe.
class SemiSync {
 public:
  using Then = std::function<void(absl::Status)>;

  SemiSync(ReaderPool& readers, std::chrono::milliseconds timeout);
  // Stop()s.
  ~SemiSync();
  SemiSync(const SemiSync&) = delete;
  SemiSync& operator=(const SemiSync&) = delete;

  // A replica holds `database` durably up to `applied_tx` (a tx id): the
  // waits for transactions up to it end with OK.
  void Ack(const std::string& database, int64_t applied_tx);

  // Calls then(OK) once a replica has acknowledged `tx` of `database`: at
  // once on the calling thread when one has already, else later on a
  // reader thread; then(DeadlineExceeded naming the tx) after the
  // timeout; then(Unavailable) at Stop.
  void WaitFor(const std::string& database, int64_t tx, Then then);

  // Ends every wait (Unavailable: shutting down, committed here only) and
  // joins the thread. Idempotent.
  void Stop();

  // The highest basis of `database` a replica acknowledged (0: none).
  int64_t acked(const std::string& database) const;
  int64_t waiting() const;
  uint64_t timeouts() const { return timeouts_.load(); }
  std::chrono::milliseconds timeout() const { return timeout_; }

  // Prometheus text: waits in progress, waits ended by an ack and by the
  // timeout, the time waits took, each database's acknowledged basis.
  std::string RenderPrometheus() const;

 private:
  struct Waiter {
    std::string database;
    int64_t tx = 0;
    std::chrono::steady_clock::time_point start;
    std::chrono::steady_clock::time_point deadline;
    Then then;
    bool done = false;
  };
  void Run();
  // Posts then(status) to the readers and counts it.
  void Settle(std::shared_ptr<Waiter> w, absl::Status status);

  ReaderPool& readers_;
  const std::chrono::milliseconds timeout_;
  mutable absl::Mutex mu_;
  // Per database: its acknowledged basis and the waits below it.
  struct Db {
    int64_t acked = 0;
    std::multimap<int64_t, std::shared_ptr<Waiter>> waits;
  };
  std::map<std::string, Db> dbs_ ABSL_GUARDED_BY(mu_);
  // Every wait in order of deadline (one timeout for all: the order of
  // registration), done ones included until the timer passes them.
  std::deque<std::shared_ptr<Waiter>> by_deadline_ ABSL_GUARDED_BY(mu_);
  int64_t waiting_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
  std::atomic<uint64_t> acked_waits_{0};
  std::atomic<uint64_t> timeouts_{0};
  std::atomic<uint64_t> wait_micros_{0};
};

}  // namespace mentat::server

#endif  // MENTAT_SERVER_SEMI_SYNC_H_
