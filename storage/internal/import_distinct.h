#ifndef MENTAT_STORAGE_INTERNAL_IMPORT_DISTINCT_H_
#define MENTAT_STORAGE_INTERNAL_IMPORT_DISTINCT_H_

#include <cstdint>
#include <memory>
#include <string_view>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "internal/imported_groups.h"
#include "internal/store_core.h"
#include "mentat/storage/datom.h"
#include "rocksdb/db.h"

namespace mentat::storage::internal {

// How one chunk of a bulk import changes the number of distinct current
// values of the attributes whose values are not tracked (the statistics'
// `distinct_values`), counted from the chunk's sorted AVET writes while
// they are written out, instead of by the transactor with one AVET scan
// per new (attribute, value) as an ordinary commit does. A group (a, v)
// counts +1 if the DB held no key of it before the chunk and holds one
// after, -1 the other way round. The filter of ImportedGroups says for
// most groups that the DB holds nothing, and its summary answers for the
// groups earlier chunks created (values repeated across chunks); the
// others are read from the DB (one seek each, more only for groups the
// chunk deletes keys of).
//
// The result is exact as long as the DB is the state before the chunk
// (the chunks before it ingested, this one not yet) and the attributes
// are the same for the whole chunk. Used by one thread (the chunk's
// writer); `core`, `groups` and `attributes` must outlive it and not
// change while it runs.
class ImportDistinct {
 public:
  ImportDistinct(const StoreCore* core, const ImportedGroups* groups,
                 const absl::flat_hash_set<EntityId>* attributes);

  // The chunk's writes of one AVET group `group` (a, v): its keys in key
  // order, each with its latest write (ImportIndex::kDeleted: removed).
  // Groups of other attributes are ignored. Errors: Unavailable (reading
  // the DB).
  [[nodiscard]] absl::Status Group(
      std::string_view group,
      const std::pair<std::string_view, EntityId>* writes, size_t n);

  // The change per attribute (attributes without a change may be absent).
  absl::flat_hash_map<EntityId, int64_t> TakeDeltas() {
    return std::move(deltas_);
  }

 private:
  const StoreCore* core_;
  const ImportedGroups* groups_;
  const absl::flat_hash_set<EntityId>* attributes_;
  std::unique_ptr<rocksdb::Iterator> it_;
  absl::flat_hash_map<EntityId, int64_t> deltas_;
};

}  // namespace mentat::storage::internal

#endif  // MENTAT_STORAGE_INTERNAL_IMPORT_DISTINCT_H_
