#ifndef MENTAT_STORAGE_INTERNAL_SINCE_INDEX_H_
#define MENTAT_STORAGE_INTERNAL_SINCE_INDEX_H_

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "internal/key_run.h"
#include "mentat/storage/datom_cursor.h"
#include "mentat/storage/db.h"

namespace mentat::storage::internal {

// One immutable sorted run of a since() index: its EAVT keys with their
// asserting tx (0: the key was retracted, in a layer above the base), and
// each other order sorted on its first use (a query reads one or two of
// them). Shared by the indexes of every later basis that still holds it.
// Thread-safe once built.
class SinceLayer {
 public:
  SinceLayer(std::shared_ptr<const Schema> schema, KeyRun eavt)
      : schema_(std::move(schema)), eavt_(std::move(eavt)) {}

  // The keys of `order` (sorted once, under call_once).
  const KeyRun& Sorted(IndexOrder order) const;
  // True if `order` was sorted already (a query read it).
  bool ready(IndexOrder order) const;
  size_t size() const { return eavt_.size(); }

  // `older` with `newer`'s keys applied, in EAVT and in every order either
  // has sorted. With `keep_removed` the retractions stay as entries with
  // tx 0 (the result is a layer above a base), without they are dropped
  // (the result is a base).
  static std::shared_ptr<const SinceLayer> Merge(const SinceLayer& older,
                                                 const SinceLayer& newer,
                                                 bool keep_removed);

 private:
  std::shared_ptr<const Schema> schema_;
  KeyRun eavt_;
  mutable std::array<std::once_flag, 4> sorted_once_;
  mutable std::array<std::atomic<bool>, 4> sorted_ready_{};
  mutable std::array<KeyRun, 4> sorted_;
};

// How a SinceIndex reads the log and when its deltas merge and fold
// (tests make them small).
struct SinceShape {
  // Past this many deltas, the two newest merge whatever their sizes.
  // Every query reads through all the layers, and most queries under a
  // writer read an index another query extended already: few layers,
  // each copied a little more often, cost less than many.
  size_t max_deltas = 2;
  // The deltas fold into the base once they hold more than 1/this of it.
  size_t fold_divisor = 32;
  // ... and more than this many datoms (a small base would otherwise be
  // copied every few commits). At 4,096 the deltas of a fresh s store's
  // since(t_since) (a base of about 5K keys) were as big as the base, and
  // query-bench's since under a writer took 30% longer than at 512.
  size_t min_fold = 512;
  // The log's changes are sorted and merged this many (or, past it, as
  // many as the index holds) at a time.
  size_t log_chunk = 1 << 16;
};

// The datoms of since(t) at one basis: current at the basis and asserted
// after t. Built from the `log` entries of the transactions in
// (t, basis], so it costs what it holds rather than a scan of the current
// indexes.
//
// Layered, so that under a steady writer each new basis costs its own
// commits and not the whole range again: a base (no retractions) and a
// few deltas of later commits (oldest first, each a SinceLayer whose tx-0
// entries hide keys below), read through a merging cursor. The index of
// a later basis (Extend) shares every layer of the one it extends and
// adds one delta of the log after its basis; it then merges the newest
// deltas while the older is at most twice the newer (a binary counter: a
// key is copied O(log n) times, and the deltas stay few), and folds them
// all into a new base once they hold more than a fraction of the base's
// datoms (SinceShape). Every order a query sorted in the base is merged in
// each fold, so the next query of the same shape finds it ready.
//
// An index may instead be a marker that since(t) is past the limit
// (over()): it has no layers, and views filter the current indexes.
// Immutable once built; thread-safe, and cursors over it may run on any
// thread (they read the layers, which the index keeps alive).
class SinceIndex {
 public:
  // A build or an extension reads at most this many times its limit in
  // log datoms: past that the log is mostly churn, and reading it would
  // cost more than filtering.
  static constexpr size_t kLogReadFactor = 8;

  // Builds the index of since(t) at the Db's basis, or the over() marker
  // when it would hold more than `limit` datoms, or the log range holds
  // more than kLogReadFactor * `limit`. Unavailable or DataLoss on a bad
  // read.
  [[nodiscard]] static absl::StatusOr<std::shared_ptr<const SinceIndex>> Build(
      const Db& db, EntityId t, size_t limit,
      const SinceShape& shape = SinceShape());
  // The index of since(prev.t()) at the Db's basis (newer than
  // prev.basis()): `prev`'s layers plus the log after its basis. The
  // over() marker when it would hold more than `limit` datoms (its layers
  // counted whole), when the log after prev's basis is over the read
  // bound, or when `prev` is the marker: since(t) grows with the basis,
  // save what later commits retract, and reading the log again for each
  // basis to learn that would cost more than the filter.
  [[nodiscard]] static absl::StatusOr<std::shared_ptr<const SinceIndex>> Extend(
      const SinceIndex& prev, const Db& db, size_t limit,
      const SinceShape& shape = SinceShape());

  // A cursor over the merged layers. Not for an over() marker.
  std::unique_ptr<DatomCursor> NewCursor(IndexOrder order) const;

  EntityId t() const { return t_; }
  EntityId basis() const { return basis_; }
  bool over() const { return base_ == nullptr; }
  // Datoms held in all layers (retractions in deltas included, and a key
  // replaced in a later layer counted twice): what the limit and the
  // cache's budget count.
  size_t size() const { return size_; }
  // Layers held (the base and the deltas), for tests.
  size_t layers() const { return over() ? 0 : 1 + deltas_.size(); }

 private:
  // Reads the log in (after, db's basis] into *out as EAVT keys (tx 0:
  // the key was retracted, kept with `keep_removed`, else dropped); *over
  // once *out holds more than `max_held` keys or more than `max_read` log
  // datoms were read.
  [[nodiscard]] static absl::Status ReadLog(const Db& db, EntityId after,
                                            bool keep_removed, size_t max_held,
                                            size_t max_read, size_t chunk,
                                            bool* over, KeyRun* out);

  EntityId t_ = 0;
  EntityId basis_ = 0;
  size_t size_ = 0;
  std::shared_ptr<const Schema> schema_;
  std::shared_ptr<const SinceLayer> base_;  // null: over the limit
  std::vector<std::shared_ptr<const SinceLayer>> deltas_;  // oldest first
};

// The since() indexes built last: the newest per t, shared by the queries
// of every view at its basis (a dashboard polling since(t) under a writer
// extends it by the commits of each new basis, instead of building it for
// each). Holds at most four t's, and at most `limit` datoms in all. An
// over() marker is kept like an index, so that views of later bases go
// straight to the filter instead of reading the log again.
// Thread-safe.
class SinceCache {
 public:
  explicit SinceCache(size_t limit) : limit_(limit) {}
  // The index of (t, basis), or the newest index of t at a basis before
  // `basis` (to extend), or null.
  std::shared_ptr<const SinceIndex> Find(EntityId basis, EntityId t);
  // Keeps `index` unless one of the same t at a newer basis is kept, or
  // its basis is before the floor Clear set.
  void Insert(std::shared_ptr<const SinceIndex> index);
  // Drops every index, and refuses those of a basis before `floor` from
  // now on (an excision at `floor` removed datoms they may hold).
  void Clear(EntityId floor);

 private:
  const size_t limit_;
  absl::Mutex mu_;
  EntityId floor_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::shared_ptr<const SinceIndex>> slots_
      ABSL_GUARDED_BY(mu_);  // least recently used first
};

}  // namespace mentat::storage::internal

#endif  // MENTAT_STORAGE_INTERNAL_SINCE_INDEX_H_
