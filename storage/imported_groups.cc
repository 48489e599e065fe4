#include "internal/imported_groups.h"

#include <functional>
#include <memory>

#include "internal/coding.h"
#include "internal/import_index.h"
#include "mentat/base/str_cat.h"

namespace mentat::storage::internal {
namespace {

// At most this many of the DB's keys are loaded into the filter at the
// import's start; a larger store imports without the filter.
constexpr size_t kMaxFilterPreload = 1 << 20;

uint64_t SummaryCheck(std::string_view group) {
  return std::hash<std::string_view>{}(group);
}

}  // namespace

ImportedGroups::ImportedGroups(size_t filter_bytes, size_t summary_groups)
    : summary_limit_(summary_groups) {
  // Whole 512-bit blocks, a power of two of them.
  size_t words = 8;
  while (words * 2 * 8 <= filter_bytes) words *= 2;
  if (filter_bytes < 64) {
    state_ = State::kOff;
  } else {
    filter_.assign(words, 0);
  }
}

void ImportedGroups::Add(uint64_t hash) {
  const size_t blocks = filter_.size() / 8;
  uint64_t* block = &filter_[((hash >> 40) & (blocks - 1)) * 8];
  for (int i = 0; i < 4; ++i) {
    const uint64_t bit = (hash >> (9 * i)) & 511;
    block[bit >> 6] |= uint64_t{1} << (bit & 63);
  }
}

bool ImportedGroups::MayHold(uint64_t hash) const {
  const size_t blocks = filter_.size() / 8;
  const uint64_t* block = &filter_[((hash >> 40) & (blocks - 1)) * 8];
  for (int i = 0; i < 4; ++i) {
    const uint64_t bit = (hash >> (9 * i)) & 511;
    if ((block[bit >> 6] & (uint64_t{1} << (bit & 63))) == 0) return false;
  }
  return true;
}

absl::Status ImportedGroups::Load(const StoreCore* core) {
  std::unique_ptr<rocksdb::Iterator> it(
      core->db->NewIterator(TotalOrderReadOptions(), core->cf(Cf::kAvet)));
  std::vector<uint64_t> hashes;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    if (hashes.size() == kMaxFilterPreload) {
      state_ = State::kOff;
      filter_ = {};
      return absl::OkStatus();
    }
    const std::string_view key(it->key().data(), it->key().size());
    hashes.push_back(ImportIndex::GroupHash(
        key.substr(0, ImportIndex::GroupLength(IndexOrder::kAvet, key))));
  }
  if (!it->status().ok()) {
    return absl::UnavailableError(StrCat(
        "reading avet for the import's filter: ", it->status().ToString()));
  }
  for (uint64_t h : hashes) Add(h);
  state_ = State::kOn;
  return absl::OkStatus();
}

const ImportedGroups::Summary* ImportedGroups::Find(std::string_view group,
                                                    uint64_t hash) const {
  auto it = summary_.find(hash);
  if (it == summary_.end() || it->second.check != SummaryCheck(group)) {
    return nullptr;
  }
  return &it->second;
}

ImportedGroups::Change ImportedGroups::Summarize(
    std::string_view group, const std::pair<std::string_view, EntityId>* writes,
    size_t n, Summary* out) const {
  const uint64_t check = SummaryCheck(group);
  auto it = summary_.find(ImportIndex::GroupHash(group));
  Summary summary;
  if (it != summary_.end()) {
    // Two groups of one hash: both go unsummarized from now on (the filter
    // holds both, so neither is summarized again).
    if (it->second.check != check) return Change::kErase;
    summary = it->second;
  } else if (MayHold(ImportIndex::GroupHash(group))) {
    // The DB may hold keys of the group that the summary would not know.
    return Change::kNone;
  }
  summary.check = check;
  // Keys of one group differ only in their last 8 bytes, the entity, so
  // the entity orders them.
  for (size_t i = 0; i < n; ++i) {
    const std::string_view key = writes[i].first;
    const uint64_t e = DecodeFixed64BE(key.substr(key.size() - 8));
    if (writes[i].second == ImportIndex::kDeleted) {
      if (summary.has_first && e == summary.first_e) {
        // What comes after the first key is unknown.
        if (summary.more) return Change::kErase;
        summary.has_first = false;
      }
      continue;
    }
    if (!summary.has_first) {
      summary.has_first = true;
      summary.first_e = e;
      summary.first_tx = writes[i].second;
    } else if (e == summary.first_e) {
      summary.first_tx = writes[i].second;
    } else {
      summary.more = true;
      if (e < summary.first_e) {
        summary.first_e = e;
        summary.first_tx = writes[i].second;
      }
    }
  }
  *out = summary;
  return Change::kSet;
}

void ImportedGroups::Apply(const ChangeAt& change) {
  if (change.change == Change::kErase) {
    summary_.erase(change.hash);
  } else if (summary_.size() < summary_limit_ ||
             summary_.contains(change.hash)) {
    summary_[change.hash] = change.summary;
  }
}

}  // namespace mentat::storage::internal
