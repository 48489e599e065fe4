#ifndef MENTAT_STORAGE_INTERNAL_SINCE_INDEX_H_
#define MENTAT_STORAGE_INTERNAL_SINCE_INDEX_H_

#include <array>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "mentat/storage/datom_cursor.h"
#include "mentat/storage/db.h"

namespace mentat::storage::internal {

// The datoms of since(t): current at the basis and asserted after t. Built
// from the `log` entries of the transactions in (t, basis], so it costs
// what it holds rather than a scan of the current indexes. Each index
// order is sorted on its first use (a query reads one or two of them).
// Thread-safe; cursors over it may run on any thread.
class SinceIndex {
 public:
  // Builds the index, or returns nullptr when the log range holds more
  // than `limit` datoms (the caller then filters the current indexes).
  static absl::StatusOr<std::shared_ptr<const SinceIndex>> Build(const Db& db,
                                                                 EntityId t,
                                                                 size_t limit);

  std::unique_ptr<DatomCursor> NewCursor(IndexOrder order) const;

  // Datoms held.
  size_t size() const { return live_.size(); }

  struct Entry {
    std::string key;
    Datom datom;
  };

 private:
  std::vector<Datom> live_;
  std::shared_ptr<const Schema> schema_;
  mutable std::array<std::once_flag, 4> sorted_;
  mutable std::array<std::vector<Entry>, 4> by_order_;
};

// The since() indexes built last, shared by the queries of every view at
// the same basis and t (a dashboard polling since(t) builds it once per
// commit, not once per query). Holds at most four, and at most `limit`
// datoms in all. Thread-safe.
class SinceCache {
 public:
  explicit SinceCache(size_t limit) : limit_(limit) {}
  std::shared_ptr<const SinceIndex> Find(EntityId basis, EntityId t);
  void Insert(EntityId basis, EntityId t,
              std::shared_ptr<const SinceIndex> index);

 private:
  struct Slot {
    EntityId basis;
    EntityId t;
    std::shared_ptr<const SinceIndex> index;
  };
  const size_t limit_;
  std::mutex mu_;
  std::vector<Slot> slots_;  // oldest first
};

}  // namespace mentat::storage::internal

#endif  // MENTAT_STORAGE_INTERNAL_SINCE_INDEX_H_
