#ifndef MENTAT_STORAGE_STORE_H_
#define MENTAT_STORAGE_STORE_H_

#include <atomic>
#include <functional>
#include <future>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "mentat/storage/cache_counters.h"
#include "mentat/storage/db.h"
#include "mentat/storage/store_options.h"
#include "mentat/storage/tx_op.h"
#include "mentat/storage/tx_report.h"

namespace mentat::storage {

class Transactor;
namespace internal {
class CacheWarmer;
}  // namespace internal

using TxCallback = std::function<void(absl::StatusOr<TxReport>)>;

// Feeds Store::Import. Called on the transactor thread.
class ImportSource {
 public:
  virtual ~ImportSource() = default;
  // Fills *request with the next transaction; false when there are no
  // more. An error stops the import.
  [[nodiscard]] virtual absl::StatusOr<bool> Next(TxRequest* request) = 0;
  // The report of each imported transaction, in order (tempids, tx id).
  virtual void OnReport(const TxReport& report) { (void)report; }
};

struct ImportOptions {
  // Keys collected in memory before they are written as SST files and
  // ingested (about 100 bytes each with the index). Smaller chunks keep the
  // in-memory index shallow; larger ones mean fewer, larger files.
  // Default: 4 million.
  size_t chunk_keys = 4000000;
  // Memory for the import's filter of the (attribute, value) pairs that
  // earlier chunks wrote, which spares most reads of the DB (a value no
  // entity holds yet needs no seek). About 10 bits per pair keep false
  // positives near 2%, so the default serves some 25 million pairs (past
  // that, more misses read the DB); 0 turns the filter off.
  size_t filter_bytes = size_t{32} << 20;
  // How many (attribute, value) pairs the import remembers the first
  // entity of (about 50 bytes each), so that later chunks read none of
  // them from the DB: each counts, looks up or checks the values earlier
  // chunks wrote (the same assignee, the same instant) without a seek.
  // Needs the filter; 0 turns it off.
  size_t summary_groups = size_t{4} << 20;

  // Options whose import stays near `bytes` of working memory (mentatd's
  // --import-memory): two chunks of keys (the one being applied, the one
  // being written; about 100 bytes a key with its index, arena and run
  // entries), the filter (1/32 of it) and the summary (about a fifth).
  // 1 GiB gives about the defaults above. At least 64 MiB is used.
  static ImportOptions WithinMemory(size_t bytes);
};

struct ImportReport {
  int64_t transactions = 0;
  int64_t datoms = 0;
  int64_t chunks = 0;
};

// A store's role in a cluster (docs/replication.md). A primary commits
// transactions; a read replica takes only transactions replicated from
// its primary (Store::ApplyReplicated) and refuses Transact and Import.
enum class StoreRole { kPrimary, kReplica };

// One committed transaction of a primary's log, as a replica receives it:
// the entry's bytes exactly as the primary stored them (ReadTxLogRaw).
struct ReplicatedTx {
  // The transaction before `tx` in the primary's log (0 for the first).
  EntityId prev_tx = 0;
  EntityId tx = 0;
  std::string entry;
  // prev_tx's :db/txInstant in the primary's log, in microseconds (0: not
  // checked). Ids alone cannot tell two histories apart: a deposed
  // primary's last transaction and the new primary's first can share an
  // id. A store whose basis is prev_tx with another instant holds another
  // transaction under that id, and applies nothing after it.
  int64_t prev_instant = 0;
};

// What Store::Checkpoint wrote.
struct CheckpointReport {
  // The last transaction the checkpoint holds.
  EntityId basis_tx = 0;
  // Files and bytes in the checkpoint directory.
  int64_t files = 0;
  int64_t bytes = 0;
};

// A durable store of datoms with full history, in one RocksDB instance.
//
// Writes go through one transactor thread (group commit); reads go through
// the immutable Db that the transactor last published. Opening reads a few
// keys of `meta` and the schema entities, never the history.
//
// Thread safety: every public method may be called from any thread.
class Store {
 public:
  // Opens (or, with create_if_missing, creates) the store in `path`.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<Store>> Open(
      const std::string& path, const StoreOptions& options = {});

  // Stops the transactor after it has answered every queued transaction,
  // then closes RocksDB once the last Db handed out is released.
  ~Store();

  // The latest published state. Lock-free for readers.
  std::shared_ptr<const Db> Latest() const;
  // The latest state written to the log: Latest(), or with
  // StoreOptions::stream_before_sync a state whose last group may still
  // be waiting for its fsync. For replication streams only; lock-free.
  std::shared_ptr<const Db> LatestWritten() const;

  // Queues a transaction. `done` runs on a store thread (the transactor's,
  // or its sync thread's: StoreOptions::pipeline_commits) once the
  // transaction is durable (or failed); it must not block. A transaction
  // refused at once (ResourceExhausted when StoreOptions::queue_capacity
  // transactions are already waiting, Unavailable after Close) gets `done`
  // on the calling thread, before Transact returns.
  void Transact(TxRequest request, TxCallback done);

  // The same, as a future.
  std::future<absl::StatusOr<TxReport>> Transact(TxRequest request);

  // Replication (replicas only: a store in the kPrimary role refuses it
  // with FailedPrecondition, since another log's entries would interleave
  // with its own commits). Queues one transaction of a primary's log; the
  // transactor applies its resolved datoms through the same write path as a
  // commit (current and history keys, the log entry, statistics, schema,
  // caches, columns, partition counters, durability; entries queued together
  // group-commit), with no tempid resolution and no tx-data rules: the primary
  // checked those. `done` runs as for Transact, with a report of the datoms (no
  // tempids). Errors: FailedPrecondition when `prev_tx` is not the store's
  // basis (a gap or a repeat: nothing is applied), DataLoss for an entry that
  // does not decode or does not fit the store (a retraction of a datom it does
  // not hold, an unknown attribute: the replica diverged), and Transact's
  // (queue full, closing, I/O errors).
  void ApplyReplicated(ReplicatedTx tx, TxCallback done);
  std::future<absl::StatusOr<TxReport>> ApplyReplicated(ReplicatedTx tx);

  // The store's role; kPrimary unless set. A replica's Transact and
  // Import fail with FailedPrecondition. Any thread; phase 2 of issue 19
  // switches it at runtime (promotion, fencing).
  void SetRole(StoreRole role);
  StoreRole role() const;

  // A replica elected primary of `term` (docs/replication.md, phase 2):
  // once the replicated entries queued before this call are applied, every
  // log entry this store writes carries `term`, and the role becomes
  // kPrimary. Blocks until the transactor has done it. FailedPrecondition
  // (nothing changed) when the store already holds entries of a later
  // term; Unavailable when it is closing.
  [[nodiscard]] absl::Status Promote(int64_t term);

  // Bulk import: applies the source's transactions with exactly the
  // semantics of Transact (the same code applies them), but writes sorted
  // SST files and ingests them instead of going through the memtable and
  // the WAL. Runs alone on the transactor thread; transactions submitted
  // meanwhile wait. Every chunk's files are ingested before its counters,
  // basis and statistics are written (synced), so a crash during an import
  // keeps whole chunks; Open repairs counters from the data if the crash
  // fell between the two. On a failing transaction, what came before it
  // stays imported and the error names the transaction's index.
  [[nodiscard]] absl::StatusOr<ImportReport> Import(
      ImportSource* source, const ImportOptions& options = {});

  // Online backup: writes a RocksDB checkpoint of the store into `dir`
  // (hard links to the immutable table files where `dir` is on the same
  // file system, copies otherwise; the write-ahead log is copied, or the
  // memtables flushed first when it is large). Transactions keep committing
  // meanwhile. The checkpoint holds exactly the transactions up to the
  // returned basis_tx: Store::Open on `dir` gives the database as of that
  // transaction (the basis is read back from the checkpoint itself, the way
  // Open reads it). `dir` must not exist; its parent must. Errors:
  // AlreadyExists if `dir` exists, FailedPrecondition if its parent does
  // not or RocksDB refuses, ResourceExhausted when the disk it writes to
  // is full, Unavailable for other I/O errors; a partial `dir` is
  // removed. Any thread; blocks for the duration of the copy.
  [[nodiscard]] absl::StatusOr<CheckpointReport> Checkpoint(
      const std::string& dir) const;

  // OK while the store takes writes. Otherwise why it does not, as RocksDB
  // reports it: ResourceExhausted when the disk is full (naming the
  // directory; RocksDB resumes writes by itself once space is freed),
  // Unavailable or DataLoss for other I/O errors. Also not OK while only
  // compactions are paused (a full disk; writes still go on). Reads are not
  // affected. Any thread; cheap (one lock of the store's own).
  [[nodiscard]] absl::Status WriteHealth() const;

  // Stops accepting transactions, lets queued ones commit, stops the
  // transactor. Idempotent; the destructor calls it.
  void Close();

  const std::string& path() const { return path_; }
  const StoreOptions& options() const { return options_; }

  // RocksDB's statistics and properties, for metrics: a property summed
  // over column families ("rocksdb.cur-size-all-mem-tables"), except the
  // block cache's ("rocksdb.block-cache-usage"), which the families share;
  // or a ticker.
  uint64_t RocksDbProperty(const std::string& name) const;
  uint64_t RocksDbTicker(uint32_t ticker) const;

  // The entity, value and column caches (StoreOptions::entity_cache_bytes,
  // value_cache_bytes, column_cache_bytes): see CacheCounters.
  CacheCounters entity_cache_counters() const;
  CacheCounters value_cache_counters() const;
  CacheCounters column_cache_counters() const;
  // Waits until the column cache has no build or fold queued or running
  // (tests and benchmarks: columns are built in the background).
  void WaitForColumns() const;
  // Waits until the entity cache warmer (StoreOptions::warm_entity_cache)
  // has ended; at once when it is off. Tests and benchmarks.
  void WaitForWarmCache() const;

  // Counters of the transactor since the store opened (for metrics and
  // benchmarks): groups committed, transactions committed and failed,
  // datoms written, the largest group, and the flushes asked for because
  // commits stepped over many tombstones of one busy entity
  // (Transactor::FlushClogged).
  struct TransactorCounters {
    uint64_t groups = 0;
    uint64_t transactions = 0;
    uint64_t failed_transactions = 0;
    uint64_t datoms = 0;
    uint64_t largest_group = 0;
    uint64_t queue_depth = 0;
    uint64_t clog_flushes = 0;
  };
  TransactorCounters transactor_counters() const;

  // Flushes and compacts every family, so that no file of the store keeps
  // the bytes of what an excision removed (reads never show them once the
  // excision commits; RocksDB's files keep them until a compaction drops
  // them). The transactor starts one in the background after every
  // excision (and Checkpoint runs one first while an excision's is not
  // done); this runs one now and blocks until it is done (the whole
  // store is rewritten; reads and writes go on). Unavailable on a RocksDB
  // error or when the store is closing. Any thread.
  [[nodiscard]] absl::Status PurgeExcised();

  // Applies the retention options as of `now_micros`: computes, per
  // attribute, the last tx older than its retention, so compaction drops
  // history retracted at or before it; with `compact`, compacts the
  // history families now. The database-wide horizon is persisted, and
  // as_of reads before it fail (Db::CheckBasis). The server calls this
  // periodically. InvalidArgument for unknown attributes in the options.
  [[nodiscard]] absl::Status ApplyRetention(int64_t now_micros, bool compact);

  // Size of the store's files on disk, in bytes.
  uint64_t DiskSizeBytes() const;

  // Flushes memtables (tests and benchmarks use it to measure size).
  [[nodiscard]] absl::Status Flush();

  // Compacts every column family down to its last level (benchmarks use it
  // to measure the steady-state size on disk).
  [[nodiscard]] absl::Status CompactAll();

 private:
  Store(std::string path, const StoreOptions& options);

  std::string path_;
  StoreOptions options_;
  std::shared_ptr<internal::StoreCore> core_;
  std::unique_ptr<Transactor> transactor_;
  // With StoreOptions::warm_entity_cache; stopped first on Close.
  std::unique_ptr<internal::CacheWarmer> warmer_;
  std::atomic<StoreRole> role_{StoreRole::kPrimary};
};

}  // namespace mentat::storage

#endif  // MENTAT_STORAGE_STORE_H_
