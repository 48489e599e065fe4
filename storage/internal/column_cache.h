#ifndef MENTAT_STORAGE_INTERNAL_COLUMN_CACHE_H_
#define MENTAT_STORAGE_INTERNAL_COLUMN_CACHE_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "internal/column_delta.h"
#include "internal/key_run.h"
#include "mentat/storage/cache_counters.h"
#include "mentat/storage/datom.h"
#include "mentat/storage/keys.h"
#include "mentat/storage/statistics.h"

namespace mentat::storage::internal {

// One version of an attribute's column: every current key of the
// attribute in one index order (AEVT or AVET) as of basis `as_of`, held as
// a base read from a snapshot (or folded) plus the changes committed since
// (`delta`). Readers merge the two (column_cursor.cc, EntityColumn).
// Immutable and shared: a reader keeps the version it took for as long as
// it reads, whatever commits and folds come after.
struct AttributeColumn {
  IndexOrder order = IndexOrder::kAevt;
  EntityId attribute = 0;
  // The attribute as of this basis; the version answers reads at any
  // basis from here up to (not including) the next version's
  // first_change.
  EntityId as_of = 0;
  // The first transaction whose changes this version holds and the one
  // before it does not: a group commit of several transactions makes one
  // version as of its last, so an as_of read at a transaction inside the
  // group (first_change <= t < as_of) has no exact version. A version
  // with no predecessor (built, folded, loaded) has first_change == as_of.
  EntityId first_change = 0;
  std::shared_ptr<const KeyRun> base;
  ColumnDelta delta;

  bool with_entities() const { return order == IndexOrder::kAevt; }
  size_t charge() const {
    return sizeof(AttributeColumn) + base->charge() + delta.charge();
  }
};

// How a ColumnCache sizes, builds and folds its columns.
struct ColumnCacheOptions {
  size_t capacity_bytes = 0;
  // Keys read from RocksDB (since the store opened, or since the column
  // was dropped) that earn an attribute a column.
  uint64_t build_after_rows = 100000;
  // A column's delta is folded into a new base once it holds more than
  // max(fold_min_keys, base keys * fold_fraction) keys: merged reads stay
  // close to a plain walk, and a fold (a copy of the base) comes seldom.
  size_t fold_min_keys = 4096;
  double fold_fraction = 1.0 / 32;
  // Versions kept per column besides the newest, for readers of recent
  // bases that look a column up after newer commits (a query opening its
  // second cursor); older readers go to RocksDB.
  size_t kept_versions = 64;
};

// The AttributeColumns of a store, for attributes that are read in bulk
// (aggregates over an attribute, range scans, joins over most of its
// entities). An attribute gets a column once readers have stepped over
// `build_after_rows` of its keys in RocksDB; the reader that crosses the
// line queues the build and carries on through RocksDB, and the store's
// column thread (ColumnWorker) reads it from a snapshot of its own.
//
// Columns stay current under writes: after each group commit is written,
// and before it is published, the transactor hands the cache the keys it
// added and removed (Commit), and every column of an attribute the group
// wrote gets a new version with those changes in its delta (a copy of the
// delta's chunks they fall in). A reader at basis t takes the newest
// version not newer than t; older versions are kept a while
// (kept_versions), and readers older than the oldest go to RocksDB. When
// a delta grows past its share, the column thread folds it into a new
// base; commits during a build or a fold are logged and replayed onto its
// result.
//
// Least recently used columns go once the newest versions' charges pass
// the capacity; a column bigger than half the capacity is not kept, and
// not tried again while the store is open.
//
// Thread-safe (one mutex; a reader takes it once per seek of a new
// attribute, not per key).
class ColumnCache {
 public:
  explicit ColumnCache(const ColumnCacheOptions& options);

  // Readers: the version of (order, attribute) that holds the attribute
  // exactly as of basis `t`, or null (read RocksDB). A column installed
  // from an image and not checked yet is checked here, on the reader's
  // thread (or waited for, if the column thread is checking it): the
  // first query after the store opens pays the CRC of the columns it
  // reads (about 0.1 s for 250 MB), not the seconds the same reads take
  // through RocksDB while the column thread works through every image.
  std::shared_ptr<const AttributeColumn> Find(IndexOrder order,
                                              EntityId attribute, EntityId t);

 private:
  // Find's check of an unchecked image: false when the column is not
  // (or no longer) usable.
  bool CheckImage(uint64_t slot_key);
  std::shared_ptr<const AttributeColumn> FindChecked(uint64_t slot_key,
                                                     EntityId t);

 public:
  // Readers: `rows` keys of the attribute were read from RocksDB; queues
  // the attribute's build once they add up to build_after_rows.
  void CountScanned(IndexOrder order, EntityId attribute, uint64_t rows);
  // Readers report keys read from RocksDB in lots of at least this many:
  // stray keys of point reads do not count towards a column.
  uint64_t min_report_rows() const {
    return std::min<uint64_t>(256, options_.build_after_rows);
  }
  // Queues the build of (order, attribute) now, whatever was read (a
  // column the store had before it was last closed). No-op if it has a
  // column, or a build is queued, or it is known to be too big.
  void RequestBuild(IndexOrder order, EntityId attribute);
  // Most bytes one column may take.
  size_t max_column_bytes() const { return options_.capacity_bytes / 2; }

  // Transactor, after a bulk import (and its TouchAll): queues the builds
  // of the columns the first bulk reads of the imported data will want,
  // so that they are built (and their images written) off the queries'
  // path instead of by the queries that would earn them. No query has
  // read the new data yet, so the choice comes from `stats`: every
  // attribute with at least build_after_rows current datoms gets its AEVT
  // column (joins by entity, scans, aggregates), and, if its values are
  // few (tracked: at most low_cardinality_limit), its AVET column (reads
  // by value and ranges of an enum-like attribute, which the value record
  // cache refuses). Smallest first; such a build is kept only while the
  // cache has room for it (it evicts nothing: columns that queries earn
  // later evict the unused ones as usual).
  void QueueImportBuilds(const Statistics& stats);
  // Waits until the builds QueueImportBuilds queued are done (the store
  // closing: their images are what the next opening's first queries
  // read). Returns at once after Stop.
  void WaitImportBuilds();

  // Transactor, after a group commit at `tx` is written and before it is
  // published: the group's datoms, in the order they were applied.
  void Commit(EntityId tx, const std::vector<const Datom*>& datoms);
  // Transactor: a bulk import at `tx` may have written anything: drops
  // every column, and refuses builds read before `tx`.
  void TouchAll(EntityId tx);

  // The column thread's side. A job builds or folds one column.
  enum class JobKind { kBuild, kFold, kVerify };
  struct Job {
    JobKind kind;
    IndexOrder order;
    EntityId attribute;
    uint64_t generation = 0;  // of the slot when the job began
    bool import = false;      // queued by QueueImportBuilds
  };
  // Waits for the next job; false once Stop was called.
  bool NextJob(Job* job);
  // Build: starts logging the attribute's commits; the caller then reads
  // the base from a snapshot taken after this call. False: drop the job.
  bool BeginBuild(Job* job);
  // Build: the base as of `base_at` (the snapshot's basis), or null if it
  // could not be read (`too_big`: and never will be). Ends the job. True
  // if the column was kept.
  bool FinishBuild(const Job& job, std::shared_ptr<KeyRun> base,
                   EntityId base_at, bool too_big);
  // Fold: the version to fold, with commits logged from now on; null:
  // drop the job.
  std::shared_ptr<const AttributeColumn> BeginFold(Job* job);
  // Fold: `base` is the folded version's base and delta merged (null on
  // failure). Installs it under the newest version's changes since. Ends
  // the job.
  void FinishFold(const Job& job, std::shared_ptr<KeyRun> base);
  // Verify (a column installed from an image): its base, to be checked
  // against `*checksum`; null: drop the job.
  std::shared_ptr<const KeyRun> BeginVerify(const Job& job, uint32_t* checksum);
  // Verify: whether the base matched. A match gives readers the column; a
  // mismatch drops it (its image is then forgotten: the caller removes
  // the file) and queues its build. Ends the job.
  void FinishVerify(const Job& job, bool intact);
  // Wakes NextJob with false; later jobs are dropped.
  void Stop();
  // Waits until no job is queued or running, and every refusal of the
  // jobs that ran was reported (tests and benchmarks).
  void WaitIdle();

  // Images (internal/column_image.h). The store opening, before any
  // commit: keeps `column`, read from an image as of `image_as_of`, and
  // queues the check of its base against `checksum`. Until the check
  // passes, readers are not given the column (Find gives null) and it is
  // neither folded nor imaged again, though commits keep it current.
  void Install(std::shared_ptr<const AttributeColumn> column,
               EntityId image_as_of, uint32_t checksum);
  // The column thread: the column's image on disk is as of `as_of`.
  void SetImage(IndexOrder order, EntityId attribute, EntityId as_of);
  // The newest version of every column whose image is older (the store
  // closing writes them).
  std::vector<std::shared_ptr<const AttributeColumn>> StaleImages() const;
  // The columns held with an image that no commit since changed (the
  // store closing moves their images' basis forward), with that basis.
  struct CurrentImage {
    IndexOrder order;
    EntityId attribute;
    EntityId as_of;
  };
  std::vector<CurrentImage> CurrentImages() const;

  // hits: seeks answered from a column; misses: columns built; bytes and
  // entries: the newest versions; folds: deltas folded; refused: columns
  // over max_column_bytes().
  CacheCounters counters() const;

  // Columns refused for their size since the last call, each once, for
  // the column thread to report (they are otherwise only slow queries).
  struct Refusal {
    IndexOrder order;
    EntityId attribute;
  };
  std::vector<Refusal> TakeRefusals();
  // The column thread, once it has reported what TakeRefusals returned.
  void RefusalsReported();

 private:
  struct Slot {
    std::vector<std::shared_ptr<const AttributeColumn>> versions;  // oldest
    uint64_t scanned = 0;     // keys read from RocksDB towards a build
    uint64_t used = 0;        // the cache's tick at the last Find
    size_t charge = 0;        // of the newest version, counted in bytes_
    uint64_t generation = 0;  // bumped whenever its versions are dropped
    bool queued = false;      // a job is queued or running
    bool logging = false;     // its commits go to `log` for the job
    bool too_big = false;
    EntityId image_as_of = 0;  // of its image on disk; 0: none
    // Installed from an image whose arrays are not checked yet.
    bool verifying = false;
    uint32_t image_checksum = 0;  // what the check expects
    // The check is running (on the column thread or a reader's): other
    // readers wait for it instead of checking the same bytes again.
    bool checking = false;
    // A reader's check found a mismatch: readers go to RocksDB until the
    // column thread's check removes the image and rebuilds the column.
    bool check_failed = false;
    // Commits during a build or fold: (group tx, its changes).
    std::vector<std::pair<EntityId, std::shared_ptr<const KeyRun>>> log;
  };
  static uint64_t SlotKey(IndexOrder order, EntityId attribute) {
    return (static_cast<uint64_t>(attribute) << 2) |
           static_cast<uint64_t>(order == IndexOrder::kAvet);
  }
  void QueueLocked(Slot& slot, JobKind kind, IndexOrder order,
                   EntityId attribute, bool import = false)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Ends `job`: EndJobLocked, and counts down an import build.
  void EndLocked(Slot& slot, const Job& job) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Makes `column` the slot's newest version (replacing the newest when
  // `replace`), and charges it.
  void PushLocked(Slot& slot, std::shared_ptr<const AttributeColumn> column,
                  bool replace) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Drops every version of the slot.
  void DropLocked(Slot& slot) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Marks the column too big (never tried again), counted and queued for
  // TakeRefusals the first time.
  void RefuseLocked(Slot& slot, IndexOrder order, EntityId attribute)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void EndJobLocked(Slot& slot) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void EvictLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool FoldDueLocked(const AttributeColumn& column) const;
  // The slot's logged changes after `after`, as a delta.
  static ColumnDelta ReplayLog(const Slot& slot, EntityId after,
                               bool with_entities);

  const ColumnCacheOptions options_;
  mutable absl::Mutex mu_;
  absl::CondVar jobs_cv_;  // a job queued, or stopping
  absl::CondVar idle_cv_;  // a job ended
  absl::flat_hash_map<uint64_t, Slot> slots_ ABSL_GUARDED_BY(mu_);
  std::deque<Job> jobs_ ABSL_GUARDED_BY(mu_);
  int running_ ABSL_GUARDED_BY(mu_) = 0;
  int import_builds_ ABSL_GUARDED_BY(mu_) = 0;  // queued or running
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  EntityId floor_ ABSL_GUARDED_BY(mu_) = 0;  // the last TouchAll
  size_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t tick_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t builds_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t folds_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t refused_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<Refusal> refusals_ ABSL_GUARDED_BY(mu_);
  // TakeRefusals returned some that are not reported yet.
  bool reporting_ ABSL_GUARDED_BY(mu_) = false;
  std::atomic<uint64_t> hits_{0};
};

}  // namespace mentat::storage::internal

#endif  // MENTAT_STORAGE_INTERNAL_COLUMN_CACHE_H_
