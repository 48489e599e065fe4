#include "internal/import_index.h"

#include <algorithm>

#include "absl/container/inlined_vector.h"
#include "absl/hash/hash.h"
#include "internal/coding.h"
#include "mentat/storage/value.h"

namespace mentat::storage::internal {
namespace {

// The first 8 bytes of `key`, big-endian (zero-padded if shorter).
uint64_t First8(std::string_view key) {
  if (key.size() >= 8) return DecodeFixed64BE(key);
  uint64_t v = 0;
  for (size_t i = 0; i < 8; ++i) {
    v = (v << 8) | (i < key.size() ? static_cast<uint8_t>(key[i]) : 0);
  }
  return v;
}

// True if `v` is exactly one encoded value (value_codec.h); false for the
// decimal types, whose bodies this does not parse (callers then take the
// slower, general path).
bool IsOneEncodedValue(std::string_view v) {
  if (v.empty()) return false;
  switch (static_cast<ValueType>(static_cast<uint8_t>(v[0]))) {
    case ValueType::kRef:
    case ValueType::kLong:
    case ValueType::kInstant:
    case ValueType::kDouble:
      return v.size() == 9;
    case ValueType::kBoolean:
      return v.size() == 2;
    case ValueType::kUuid:
      return v.size() == 17;
    case ValueType::kKeyword:
    case ValueType::kString:
    case ValueType::kBytes:
    case ValueType::kUri:
    case ValueType::kSymbol:
    case ValueType::kTuple:
      // 0x00 0xFF is an escaped zero, 0x00 0x01 the terminator.
      for (size_t i = 1; i + 1 < v.size(); ++i) {
        if (v[i] != '\0') continue;
        if (v[i + 1] == '\x01') return i + 2 == v.size();
        if (v[i + 1] != '\xFF') return false;
        ++i;
      }
      return false;
    case ValueType::kBigInt:
    case ValueType::kBigDec:
      return false;
  }
  return false;
}

}  // namespace

size_t ImportIndex::SlotOf(IndexOrder order) {
  // AEVT is never read back, so never added (its slot would be EAVT's).
  switch (order) {
    case IndexOrder::kAvet:
      return 1;
    case IndexOrder::kVaet:
      return 2;
    default:
      return 0;
  }
}

int ImportIndex::Levels(IndexOrder order) {
  return order == IndexOrder::kEavt ? 3 : 2;
}

size_t ImportIndex::GroupLength(IndexOrder order, std::string_view key) {
  if (order == IndexOrder::kAvet) return key.size() >= 8 ? key.size() - 8 : 0;
  return std::min<size_t>(16, key.size());
}

int ImportIndex::ScanLevel(IndexOrder order, std::string_view prefix) {
  if (prefix.size() == 8) return 0;
  if (order == IndexOrder::kAvet) {
    return prefix.size() > 8 && IsOneEncodedValue(prefix.substr(8)) ? 1 : -1;
  }
  return prefix.size() == 16 ? 1 : -1;
}

uint64_t ImportIndex::ChainHash(IndexOrder order, int level,
                                std::string_view key) {
  switch (level) {
    case 0:
      return First8(key);
    case 1:
      return GroupHash(key.substr(0, GroupLength(order, key)));
    default:
      return GroupHash(key);
  }
}

uint64_t ImportIndex::GroupHash(std::string_view bytes) {
  return absl::Hash<std::string_view>{}(bytes);
}

void ImportIndex::Add(IndexOrder order, std::string_view key, EntityId tx) {
  Slot& slot = slots_[SlotOf(order)];
  slot.entries.push_back(
      Entry{key.data(), static_cast<uint32_t>(key.size()), {0, 0, 0}, tx});
}

ImportIndex::Marks ImportIndex::marks() const {
  Marks m;
  for (size_t i = 0; i < m.size(); ++i) {
    m[i] = static_cast<uint32_t>(slots_[i].entries.size());
  }
  return m;
}

size_t ImportIndex::size() const {
  size_t n = 0;
  for (const Slot& s : slots_) n += s.entries.size();
  return n;
}

namespace {

// The entity at the end of an AVET or VAET key.
uint64_t Suffix(std::string_view key) {
  return DecodeFixed64BE(key.substr(key.size() - 8));
}

}  // namespace

void ImportIndex::Link(IndexOrder order, Slot& slot, uint32_t i) {
  Entry& e = slot.entries[i];
  const std::string_view key = e.key();
  const int levels = Levels(order);
  uint64_t group_hash = 0;
  uint32_t group_count = 0;
  for (int l = 0; l < levels; ++l) {
    const uint64_t h = ChainHash(order, l, key);
    Head& head = slot.heads[l][h];
    e.next[l] = head.first;
    head.first = i + 1;
    head.count++;
    if (l == 1) {
      group_hash = h;
      group_count = head.count;
      if (slot.group_filter.empty()) {
        slot.group_filter.assign(kGroupFilterWords, 0);
      }
      slot.group_filter[GroupFilterWord(h)] |= GroupFilterMask(h);
    }
  }
  if (!HasMaps(order)) return;
  e.next[2] = 0;
  // A group with a map has had kPromoteAt entries since its map was made
  // (Unlink drops the map with the entry that made it): a smaller group
  // has none, and the lookup (a cache miss in a map of a million groups)
  // is saved.
  if (group_count < kPromoteAt) return;
  const std::string_view group = key.substr(0, GroupLength(order, key));
  auto promoted = slot.promoted.find(group_hash);
  if (promoted != slot.promoted.end()) {
    const std::string_view first = slot.entries[promoted->second.at].key();
    if (first.substr(0, GroupLength(order, first)) != group) {
      // Two groups share the hash: the chain alone serves them.
      slot.promoted.erase(promoted);
      slot.shared_hash[group_hash] = true;
      return;
    }
    auto [it, inserted] =
        promoted->second.latest.try_emplace(Suffix(key), i + 1);
    if (!inserted) {
      e.next[2] = it->second;
      it->second = i + 1;
    }
    return;
  }
  if (slot.shared_hash.contains(group_hash)) return;
  Promoted made;
  made.at = i;
  // Newest first: the first entry of an entity is its latest.
  for (uint32_t j = i + 1; j != 0; j = slot.entries[j - 1].next[1]) {
    const std::string_view other = slot.entries[j - 1].key();
    if (other.substr(0, GroupLength(order, other)) != group) {
      slot.shared_hash[group_hash] = true;
      return;
    }
    made.latest.try_emplace(Suffix(other), j);
  }
  slot.promoted.emplace(group_hash, std::move(made));
}

void ImportIndex::Unlink(IndexOrder order, Slot& slot, uint32_t i) {
  const Entry& e = slot.entries[i];
  const std::string_view key = e.key();
  if (HasMaps(order)) {
    auto promoted = slot.promoted.find(ChainHash(order, 1, key));
    if (promoted != slot.promoted.end()) {
      if (promoted->second.at == i) {
        slot.promoted.erase(promoted);
      } else if (e.next[2] == 0) {
        promoted->second.latest.erase(Suffix(key));
      } else {
        promoted->second.latest[Suffix(key)] = e.next[2];
      }
    }
  }
  for (int l = 0; l < Levels(order); ++l) {
    auto& heads = slot.heads[l];
    auto it = heads.find(ChainHash(order, l, key));
    it->second.count--;
    if (e.next[l] == 0) {
      heads.erase(it);
    } else {
      it->second.first = e.next[l];
    }
  }
}

void ImportIndex::EnsureIndexed(IndexOrder order) {
  Slot& slot = slots_[SlotOf(order)];
  for (; slot.indexed < slot.entries.size(); ++slot.indexed) {
    Link(order, slot, slot.indexed);
  }
}

void ImportIndex::Truncate(const Marks& marks) {
  static constexpr IndexOrder kOrders[] = {IndexOrder::kEavt, IndexOrder::kAvet,
                                           IndexOrder::kVaet};
  for (IndexOrder order : kOrders) {
    Slot& slot = slots_[SlotOf(order)];
    const uint32_t mark = marks[SlotOf(order)];
    // Chains run newest first, so unlinking from the newest restores
    // each head (and map) to what it was at the mark.
    while (slot.indexed > mark) Unlink(order, slot, --slot.indexed);
    if (slot.entries.size() > mark) slot.entries.resize(mark);
  }
}

std::optional<EntityId> ImportIndex::Find(IndexOrder order,
                                          std::string_view key) {
  EnsureIndexed(order);
  const Slot& slot = slots_[SlotOf(order)];
  if (HasMaps(order) && key.size() >= 16) {
    auto promoted = slot.promoted.find(ChainHash(order, 1, key));
    if (promoted != slot.promoted.end()) {
      auto it = promoted->second.latest.find(Suffix(key));
      if (it == promoted->second.latest.end()) return std::nullopt;
      const Entry& e = slot.entries[it->second - 1];
      if (e.key() != key) return std::nullopt;
      return e.tx;
    }
  }
  const int level = Levels(order) - 1;
  auto it = slot.heads[level].find(ChainHash(order, level, key));
  if (it == slot.heads[level].end()) return std::nullopt;
  for (uint32_t i = it->second.first; i != 0;
       i = slot.entries[i - 1].next[level]) {
    const Entry& e = slot.entries[i - 1];
    if (e.key() == key) return e.tx;
  }
  return std::nullopt;
}

std::string_view ImportIndex::Cursor::key() const {
  return map_ != nullptr ? (*entries_)[it_->second - 1].key()
                         : items_[pos_].first;
}

EntityId ImportIndex::Cursor::tx() const {
  return map_ != nullptr ? (*entries_)[it_->second - 1].tx
                         : items_[pos_].second;
}

void ImportIndex::Cursor::Next() {
  if (map_ == nullptr) {
    ++pos_;
    return;
  }
  ++it_;
  SkipForeign();
}

void ImportIndex::Cursor::SkipForeign() {
  while (it_ != end_ && !key().starts_with(prefix_)) ++it_;
}

void ImportIndex::Scan(IndexOrder order, std::string_view prefix,
                       Cursor* cursor) {
  cursor->items_.clear();
  cursor->pos_ = 0;
  cursor->map_ = nullptr;
  EnsureIndexed(order);
  const Slot& slot = slots_[SlotOf(order)];
  const int level = ScanLevel(order, prefix);
  // The chain's head first: most scans of an import name a group the
  // chunk does not hold (a new value), and end here.
  const bool grouped = level >= 0 || prefix.size() >= 8;
  const int l = level >= 0 ? level : 0;
  const uint64_t hash = l == 1 ? GroupHash(prefix) : First8(prefix);
  const Head* head = nullptr;
  if (grouped) {
    if (l == 1) {
      const uint64_t mask = GroupFilterMask(hash);
      if (slot.group_filter.empty() ||
          (slot.group_filter[GroupFilterWord(hash)] & mask) != mask) {
        return;
      }
    }
    auto it = slot.heads[l].find(hash);
    if (it == slot.heads[l].end()) return;
    head = &it->second;
  }
  if (level == 1 && HasMaps(order) && head->count >= kPromoteAt) {
    // Only a group of kPromoteAt entries or more has a map (Link).
    auto promoted = slot.promoted.find(hash);
    if (promoted != slot.promoted.end()) {
      cursor->entries_ = &slot.entries;
      cursor->map_ = &promoted->second.latest;
      cursor->it_ = cursor->map_->begin();
      cursor->end_ = cursor->map_->end();
      cursor->prefix_ = prefix;
      cursor->SkipForeign();
      return;
    }
  }
  // Matches, newest first.
  absl::InlinedVector<uint32_t, 8> found;
  if (grouped) {
    // The prefix is the chain's bytes (level 1: a whole group).
    for (uint32_t i = head->first; i != 0; i = slot.entries[i - 1].next[l]) {
      if (slot.entries[i - 1].key().starts_with(prefix)) found.push_back(i);
    }
  } else {
    for (uint32_t i = static_cast<uint32_t>(slot.entries.size()); i > 0; --i) {
      if (slot.entries[i - 1].key().starts_with(prefix)) found.push_back(i);
    }
  }
  if (found.size() == 1) {
    const Entry& e = slot.entries[found[0] - 1];
    cursor->items_.emplace_back(e.key(), e.tx);
    return;
  }
  // Oldest first, so that SortedByKey puts the latest of equal keys first.
  std::reverse(found.begin(), found.end());
  const std::vector<uint32_t> latest =
      LatestByKey(static_cast<uint32_t>(found.size()),
                  [&](uint32_t i) { return slot.entries[found[i] - 1].key(); });
  for (uint32_t i : latest) {
    const Entry& e = slot.entries[found[i] - 1];
    cursor->items_.emplace_back(e.key(), e.tx);
  }
}

void ImportIndex::Collect(
    IndexOrder order, std::string_view prefix,
    std::vector<std::pair<std::string_view, EntityId>>* out) {
  out->clear();
  Cursor cursor;
  for (Scan(order, prefix, &cursor); cursor.Valid(); cursor.Next()) {
    out->emplace_back(cursor.key(), cursor.tx());
  }
}

void ImportIndex::SortedKeys(
    IndexOrder order, std::vector<std::pair<std::string_view, EntityId>>* out) {
  out->clear();
  const Slot& slot = slots_[SlotOf(order)];
  const std::vector<uint32_t> latest =
      LatestByKey(static_cast<uint32_t>(slot.entries.size()),
                  [&](uint32_t i) { return slot.entries[i].key(); });
  out->reserve(latest.size());
  // The entries are read in key order, scattered: ask for them ahead.
  constexpr size_t kAhead = 16;
  for (size_t i = 0; i < latest.size(); ++i) {
    if (i + kAhead < latest.size()) {
      __builtin_prefetch(&slot.entries[latest[i + kAhead]]);
    }
    const Entry& e = slot.entries[latest[i]];
    out->emplace_back(e.key(), e.tx);
  }
}

void ImportIndex::ClearForReuse() {
  for (Slot& s : slots_) {
    s.entries.clear();
    s.indexed = 0;
    for (auto& h : s.heads) {
      const size_t chains = h.size();
      h = {};
      h.reserve(chains);
    }
    s.promoted = {};
    s.shared_hash = {};
    std::fill(s.group_filter.begin(), s.group_filter.end(), 0);
  }
}

void ImportIndex::Clear() {
  for (Slot& s : slots_) {
    s.entries.clear();
    s.entries.shrink_to_fit();
    s.indexed = 0;
    for (auto& h : s.heads) h = {};
    s.promoted = {};
    s.shared_hash = {};
    s.group_filter = {};
  }
}

}  // namespace mentat::storage::internal
