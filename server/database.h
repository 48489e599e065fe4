#ifndef MENTAT_SERVER_DATABASE_H_
#define MENTAT_SERVER_DATABASE_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "mentat/storage/db.h"
#include "mentat/storage/store.h"
#include "request_ledger.h"

namespace mentat::server {

// Told about commits of a database (Subscribe streams). Called on the
// transactor thread: must not block.
class CommitListener {
 public:
  virtual ~CommitListener() = default;
  // A transaction committed; Latest() already shows it.
  virtual void OnCommit() = 0;
  // A group was written to the log ahead of its fsync; LatestWritten()
  // shows it (StoreOptions::stream_before_sync). Replication streams send
  // it at once; others wait for OnCommit.
  virtual void OnWritten() {}
  // The database is gone (deleted) or closing (shutdown).
  virtual void OnClosed(const absl::Status& why) = 0;
};

struct DatabaseOptions {
  storage::StoreOptions store;
  int64_t idempotency_window_micros = int64_t{24} * 3600 * 1000000;
  size_t idempotency_cache_entries = 100000;
  int64_t resume_window_micros = int64_t{600} * 1000000;
  // A read replica's database (docs/replication.md): its store takes only
  // replicated transactions, and opening it installs nothing (the
  // primary's copy has the server's schema already).
  bool replica = false;
};

// The ident of the server's own attribute: the client request id a
// transaction carried (a string on the transaction entity).
inline constexpr char kRequestIdAttr[] = "mentat.tx/request-id";
// ... and a fingerprint of its tx-data (a long), so that a retry with other
// tx-data under the same id is refused rather than replayed.
inline constexpr char kRequestDigestAttr[] = "mentat.tx/request-digest";

// One open database: its store, the commit feed of its Subscribe streams,
// the database values kept for resuming streams, and its request ledger.
// Shared (shared_ptr) by every call that uses it; deleting a database
// unlinks it from the registry at once, and its files go when the last call
// lets go. Thread-safe.
class Database {
 public:
  // Opens the store in `path` (creating it if `create`), and installs the
  // server's schema (:mentat.tx/request-id and request-digest) if it is
  // missing.
  [[nodiscard]] static absl::StatusOr<std::shared_ptr<Database>> Open(
      std::string name, std::string path, const DatabaseOptions& options,
      bool create);

  // Closes the store; removes the files if the database was deleted; runs
  // the on-destroyed hook.
  ~Database();

  const std::string& name() const { return name_; }
  const std::string& path() const { return path_; }
  storage::Store& store() { return *store_; }
  std::shared_ptr<const storage::Db> Latest() const { return store_->Latest(); }
  // See storage::Store::LatestWritten: for replication streams only.
  std::shared_ptr<const storage::Db> LatestWritten() const {
    return store_->LatestWritten();
  }
  storage::EntityId request_id_attr() const { return request_id_attr_; }
  storage::EntityId request_digest_attr() const { return request_digest_attr_; }
  RequestLedger& ledger() { return *ledger_; }
  const DatabaseOptions& options() const { return options_; }

  // Queues a transaction; `done` runs on the transactor thread. Wakes the
  // commit listeners after a commit. NotFound if the database was deleted.
  void Transact(storage::TxRequest request, storage::TxCallback done);

  // Replicas: queues a transaction of the primary's log
  // (Store::ApplyReplicated); wakes the commit listeners once it is
  // applied. NotFound if the database was deleted.
  void ApplyReplicated(storage::ReplicatedTx tx, storage::TxCallback done);

  // The commit feed.
  void AddListener(CommitListener* listener);
  void RemoveListener(CommitListener* listener);
  // Wakes the listeners: commits happened outside Transact (a bulk
  // import); they catch up from the log.
  void NotifyCommitted();
  // Wakes the listeners for a group written ahead of its fsync (the
  // store's on_written, on the transactor thread).
  void NotifyWritten();

  // Keeps `db` available (by its basis tx) for resuming streams, for the
  // resume window. Cheap when it is already kept.
  void Retain(const std::shared_ptr<const storage::Db>& db);
  // A kept database value, or the latest if its basis is `basis_tx`;
  // nullptr if neither.
  std::shared_ptr<const storage::Db> DbAt(storage::EntityId basis_tx);

  // Deletion: new calls get NotFound; listeners are told; the store stops
  // taking transactions (queued ones commit); files go in the destructor.
  void MarkDeleted();
  bool deleted() const { return deleted_.load(std::memory_order_acquire); }

  // Set aside (DatabaseRegistry::SetAside: a cluster node discarding a
  // former primary's tail): as MarkDeleted, but the files stay, and calls
  // still holding the database (reads waiting for a min_basis_tx,
  // Subscribe streams, streams between messages) end with
  // Unavailable(`why`) instead of NotFound, so that a client tries another
  // node. The store's files close when the last call lets go (the
  // registry waits for that before a new copy opens at the same path:
  // RocksDB refuses a second open of a path in one process). Once only.
  void MarkSetAside(std::string why);

  // Tells the listeners the database is going away for `why` (Subscribe
  // streams end with it). Shutdown does this before it waits for calls.
  void EndSubscriptions(const absl::Status& why);

  // Shutdown: listeners are told (Unavailable); the store closes after
  // committing what is queued.
  void Close();

  // NotFound ("database NAME was deleted") once the database is deleted,
  // Unavailable (MarkSetAside's why) once it is set aside, else OK. Streams
  // check it between messages, so that they end with NOT_FOUND (or
  // UNAVAILABLE). Any thread; an atomic load.
  [[nodiscard]] absl::Status CheckLive() const;

  // Bulk imports run one at a time per database: BeginImport is true if
  // no import was running (the caller now runs one and calls EndImport),
  // false if one is. Any thread.
  [[nodiscard]] bool BeginImport() {
    return !importing_.exchange(true, std::memory_order_acq_rel);
  }
  void EndImport() { importing_.store(false, std::memory_order_release); }

  // Runs when the destructor is done, told whether the database was
  // deleted (the registry then removes its deletion marker and forgets the
  // name).
  void set_on_destroyed(std::function<void(bool deleted)> f) {
    on_destroyed_ = std::move(f);
  }

 private:
  Database(std::string name, std::string path, const DatabaseOptions& options);

  const std::string name_;
  const std::string path_;
  const DatabaseOptions options_;
  std::unique_ptr<storage::Store> store_;
  std::unique_ptr<RequestLedger> ledger_;
  storage::EntityId request_id_attr_ = 0;
  storage::EntityId request_digest_attr_ = 0;
  std::atomic<bool> deleted_{false};
  // Written once, before set_aside_ is stored (release); read only after
  // set_aside_ was seen true (acquire).
  std::string set_aside_why_;
  std::atomic<bool> set_aside_{false};
  std::atomic<bool> importing_{false};
  std::function<void(bool deleted)> on_destroyed_;

  absl::Mutex listeners_mu_;
  std::vector<CommitListener*> listeners_ ABSL_GUARDED_BY(listeners_mu_);
  std::atomic<int> listener_count_{0};

  struct Kept {
    int64_t until_micros;
    std::shared_ptr<const storage::Db> db;
  };
  absl::Mutex kept_mu_;
  std::deque<Kept> kept_ ABSL_GUARDED_BY(kept_mu_);
};

// Microseconds since the Unix epoch, now.
int64_t NowMicros();

}  // namespace mentat::server

#endif  // MENTAT_SERVER_DATABASE_H_
