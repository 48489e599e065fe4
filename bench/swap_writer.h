#ifndef MENTAT_BENCH_SWAP_WRITER_H_
#define MENTAT_BENCH_SWAP_WRITER_H_

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "loader.h"
#include "mentat/storage/store.h"
#include "workload.h"

namespace mentat::bench {

// A writer at a fixed rate into :issue/state and :issue/priority, for
// measuring reads under writes (query-bench --writer-tps). Each
// transaction swaps the states of two issues of equal priority, or the
// priorities of two issues in the same state, so that the answers of q3
// (issues per state) and q4 (open issues of priority >= p, counted) stay
// what the truth says, and since(t_since) only gains the issues whose
// state it changed (states_touched()).
//
// It writes to a sample of the issues, whose states and priorities it
// tracks itself (from the generator, then its own swaps): every one of
// its transactions must commit. Start and Stop from one thread; the
// counters may be read from any.
class SwapWriter {
 public:
  SwapWriter(storage::Store* store, const WorkloadScale& scale,
             const LoadResult& meta, double tx_per_second);
  ~SwapWriter() { Stop(); }

  void Start();
  // Stops submitting and waits for every submitted transaction.
  void Stop();

  // Transactions acknowledged, and those that failed (0 unless the store
  // is broken: every one is valid).
  int64_t committed() const { return committed_.load(); }
  int64_t failed() const { return failed_.load(); }
  // Distinct issues whose state the writer changed.
  int64_t states_touched() const { return states_touched_.load(); }

 private:
  void Run();
  // The next transaction's ops; updates the sample's states.
  std::vector<storage::TxOp> NextSwap();

  storage::Store* store_;
  double tx_per_second_;
  struct Sampled {
    storage::EntityId id;
    int state;
    int64_t priority;
    bool state_touched = false;
  };
  std::vector<Sampled> sample_;
  uint64_t rng_ = 88172645463325252ull;
  int64_t submitted_ = 0;
  std::atomic<int64_t> committed_{0};
  std::atomic<int64_t> failed_{0};
  std::atomic<int64_t> states_touched_{0};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace mentat::bench

#endif  // MENTAT_BENCH_SWAP_WRITER_H_
