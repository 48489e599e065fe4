#ifndef MENTAT_SERVER_BASIS_WAIT_H_
#define MENTAT_SERVER_BASIS_WAIT_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "database.h"
#include "reader_pool.h"

namespace mentat::server {

// Read-your-writes (`min_basis_tx` on every read, docs/replication.md):
// runs a read once its database has published a basis, without holding a
// gRPC thread or a reader while it waits. A waiter listens to its
// database's commits; one thread of this class checks the waiters when a
// commit wakes it or the nearest deadline passes, and posts each finished
// wait to the reader pool. Thread-safe.
class BasisWaiters {
 public:
  using Then = std::function<void(absl::Status)>;

  // `max_wait` bounds every wait (a call without a deadline included).
  BasisWaiters(ReaderPool& readers, std::chrono::milliseconds max_wait);
  // Stop()s.
  ~BasisWaiters();
  BasisWaiters(const BasisWaiters&) = delete;
  BasisWaiters& operator=(const BasisWaiters&) = delete;

  // Calls then(OK) at once, on the calling thread, when `min_tx` is 0 or
  // `database` has published it (a t or a tx id). Otherwise returns, and
  // later calls, on a reader thread, then(OK) once the database publishes
  // it, or then(Unavailable naming the basis it has) once `deadline`
  // (bounded by max_wait) passes first, or then(the database's status)
  // when it closes, is deleted (NotFound) or is set aside (Unavailable;
  // Database::MarkSetAside), or then(Unavailable) at Stop.
  // InvalidArgument (at once) for a min_tx that is neither a t nor a tx.
  void RunAt(std::shared_ptr<Database> database, int64_t min_tx,
             std::chrono::steady_clock::time_point deadline, Then then);

  // Ends every wait (Unavailable: shutting down) and joins the thread.
  // Idempotent. Waits started afterwards fail at once.
  void Stop();

  // Waits now in progress (metrics, tests).
  int64_t waiting() const;

 private:
  struct Waiter;
  void Run();
  void Poke();

  ReaderPool& readers_;
  const std::chrono::milliseconds max_wait_;
  mutable absl::Mutex mu_;
  absl::CondVar cv_;
  std::vector<std::unique_ptr<Waiter>> waiters_ ABSL_GUARDED_BY(mu_);
  bool poked_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  // Held by Stop across the join (a second Stop waits for it).
  absl::Mutex stop_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  std::thread thread_ ABSL_GUARDED_BY(stop_mu_);
};

}  // namespace mentat::server

#endif  // MENTAT_SERVER_BASIS_WAIT_H_
