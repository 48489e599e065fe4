#ifndef MENTAT_SERVER_READER_POOL_H_
#define MENTAT_SERVER_READER_POOL_H_

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <chrono>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"

namespace mentat::server {

// The threads that run reads (queries, pulls, index scans, log reads): one
// Boost.Asio io_context per NUMA node, each served by its own threads, each
// thread pinned to its node's CPUs (libnuma; on a one-node machine, or
// without libnuma, one pool over every CPU). Tasks run on one thread from
// start to end; Post spreads them round-robin over the nodes.
//
// Thread-safe: Post from any thread. Tasks must not throw.
class ReaderPool {
  struct Node;

 public:
  struct Options {
    // Threads per node; 0: one per CPU of the node, at least 2.
    int threads_per_node = 0;
    bool pin = true;
    // A spare thread (one started for a parked task, see Parked) exits
    // once it has waited this long for work while its node has more
    // runnable threads than it was built with.
    std::chrono::milliseconds spare_idle{10000};
  };

  explicit ReaderPool(const Options& options);
  // Stop()s.
  ~ReaderPool();
  ReaderPool(const ReaderPool&) = delete;
  ReaderPool& operator=(const ReaderPool&) = delete;

  // Queues `task` (any move-only callable) on the next node's pool.
  template <typename F>
  void Post(F&& task) {
    Node& node =
        *nodes_[next_.fetch_add(1, std::memory_order_relaxed) % nodes_.size()];
    queued_.fetch_add(1, std::memory_order_relaxed);
    boost::asio::post(node.context,
                      [this, t = std::forward<F>(task)]() mutable {
                        queued_.fetch_sub(1, std::memory_order_relaxed);
                        t();
                      });
  }

  // Runs what is queued, then joins the threads. Idempotent. Tasks posted
  // after Stop began may not run.
  void Stop();

  // Marks the calling thread, for the scope's lifetime, as parked: blocked
  // on something other than the CPU (a query waiting for its slow client
  // to read). If that leaves its node fewer runnable threads than it was
  // built with, the node gets one more (spare) thread, so clients that
  // never read cannot hold every reader and starve the others. A node has
  // at most its threads plus the tasks parked at once (bounded by
  // --max-concurrent-queries); spare threads exit once idle for
  // Options::spare_idle, so the pool returns to its size when the parked
  // tasks end. No effect on a thread that is not a reader.
  class Parked {
   public:
    Parked();
    ~Parked();
    Parked(const Parked&) = delete;
    Parked& operator=(const Parked&) = delete;

   private:
    Node* node_;
  };

  int nodes() const { return static_cast<int>(nodes_.size()); }
  int threads() const { return thread_count_.load(); }
  // Tasks waiting for a thread.
  int64_t queue_depth() const {
    return queued_.load(std::memory_order_relaxed);
  }
  // Whether threads were pinned (libnuma available and pinning asked for).
  bool pinned() const { return pinned_; }

 private:
  struct Node {
    ReaderPool* pool = nullptr;
    int target_threads = 0;
    absl::Mutex mu;
    int parked ABSL_GUARDED_BY(mu) = 0;
    boost::asio::io_context context;
    boost::asio::executor_work_guard<boost::asio::io_context::executor_type>
        guard{context.get_executor()};
    std::vector<int> cpus;
    std::vector<std::thread> threads ABSL_GUARDED_BY(mu);  // live threads
    // Spares that exited.
    std::vector<std::thread> finished ABSL_GUARDED_BY(mu);
  };
  // The node whose pool runs the calling thread; null off the pool.
  static thread_local Node* current_node_;
  // Starts one more thread on `node`; node->mu held. A `spare` thread
  // exits when idle (Options::spare_idle).
  void AddThreadLocked(Node* node, bool spare)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(node->mu);
  // A spare thread's loop: runs tasks until idle while not needed.
  void RunSpare(Node* node);
  std::vector<std::unique_ptr<Node>> nodes_;
  std::atomic<uint64_t> next_{0};
  std::atomic<int64_t> queued_{0};
  std::atomic<int> thread_count_{0};
  std::chrono::milliseconds spare_idle_;
  bool pinned_ = false;
  std::atomic<bool> stopped_{false};
};

}  // namespace mentat::server

#endif  // MENTAT_SERVER_READER_POOL_H_
