#ifndef MENTAT_STORAGE_INTERNAL_TRANSACTOR_H_
#define MENTAT_STORAGE_INTERNAL_TRANSACTOR_H_

#include <array>
#include <atomic>
#include <chrono>
#include <deque>
#include <memory>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "internal/store_core.h"
#include "internal/tx_applier.h"
#include "internal/tx_state.h"
#include "mentat/storage/db.h"
#include "mentat/storage/store.h"

namespace mentat::storage {

// The single writer of a store. Callers queue transactions; one thread
// drains the queue into a group (up to StoreOptions::max_group_transactions
// and max_group_datoms), applies each transaction on one CommitBatch
// (internal/commit_batch.h: a WriteBatch plus an index of the group's keys,
// read together with the DB, so each transaction sees the ones before it)
// with a save point (a failing transaction is rolled back alone), writes
// the group with one Write (synced when StoreOptions::sync_commits),
// publishes the new Db, and only then answers the callers. A bulk import
// runs alone on the same thread, between groups.
//
// With StoreOptions::sync_commits and pipeline_commits, a group's fsync,
// publish and answers run on a second thread (the sync thread), so that
// the transactor applies and writes the next group meanwhile: the
// transactor writes group N without a sync, takes its snapshot, and hands
// it over; the sync thread fsyncs the log once for every group handed
// over since its last fsync, then publishes and answers them in order.
// Group N+1's reads see N's keys (they are in the memtable once the write
// returns) but nothing shows N+1 before N. A failed fsync fails every
// group it covered and every later one, and writes stay off until the
// store reopens (the groups are in RocksDB's memtable). Excisions, bulk
// imports and term changes wait until the sync thread has answered
// everything handed over, and then run as before.
class Transactor {
 public:
  Transactor(std::shared_ptr<internal::StoreCore> core, internal::TxState state,
             std::shared_ptr<Statistics> stats,
             std::shared_ptr<const Db> initial);
  ~Transactor();

  // Thread-safe. See Store::Transact.
  void Submit(TxRequest request, TxCallback done);
  // Thread-safe. See Store::ApplyReplicated.
  void SubmitReplicated(internal::ReplicatedEntry entry, TxCallback done);

  // Thread-safe. See Store::Import: runs on the transactor thread, between
  // groups, with no other writes.
  [[nodiscard]] absl::StatusOr<ImportReport> Import(
      ImportSource* source, const ImportOptions& options);

  // Thread-safe. See Store::Promote: runs on the transactor thread after
  // everything queued before it, and sets the term the next entries are
  // written in.
  [[nodiscard]] absl::Status BeginTerm(int64_t term);

  // Thread-safe, lock-free: an atomic load.
  std::shared_ptr<const Db> Latest() const { return latest_.load(); }
  // Thread-safe, lock-free. See Store::LatestWritten.
  std::shared_ptr<const Db> LatestWritten() const { return written_.load(); }

  Store::TransactorCounters counters() const;

  // Answers everything queued, then stops the thread. Idempotent.
  void Stop();

 private:
  struct Pending {
    TxRequest request;
    TxCallback done;
    // Set for work that must run alone on the transactor thread (import).
    std::function<void()> exclusive;
    // Set for a transaction of a primary's log (replicas), instead of
    // `request`.
    std::unique_ptr<internal::ReplicatedEntry> replicated;
  };
  // Queues `p` unless the store is closing or the queue is full; else
  // answers it with why.
  void Enqueue(Pending p);

  // Debug and sanitizer builds (no NDEBUG): aborts, naming `what`, unless
  // called on the transactor thread. Every method that reads or writes
  // the transactor thread's own state (state_, write_error_, importing_,
  // stats_) calls it first, so that a call from another thread fails at
  // once instead of racing. Free in Release builds.
  void AssertOnTransactorThread(const char* what) const;

  void Run();
  void CommitGroup(std::deque<Pending>* group);

  // A group written to the log ahead of its fsync, waiting for the sync
  // thread (pipeline_commits).
  struct Unsynced {
    std::deque<Pending> group;
    std::vector<absl::StatusOr<TxReport>> results;
    // The group's state over a snapshot taken right after its write; null
    // when nothing of the group was written (its results are final).
    std::shared_ptr<const Db> db;
    // The transactor's state before the group (rolled back to if its
    // fsync fails).
    internal::TxState group_start;
  };
  // Transactor thread: queues a group for the sync thread
  // (transactor_sync.cc).
  void HandOff(Unsynced unsynced);
  // Whether a group handed over is not answered yet (false without a sync
  // thread); whether a request waits in the queue.
  bool InFlight();
  bool Queued();
  // Transactor thread: waits until the sync thread has answered every
  // group handed over. A no-op without a sync thread.
  void Drain();
  // Transactor thread: after the sync thread's fsync failed, turns writes
  // off (unsynced_group_) and rolls the state back to before the first
  // group that failed. Cheap (an atomic load) otherwise.
  void AdoptSyncFailure();
  // The sync thread's loop.
  void SyncLoop();
  // Fsyncs the log once for the written groups of `batch` (unless an
  // earlier fsync failed), then publishes and answers every group in
  // order; a failed fsync fails them. The sync thread.
  void SyncAndAnswer(std::deque<Unsynced>* batch);
  // Counts a group's results and answers its callers, in order (either
  // thread: the sync thread when pipelining, else the transactor).
  void Answer(std::deque<Pending>* group,
              std::vector<absl::StatusOr<TxReport>>* results);
  // Bulk import on the transactor thread (transactor_import.cc).
  [[nodiscard]] absl::StatusOr<ImportReport> ImportOnThread(
      ImportSource* source, const ImportOptions& options);
  // Takes a snapshot and publishes the current state as the latest Db
  // (`written`: that state, already made by WrittenState).
  void Publish(std::shared_ptr<Statistics> stats,
               std::shared_ptr<const Db> written = nullptr);
  // The current state as a Db over a new snapshot.
  std::shared_ptr<const Db> MakeDb(std::shared_ptr<Statistics> stats) const;
  // Drops the cached records of every entity the committed transactions
  // of a group touched.
  void InvalidateCached(const std::vector<absl::StatusOr<TxReport>>& results);
  // True for a transaction holding an excision request (tx_excise.cc).
  static bool IsExcision(const Pending& p);
  // Before an excision's write: drops every cached record, column (and
  // column image) and since() index, which may hold what it removes.
  void DropExcisedCaches();
  // After an excision commits: asks the purge thread (started on first
  // use) to run internal::PurgeDeletedBytes, again if it is running.
  void RequestPurge();
  void RunPurges();
  // Hands the datoms of a group committed at basis `tx` to the column
  // cache (ColumnCache::Commit). Called for one group at a time, in basis
  // order: by the sync thread when pipelining, else by the transactor.
  void UpdateColumns(EntityId tx,
                     const std::vector<absl::StatusOr<TxReport>>& results);

  std::shared_ptr<internal::StoreCore> core_;
  // Owned by the transactor thread.
  internal::TxState state_;
  std::shared_ptr<Statistics> stats_;
  // Before a group commits after a failed write: OK once RocksDB takes
  // writes again, else the status that refuses the group.
  [[nodiscard]] absl::Status ResumeWrites();
  // Before every write to the WAL: keeps the meta family's memtable
  // non-empty (a key written and deleted there without the WAL, again
  // after each seal), so that RocksDB's recovery from a failed WAL write
  // always has data to flush and switches to a new WAL (see
  // internal/background_errors.h). Cheap when nothing was sealed.
  [[nodiscard]] rocksdb::Status PinMemtable();
  // After a group whose scans met clogged ranges (CommitBatch::clogged):
  // asks RocksDB to flush those orders' current families, without waiting,
  // each at most once per kClogFlushInterval and never while its last
  // flush is still running. A flush cancels each
  // SingleDelete with its Put, so that the next commits to a busy entity
  // stop stepping over its history.
  void FlushClogged(uint32_t clogged);
  static constexpr std::chrono::milliseconds kClogFlushInterval{50};

  // Set when a commit failed with an I/O error: RocksDB then refuses
  // writes until DB::Resume succeeds (or the store reopens). Transactor
  // thread only.
  rocksdb::Status write_error_;
  // A group written ahead of its fsync whose fsync failed
  // (stream_before_sync): it is in RocksDB's memtable, neither published
  // nor acknowledged, and any later commit's snapshot would publish it, so
  // writes stay off until the store reopens (transactor thread only).
  bool unsynced_group_ = false;
  // BackgroundErrors::PinnedFamilySeals() at the last PinMemtable write
  // (transactor thread only); the maximum forces the first.
  uint64_t pinned_at_seal_ = UINT64_MAX;
  // True while a bulk import runs (transactor thread only).
  bool importing_ = false;
  // When FlushClogged last flushed each order's family (transactor
  // thread only).
  std::array<std::chrono::steady_clock::time_point, 4> clog_flushed_at_{};

  absl::Mutex purge_mu_;
  absl::CondVar purge_cv_;
  bool purge_wanted_ ABSL_GUARDED_BY(purge_mu_) = false;
  bool purge_stopping_ ABSL_GUARDED_BY(purge_mu_) = false;
  // Started by the transactor thread, joined by Stop after it.
  std::thread purge_thread_;

  std::atomic<std::shared_ptr<const Db>> latest_;
  // latest_, or a state written ahead of its fsync (stream_before_sync).
  std::atomic<std::shared_ptr<const Db>> written_;

  // The sync thread (pipeline_commits), and what it shares with the
  // transactor thread. Taken after mu_ is released, never with it.
  const bool pipelined_;
  absl::Mutex sync_mu_;
  absl::CondVar sync_cv_;     // unsynced_ grew, or sync_stopping_ was set
  absl::CondVar drained_cv_;  // in_flight_ fell to 0
  std::deque<Unsynced> unsynced_ ABSL_GUARDED_BY(sync_mu_);
  // Groups handed over and not yet answered.
  size_t in_flight_ ABSL_GUARDED_BY(sync_mu_) = 0;
  bool sync_stopping_ ABSL_GUARDED_BY(sync_mu_) = false;
  // The first failed fsync's status (then every later group fails), and
  // the state before the first group it failed.
  rocksdb::Status sync_error_ ABSL_GUARDED_BY(sync_mu_);
  internal::TxState failed_start_ ABSL_GUARDED_BY(sync_mu_);
  std::atomic<bool> sync_failed_{false};
  // Started by the constructor (pipelined_), joined by Stop after thread_.
  std::thread sync_thread_;

  std::atomic<uint64_t> groups_{0};
  std::atomic<uint64_t> transactions_{0};
  std::atomic<uint64_t> failed_transactions_{0};
  std::atomic<uint64_t> datoms_{0};
  std::atomic<uint64_t> largest_group_{0};
  std::atomic<uint64_t> clog_flushes_{0};

  // Held by Stop while it joins the thread, so that two concurrent Stop
  // calls cannot both join it. Taken before mu_, never after.
  absl::Mutex stop_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  std::thread thread_ ABSL_GUARDED_BY(stop_mu_);
  mutable absl::Mutex mu_;
  absl::CondVar cv_;  // signalled when queue_ grows or stopping_ is set
  std::deque<Pending> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  // The transactor thread's id, recorded when Run starts (until then the
  // default id, which is no thread's): AssertOnTransactorThread.
  std::atomic<std::thread::id> thread_id_{};
};

}  // namespace mentat::storage

#endif  // MENTAT_STORAGE_INTERNAL_TRANSACTOR_H_
