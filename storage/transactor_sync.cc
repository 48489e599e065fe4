// The transactor's sync thread (StoreOptions::pipeline_commits): fsyncs
// the groups the transactor wrote ahead of their fsync, then publishes
// and answers them in order, while the transactor applies and writes the
// next groups.

#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "internal/transactor.h"
#include "mentat/base/str_cat.h"

namespace mentat::storage {

void Transactor::HandOff(Unsynced unsynced) {
  AssertOnTransactorThread("HandOff");
  bool shown = false;
  {
    absl::MutexLock lock(&sync_mu_);
    // Under the lock: after a failed fsync the sync thread puts written_
    // back to the published state, and no later group may move it on.
    if (unsynced.db != nullptr && core_->options.stream_before_sync &&
        sync_error_.ok()) {
      written_.store(unsynced.db);
      shown = core_->options.on_written != nullptr;
    }
    unsynced_.push_back(std::move(unsynced));
    in_flight_++;
  }
  sync_cv_.Signal();
  if (shown) core_->options.on_written();
}

bool Transactor::InFlight() {
  if (!pipelined_) return false;
  absl::MutexLock lock(&sync_mu_);
  return in_flight_ > 0;
}

bool Transactor::Queued() {
  absl::MutexLock lock(&mu_);
  return !queue_.empty();
}

void Transactor::Drain() {
  AssertOnTransactorThread("Drain");
  if (!pipelined_) return;
  absl::MutexLock lock(&sync_mu_);
  while (in_flight_ > 0) drained_cv_.Wait(&sync_mu_);
}

void Transactor::AdoptSyncFailure() {
  AssertOnTransactorThread("AdoptSyncFailure");
  if (unsynced_group_ || !sync_failed_.load(std::memory_order_acquire)) {
    return;
  }
  absl::MutexLock lock(&sync_mu_);
  write_error_ = sync_error_;
  // ResumeWrites refuses every later group: RocksDB's memtable holds the
  // failed groups, and any later snapshot would show them.
  unsynced_group_ = true;
  // Ids the failed groups handed out stay used (they may be in the log),
  // and their instants may not be taken again: read the ceiling again.
  const auto counters = state_.next_counter;
  state_ = failed_start_;
  state_.next_counter = counters;
  state_.tx_instant_ceiling = internal::TxState::kUnknownCeiling;
  stats_ = std::make_shared<Statistics>(latest_.load()->stats());
}

void Transactor::SyncLoop() {
  for (;;) {
    std::deque<Unsynced> batch;
    {
      absl::MutexLock lock(&sync_mu_);
      while (!sync_stopping_ && unsynced_.empty()) sync_cv_.Wait(&sync_mu_);
      if (unsynced_.empty()) return;  // stopping, and nothing in flight
      batch.swap(unsynced_);
    }
    SyncAndAnswer(&batch);
    absl::MutexLock lock(&sync_mu_);
    in_flight_ -= batch.size();
    if (in_flight_ == 0) drained_cv_.SignalAll();
  }
}

void Transactor::SyncAndAnswer(std::deque<Unsynced>* batch) {
  const bool stream_before_sync = core_->options.stream_before_sync;
  rocksdb::Status error;
  {
    absl::MutexLock lock(&sync_mu_);
    error = sync_error_;
  }
  const Unsynced* first_written = nullptr;
  for (const Unsynced& u : *batch) {
    if (u.db != nullptr) {
      first_written = &u;
      break;
    }
  }
  // One fsync for every group written since the last one.
  if (error.ok() && first_written != nullptr) {
    error = core_->db->SyncWAL();
    if (!error.ok()) {
      absl::MutexLock lock(&sync_mu_);
      sync_error_ = error;
      failed_start_ = first_written->group_start;
      sync_failed_.store(true, std::memory_order_release);
      // Streams stop showing what will never be published.
      if (stream_before_sync) written_.store(latest_.load());
    }
  }
  for (Unsynced& u : *batch) {
    if (u.db != nullptr && error.ok()) {
      // Before the publish: every reader of the new basis finds its
      // columns' versions.
      UpdateColumns(u.db->basis_tx(), u.results);
      if (!stream_before_sync) written_.store(u.db);
      latest_.store(std::move(u.db));
    } else if (u.db != nullptr) {
      const absl::Status failed = absl::UnavailableError(StrCat(
          "commit failed (the fsync: ", error.ToString(),
          "): the transaction is not acknowledged; its data reached the "
          "log and it may be there once the store reopens. Writes are off "
          "until then (restart mentatd); reads go on"));
      for (auto& r : u.results) {
        if (r.ok()) r = failed;
      }
    }
    Answer(&u.group, &u.results);
  }
}

void Transactor::UpdateColumns(
    EntityId tx, const std::vector<absl::StatusOr<TxReport>>& results) {
  internal::ColumnCache* columns = core_->column_cache.get();
  if (columns == nullptr) return;
  std::vector<const Datom*> datoms;
  for (const auto& r : results) {
    if (!r.ok()) continue;
    for (const Datom& d : r->datoms) datoms.push_back(&d);
  }
  columns->Commit(tx, datoms);
}

void Transactor::Answer(std::deque<Pending>* group,
                        std::vector<absl::StatusOr<TxReport>>* results_in) {
  std::vector<absl::StatusOr<TxReport>>& results = *results_in;
  uint64_t committed = 0, failed = 0, datoms = 0;
  for (const auto& r : results) {
    if (r.ok()) {
      committed++;
      datoms += r->datoms.size();
    } else {
      failed++;
    }
  }
  if (committed > 0) groups_.fetch_add(1, std::memory_order_relaxed);
  transactions_.fetch_add(committed, std::memory_order_relaxed);
  failed_transactions_.fetch_add(failed, std::memory_order_relaxed);
  datoms_.fetch_add(datoms, std::memory_order_relaxed);
  if (group->size() > largest_group_.load(std::memory_order_relaxed)) {
    largest_group_.store(group->size(), std::memory_order_relaxed);
  }

  size_t i = 0;
  for (Pending& p : *group) p.done(std::move(results[i++]));
}

}  // namespace mentat::storage
