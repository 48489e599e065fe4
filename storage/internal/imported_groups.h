#ifndef MENTAT_STORAGE_INTERNAL_IMPORTED_GROUPS_H_
#define MENTAT_STORAGE_INTERNAL_IMPORTED_GROUPS_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "internal/store_core.h"
#include "mentat/storage/datom.h"

namespace mentat::storage::internal {

// What a bulk import knows of the AVET groups (a, v) the DB holds, so
// that most of its scans of one group never reach RocksDB (each chunk's
// AVET file sits in L0 without a filter, and every check would otherwise
// seek through all of them):
//   - a filter of the groups the DB may hold: a blocked bloom filter
//     (512-bit blocks), loaded from the DB at the import's start if the
//     DB is small (an import into an empty store), else off for good;
//   - a summary of the groups the import's chunks wrote that the DB held
//     nothing else of: the first key's entity and tx, and whether more
//     keys may follow (enough for most scans, which count up to one or
//     look up a unique value).
// Groups are named by ImportIndex::GroupHash of their bytes.
//
// Owned by an ImportBatch. Load, Add and Apply on the transactor thread;
// the const functions may run on the ingesting thread while the
// transactor reads (nothing changes the filter or the summary then).
class ImportedGroups {
 public:
  // `filter_bytes` sizes the filter (below 64: no filter, and then no
  // summary); `summary_groups` caps the summary (0: none).
  ImportedGroups(size_t filter_bytes, size_t summary_groups);

  // The filter is neither loaded nor off yet.
  bool unloaded() const { return state_ == State::kUnloaded; }
  // The filter is in use.
  bool on() const { return state_ == State::kOn; }
  // The summary is kept.
  bool summarizing() const { return summary_limit_ > 0; }

  // Adds the groups of the DB's AVET keys to the filter, if they are few;
  // otherwise turns the filter off. Errors: Unavailable (reading the DB).
  [[nodiscard]] absl::Status Load(const StoreCore* core);

  // Whether the DB may hold a key of the group of hash `hash` (on() only).
  bool MayHold(uint64_t hash) const;
  // Records that the DB now holds keys of the group (on() only).
  void Add(uint64_t hash);

  struct Summary {
    uint64_t check = 0;  // a second hash, to tell groups of one hash apart
    uint64_t first_e = 0;
    EntityId first_tx = 0;
    bool has_first = false;
    bool more = false;
  };
  // The summary of `group` (of hash `hash`), or null if there is none.
  const Summary* Find(std::string_view group, uint64_t hash) const;

  // What a chunk's writes to one group change in its summary.
  enum class Change { kNone, kSet, kErase };
  struct ChangeAt {
    uint64_t hash;
    Change change;
    Summary summary;  // kSet: the new summary
  };
  // The change that one group's writes in a chunk (sorted, the latest
  // write of each key, as ImportIndex::SortedKeys gives them) make to its
  // summary, against the filter and summary from before the chunk. kNone
  // for a group the DB may hold keys of that the summary would not know.
  Change Summarize(std::string_view group,
                   const std::pair<std::string_view, EntityId>* writes,
                   size_t n, Summary* out) const;
  // Applies a change Summarize made, once its chunk is in the DB.
  void Apply(const ChangeAt& change);

 private:
  enum class State { kUnloaded, kOn, kOff };
  State state_ = State::kUnloaded;
  std::vector<uint64_t> filter_;
  absl::flat_hash_map<uint64_t, Summary> summary_;
  size_t summary_limit_ = 0;
};

}  // namespace mentat::storage::internal

#endif  // MENTAT_STORAGE_INTERNAL_IMPORTED_GROUPS_H_
