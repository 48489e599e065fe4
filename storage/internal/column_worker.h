#ifndef MENTAT_STORAGE_INTERNAL_COLUMN_WORKER_H_
#define MENTAT_STORAGE_INTERNAL_COLUMN_WORKER_H_

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "internal/column_cache.h"

namespace mentat::storage::internal {

struct StoreCore;

// The store's column thread: builds the columns the ColumnCache queues
// (each from a RocksDB snapshot of its own, so that no query waits for
// one) and folds deltas into new bases, one job at a time, off the
// transactor's thread and off every query's path.
//
// It also remembers in `meta` which columns the store holds ("col" +
// order + attribute), so that a reopened store builds them again at once
// (RememberedColumns): the first bulk query after a restart finds them.
//
// Owned by StoreCore; the thread runs from construction until Stop.
class ColumnWorker {
 public:
  // `core` must outlive the worker, with core->column_cache set.
  explicit ColumnWorker(StoreCore* core);
  ~ColumnWorker();
  ColumnWorker(const ColumnWorker&) = delete;
  ColumnWorker& operator=(const ColumnWorker&) = delete;

  // Drops queued jobs, ends the running one early, joins the thread.
  // Idempotent; any thread but the worker's.
  void Stop();

  // The columns `meta` says the store held when it was last open.
  static std::vector<std::pair<IndexOrder, EntityId>> RememberedColumns(
      StoreCore* core);

 private:
  void Run();
  void Build(ColumnCache::Job job);
  void Fold(ColumnCache::Job job);
  // Writes (or, with `held` false, deletes) the meta key that says the
  // store holds the column. A hint: errors are ignored.
  void Remember(IndexOrder order, EntityId attribute, bool held);

  StoreCore* core_;
  ColumnCache* cache_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace mentat::storage::internal

#endif  // MENTAT_STORAGE_INTERNAL_COLUMN_WORKER_H_
