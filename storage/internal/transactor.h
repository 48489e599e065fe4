#ifndef MENTAT_STORAGE_INTERNAL_TRANSACTOR_H_
#define MENTAT_STORAGE_INTERNAL_TRANSACTOR_H_

#include <array>
#include <atomic>
#include <chrono>
#include <deque>
#include <memory>
#include <thread>

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
  // Hands the group's datoms to the column cache (ColumnCache::Commit).
  void UpdateColumns(const std::vector<absl::StatusOr<TxReport>>& results);

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
