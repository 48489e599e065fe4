#ifndef MENTAT_BENCH_SUITE_MIXED_WRITER_H_
#define MENTAT_BENCH_SUITE_MIXED_WRITER_H_

// The `mixed` scenario's writer: commits at a fixed rate, open loop, into
// :issue/state and :issue/priority, the attributes q3, q4 and since read,
// in a way that keeps every read check exact.
//
// Each transaction takes four pool members no other transaction holds:
// A (open) and B (not open) of equal priority swap states, so the per-state
// counts (q3) and the open issues per priority (q4) stay what they were;
// C and D (both open or both not, different priorities) swap priorities,
// which keeps q4's count too. The writer records which members' states it
// changed and in which transaction, so since(t_since) at any basis has a
// known answer.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "mentat/client/client.h"
#include "suite/mixed_pool.h"

namespace mentat::bench {

// What the writer did between Start and Stop.
struct WriterFigures {
  double rate = 0;  // asked, tx/s
  int writers = 0;  // threads
  int64_t acked = 0;
  int64_t errors = 0;
  double seconds = 0;      // from Start to Stop
  std::vector<double> ms;  // each acknowledged commit, send to answer
  std::vector<std::string> failures;  // the first few
};

class MixedWriter {
 public:
  // `client` and `pool` are not owned and must outlive the writer; the
  // writer changes the pool's members as its commits are acknowledged.
  MixedWriter(client::Client& client, std::string database, MixedPool* pool);
  ~MixedWriter();

  MixedWriter(const MixedWriter&) = delete;
  MixedWriter& operator=(const MixedWriter&) = delete;

  // Starts `writers` threads that together commit `rate` transactions per
  // second: transaction k is due k / rate seconds after the start and is
  // sent then, or at once by the next free thread when all are behind.
  void Start(double rate, int writers);

  // Stops the threads after their commits in flight; what they did.
  WriterFigures Stop();

  // Pool members whose state changed after t_since as of `basis_tx`,
  // counting those of earlier runs. Call between Stop and the next Start.
  int64_t ChangedAfterSinceAt(int64_t basis_tx) const;

  // True once a commit failed: its outcome is unknown, so the pool's state
  // may differ from the database's.
  bool uncertain() const { return uncertain_.load(); }

 private:
  struct Held {
    size_t a, b, c, d;  // pool positions
  };

  void Work(int thread, double rate);
  // Takes four free members that fit the swaps; false if there are none
  // right now.
  bool Take(std::mt19937_64& rng, Held* held)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  client::Client& client_;
  const std::string database_;
  MixedPool* const pool_;         // its members are guarded by mu_
  const int64_t changed_before_;  // members changed after t_since by
                                  // earlier runs

  mutable absl::Mutex mu_;
  std::vector<bool> busy_ ABSL_GUARDED_BY(mu_);
  // The transaction that first changed each newly changed member's state.
  std::vector<int64_t> first_change_tx_ ABSL_GUARDED_BY(mu_);
  WriterFigures figures_ ABSL_GUARDED_BY(mu_);

  std::vector<std::thread> threads_;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> next_slot_{0};
  std::atomic<bool> uncertain_{false};
  std::chrono::steady_clock::time_point start_;
};

}  // namespace mentat::bench

#endif  // MENTAT_BENCH_SUITE_MIXED_WRITER_H_
