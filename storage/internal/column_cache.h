#ifndef MENTAT_STORAGE_INTERNAL_COLUMN_CACHE_H_
#define MENTAT_STORAGE_INTERNAL_COLUMN_CACHE_H_

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "mentat/storage/cache_counters.h"
#include "mentat/storage/datom.h"
#include "mentat/storage/keys.h"

namespace mentat::storage::internal {

// Every current key of one attribute in one index order (AEVT or AVET), in
// key order, as read from one snapshot: a scan of the attribute becomes a
// walk over an array instead of RocksDB's merging iterator (about 10x
// fewer instructions per key).
struct AttributeColumn {
  IndexOrder order = IndexOrder::kAevt;
  EntityId attribute = 0;
  // The basis of the snapshot it was read from; it answers reads at that
  // basis or later, as long as no commit touched the attribute since.
  EntityId read_at = 0;
  std::string keys;            // the keys, back to back
  std::vector<uint32_t> ends;  // ends[i]: where key i ends in `keys`
  std::vector<EntityId> txs;   // the asserting tx of key i
  // AEVT only: the entity of key i (its bytes 8-16, as an unsigned
  // number), so that seeks by entity search a dense array of integers.
  std::vector<uint64_t> entities;

  size_t size() const { return ends.size(); }
  std::string_view key(size_t i) const {
    const uint32_t begin = i == 0 ? 0 : ends[i - 1];
    return std::string_view(keys.data() + begin, ends[i] - begin);
  }
  // Memory charged against the cache's capacity.
  size_t charge() const {
    return sizeof(AttributeColumn) + keys.capacity() +
           ends.capacity() * sizeof(uint32_t) +
           txs.capacity() * sizeof(EntityId) +
           entities.capacity() * sizeof(uint64_t);
  }
};

// The first index in [lo, hi) whose element is not below the target
// (`below(i)`), for elements in order. Joins look up keys in order, and a
// range seek lands next to the one before it, so the search first gallops
// from `near` (the last answer), forward or back: a target near it costs a
// few comparisons instead of a binary search's twenty cache lines.
template <typename Below>
size_t GallopLowerBound(size_t near, size_t lo, size_t hi, Below below) {
  if (near >= lo && near < hi) {
    size_t step = 1;
    if (below(near)) {
      lo = near + 1;
      while (lo + step < hi && below(lo + step)) {
        lo += step + 1;
        step *= 2;
      }
      hi = std::min(hi, lo + step + 1);
    } else {
      hi = near;  // the answer is at most near
      while (hi - lo > step) {
        if (below(hi - step)) {
          lo = hi - step + 1;
          break;
        }
        hi -= step;
        step *= 2;
      }
    }
  }
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (below(mid)) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

// The AttributeColumns of a store, for attributes that are read in bulk
// (aggregates over an attribute, range scans, joins over most of its
// entities): an attribute gets a column once readers have stepped over
// `build_after_rows` of its keys in RocksDB since its last change, and no
// commit wrote it in the last `quiet_time` (under a steady writer a column
// would be dropped again before it paid for itself).
//
// Columns never go stale: the transactor calls Touch for every attribute a
// commit writes before it publishes the commit, which drops the
// attribute's columns and refuses columns read before it (Insert). Least
// recently used columns go first once the charges pass the capacity; a
// column bigger than half the capacity is not kept, and not tried again
// while the store is open (attributes rarely shrink, and each try reads
// half of one).
//
// Thread-safe (one mutex; it is taken once per seek of a new attribute,
// not per key).
class ColumnCache {
 public:
  ColumnCache(size_t capacity_bytes, uint64_t build_after_rows,
              std::chrono::milliseconds quiet_time);

  // The column of (order, attribute) that answers a read at basis `t`, or
  // null.
  std::shared_ptr<const AttributeColumn> Find(IndexOrder order,
                                              EntityId attribute, EntityId t);
  // True when the caller should build the column of (order, attribute)
  // now; it then owns the build and must call Insert or Abandon.
  bool ClaimBuild(IndexOrder order, EntityId attribute);
  // Keeps `column` unless a commit touched its attribute after read_at.
  // Ends the build claim.
  void Insert(std::shared_ptr<const AttributeColumn> column);
  // Ends a build claim without a column. With `too_big`, the attribute is
  // not tried again.
  void Abandon(IndexOrder order, EntityId attribute, bool too_big);
  // Readers: `rows` keys of the attribute were read from RocksDB.
  void CountScanned(IndexOrder order, EntityId attribute, uint64_t rows);
  // Readers report keys read from RocksDB in lots of at least this many:
  // stray keys of point reads do not count towards a column.
  uint64_t min_report_rows() const {
    return std::min<uint64_t>(256, build_after_rows_);
  }
  // Most bytes one column may take.
  size_t max_column_bytes() const { return capacity_ / 2; }

  // Transactor: a commit at `tx` writes `attributes`.
  void Touch(const absl::flat_hash_set<EntityId>& attributes, EntityId tx);
  // Transactor: a commit at `tx` may have written anything (bulk import).
  void TouchAll(EntityId tx);

  // hits: seeks answered from a column; misses: columns built.
  CacheCounters counters() const;

 private:
  using Clock = std::chrono::steady_clock;
  struct Slot {
    std::shared_ptr<const AttributeColumn> column;
    uint64_t scanned = 0;  // keys read from RocksDB since the last Touch
    uint64_t used = 0;     // the cache's tick at the last Find
    bool building = false;
    bool too_big = false;
  };
  struct AttributeState {
    EntityId touched = 0;  // the last commit that wrote it
    Clock::time_point touched_at{};
  };
  static uint64_t SlotKey(IndexOrder order, EntityId attribute) {
    return (static_cast<uint64_t>(attribute) << 2) |
           static_cast<uint64_t>(order == IndexOrder::kAvet);
  }
  EntityId TouchedLocked(EntityId attribute) const;
  void DropLocked(Slot& slot);
  // A commit changed the slot's attribute: drops the column and the keys
  // counted towards one.
  void ForgetLocked(Slot& slot);
  void EvictLocked();

  const size_t capacity_;
  const uint64_t build_after_rows_;
  const std::chrono::milliseconds quiet_time_;
  mutable std::mutex mu_;
  absl::flat_hash_map<uint64_t, Slot> slots_;
  absl::flat_hash_map<EntityId, AttributeState> attributes_;
  EntityId touched_all_ = 0;
  Clock::time_point touched_all_at_{};
  size_t bytes_ = 0;
  uint64_t tick_ = 0;
  uint64_t builds_ = 0;
  std::atomic<uint64_t> hits_{0};
};

}  // namespace mentat::storage::internal

#endif  // MENTAT_STORAGE_INTERNAL_COLUMN_CACHE_H_
