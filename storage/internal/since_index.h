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

// The datoms of since(t) at one basis: current at the basis and asserted
// after t. Built from the `log` entries of the transactions in
// (t, basis], so it costs what it holds rather than a scan of the current
// indexes; and the index of a later basis extends this one with the log
// after its basis (Extend), so that under a steady writer each new basis
// costs its own commits and a copy, not the whole range again.
//
// It holds the datoms as EAVT keys with their asserting tx (KeyRun); each
// other order is sorted on its first use (a query reads one or two of
// them), and an extension carries forward every order already sorted.
// Immutable once built (the sorted orders are filled once, under
// call_once); thread-safe, and cursors over it may run on any thread.
class SinceIndex {
 public:
  // Builds the index of since(t) at the Db's basis, or returns nullptr
  // when the log range holds more than `limit` datoms (the caller then
  // filters the current indexes). Unavailable or DataLoss on a bad read.
  [[nodiscard]] static absl::StatusOr<std::shared_ptr<const SinceIndex>> Build(
      const Db& db, EntityId t, size_t limit);
  // The index of since(prev.t()) at the Db's basis (newer than
  // prev.basis()): `prev` plus the log after its basis, without what that
  // log retracted. nullptr past `limit`, as Build.
  [[nodiscard]] static absl::StatusOr<std::shared_ptr<const SinceIndex>> Extend(
      const SinceIndex& prev, const Db& db, size_t limit);

  std::unique_ptr<DatomCursor> NewCursor(IndexOrder order) const;

  EntityId t() const { return t_; }
  EntityId basis() const { return basis_; }
  // Datoms held.
  size_t size() const { return eavt_.size(); }

 private:
  // The keys of `order` (sorted once; EAVT is eavt_).
  const KeyRun& Sorted(IndexOrder order) const;
  // The datoms of the log in (after, upto] as EAVT changes (tx 0: the
  // key was retracted); false past `limit` datoms in all (*seen counts).
  [[nodiscard]] static absl::Status ReadLog(const Db& db, EntityId after,
                                            size_t limit, size_t* seen,
                                            bool* over, KeyRun* changes);

  EntityId t_ = 0;
  EntityId basis_ = 0;
  size_t seen_ = 0;  // log datoms read to make it, since t
  std::shared_ptr<const Schema> schema_;
  KeyRun eavt_;
  mutable std::array<std::once_flag, 4> sorted_once_;
  mutable std::array<std::atomic<bool>, 4> sorted_ready_{};
  mutable std::array<KeyRun, 4> sorted_;
};

// The since() indexes built last: the newest per t, shared by the queries
// of every view at its basis (a dashboard polling since(t) under a writer
// extends it by the commits of each new basis, instead of building it for
// each). Holds at most four t's, and at most `limit` datoms in all.
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
