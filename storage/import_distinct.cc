#include "internal/import_distinct.h"

#include <algorithm>
#include <string>

#include "internal/coding.h"
#include "internal/import_index.h"
#include "mentat/base/str_cat.h"

namespace mentat::storage::internal {

ImportDistinct::ImportDistinct(const StoreCore* core,
                               const ImportedGroups* groups,
                               const absl::flat_hash_set<EntityId>* attributes)
    : core_(core), groups_(groups), attributes_(attributes) {}

absl::Status ImportDistinct::Group(
    std::string_view group, const std::pair<std::string_view, EntityId>* writes,
    size_t n) {
  if (group.size() < 8 || n == 0) return absl::OkStatus();
  const EntityId a = static_cast<EntityId>(DecodeFixed64BE(group.substr(0, 8)));
  if (!attributes_->contains(a)) return absl::OkStatus();
  const bool puts = std::any_of(writes, writes + n, [](const auto& w) {
    return w.second != ImportIndex::kDeleted;
  });
  bool before = false;
  bool after = puts;
  bool known = false;
  if (groups_->on()) {
    const uint64_t hash = ImportIndex::GroupHash(group);
    // Most groups of an import are new to the DB: the filter knows it
    // without a read. A group the import wrote first is in the summary,
    // which knows whether the DB holds a key of it; without it every
    // chunk sought each repeated value (an assignee, a label) through all
    // the earlier chunks' L0 files, 39% of the server's CPU in the second
    // half of the 100M-datom import.
    if (!groups_->MayHold(hash)) {
      known = true;
    } else if (const ImportedGroups::Summary* summary =
                   groups_->Find(group, hash)) {
      before = summary->has_first;
      if (!before || after) {
        known = true;
      } else {
        // Only deletions: the first key survives unless deleted; others
        // may follow it only if the summary says so.
        std::string first(group);
        PutFixed64BE(summary->first_e, &first);
        const bool first_deleted =
            std::any_of(writes, writes + n,
                        [&](const auto& w) { return w.first == first; });
        if (!first_deleted) {
          after = true;
          known = true;
        } else if (!summary->more) {
          known = true;
        }
      }
    }
  }
  if (!known) {
    if (!it_) {
      it_.reset(core_->db->NewIterator(TotalOrderReadOptions(),
                                       core_->cf(Cf::kAvet)));
    }
    size_t w = 0;  // the chunk's writes are in key order, as the DB's keys
    for (it_->Seek(rocksdb::Slice(group.data(), group.size())); it_->Valid();
         it_->Next()) {
      const std::string_view key(it_->key().data(), it_->key().size());
      // A longer value can share the group's bytes as a prefix: the key
      // must be of this very group.
      if (!key.starts_with(group) ||
          ImportIndex::GroupLength(IndexOrder::kAvet, key) != group.size()) {
        break;
      }
      before = true;
      if (after) break;
      // Only deletions in the chunk: does a DB key survive them?
      while (w < n && writes[w].first < key) ++w;
      if (w == n || writes[w].first != key) {
        after = true;
        break;
      }
    }
    if (!it_->status().ok()) {
      return absl::UnavailableError(StrCat("counting distinct values in AVET: ",
                                           it_->status().ToString()));
    }
  }
  const int64_t change = (after ? 1 : 0) - (before ? 1 : 0);
  if (change != 0) deltas_[a] += change;
  return absl::OkStatus();
}

}  // namespace mentat::storage::internal
