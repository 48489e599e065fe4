#ifndef MENTAT_STORAGE_INTERNAL_IMPORT_INDEX_H_
#define MENTAT_STORAGE_INTERNAL_IMPORT_INDEX_H_

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "mentat/storage/datom.h"
#include "mentat/storage/keys.h"

namespace mentat::storage::internal {

// What SortedByKey and LatestByKey sort: a key's first 27 bytes (zero
// padded) and its length, so that most comparisons, and most checks of
// whether two neighbours are the same key, never touch the key itself
// (scattered over an arena: a cache miss each). 27 bytes cover every key of
// a fixed-size value (an AVET or EAVT key of a ref, long or instant is 25
// bytes), whose groups (one assignee, one minute) made 24 bytes tie and
// fall back to memcmp. 32 bytes a record, as with 24 bytes and an index.
struct KeySortRecord {
  static constexpr size_t kBytes = 27;
  uint64_t words[3];
  // Bytes 24..26 of the key, then min(size, 255).
  uint32_t tail;
  uint32_t index;

  static uint64_t Word(std::string_view key, size_t at) {
    uint64_t v = 0;
    for (size_t i = at; i < at + 8; ++i) {
      v = (v << 8) | (i < key.size() ? static_cast<uint8_t>(key[i]) : 0);
    }
    return v;
  }
  static KeySortRecord Of(std::string_view key, uint32_t index) {
    uint32_t tail = 0;
    for (size_t i = 24; i < kBytes; ++i) {
      tail = (tail << 8) | (i < key.size() ? static_cast<uint8_t>(key[i]) : 0);
    }
    tail =
        (tail << 8) | static_cast<uint32_t>(std::min<size_t>(key.size(), 255));
    return KeySortRecord{
        {Word(key, 0), Word(key, 8), Word(key, 16)}, tail, index};
  }
  // Both keys fit in the record (then the record alone orders them).
  bool Short() const { return (tail & 0xff) <= kBytes; }
  // -1, 0 or 1 as the keys compare, reading them only when their first
  // 27 bytes are the same and one is longer than that.
  template <typename KeyOf>
  static int Compare(const KeySortRecord& a, const KeySortRecord& b,
                     const KeyOf& key_of) {
    for (int w = 0; w < 3; ++w) {
      if (a.words[w] != b.words[w]) return a.words[w] < b.words[w] ? -1 : 1;
    }
    if ((a.tail >> 8) != (b.tail >> 8)) {
      return (a.tail >> 8) < (b.tail >> 8) ? -1 : 1;
    }
    if (a.Short() && b.Short()) {
      // The same bytes up to the shorter one's end: it is a prefix.
      const uint32_t sa = a.tail & 0xff, sb = b.tail & 0xff;
      return sa == sb ? 0 : (sa < sb ? -1 : 1);
    }
    const int c = key_of(a.index).compare(key_of(b.index));
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
  }
};

// The records of keys 0..n-1 ordered by key (bytewise), and among equal
// keys the latest (largest index) first.
template <typename KeyOf>
std::vector<KeySortRecord> SortedKeyRecords(uint32_t n, const KeyOf& key_of) {
  std::vector<KeySortRecord> recs(n);
  for (uint32_t i = 0; i < n; ++i) recs[i] = KeySortRecord::Of(key_of(i), i);
  std::sort(recs.begin(), recs.end(),
            [&](const KeySortRecord& a, const KeySortRecord& b) {
              const int c = KeySortRecord::Compare(a, b, key_of);
              return c != 0 ? c < 0 : a.index > b.index;
            });
  return recs;
}

// The indices 0..n-1 ordered by key_of(i) (bytewise), and among equal keys
// the latest (largest index) first.
template <typename KeyOf>
std::vector<uint32_t> SortedByKey(uint32_t n, KeyOf key_of) {
  const std::vector<KeySortRecord> recs = SortedKeyRecords(n, key_of);
  std::vector<uint32_t> out(n);
  for (uint32_t i = 0; i < n; ++i) out[i] = recs[i].index;
  return out;
}

// The same, but only the latest of equal keys: the index of each distinct
// key's last write, in key order. Reads a key only where its record cannot
// tell it from its neighbour's.
template <typename KeyOf>
std::vector<uint32_t> LatestByKey(uint32_t n, KeyOf key_of) {
  const std::vector<KeySortRecord> recs = SortedKeyRecords(n, key_of);
  std::vector<uint32_t> out;
  out.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    if (i > 0 && KeySortRecord::Compare(recs[i - 1], recs[i], key_of) == 0) {
      continue;
    }
    out.push_back(recs[i].index);
  }
  return out;
}

// One chunk of a bulk import's writes to the orders the transactor reads
// back (EAVT, AVET, VAET), with read-your-writes. Transactor thread only.
//
// A write is an append (no ordered index to keep up: CommitBatch's btree of
// string_views spent most of an import in memcmp over cache-missing keys).
// Reads go through hash chains over the key's components, built on the
// first read of an order after writes, so an order that is never read
// back during the chunk (EAVT and VAET, when an import only creates
// entities) costs nothing but the append. The chunk is sorted once, when
// it is written out (SortedKeys).
//
// Chains, per order, from the newest write to the oldest:
//   level 0  the first 8 bytes (EAVT e, AVET a, VAET v)
//   level 1  the group a scan names (EAVT e+a, AVET a+v, VAET v+a)
//   level 2  the whole key (EAVT only: Find is asked of EAVT)
// A level-1 group of AVET or VAET that grows past a few entries (many
// entities holding one value, say the same assignee) also gets an ordered
// map by its last 8 bytes (the entity), so that a scan of it, which most
// often wants only its first key, costs a map lookup instead of a walk and
// a sort of the whole group.
class ImportIndex {
  struct Entry;
  using Latest = absl::btree_map<uint64_t, uint32_t>;

 public:
  // The tx of a deleted key.
  static constexpr EntityId kDeleted = -1;

  // Records that `key` now holds `tx` (kDeleted: removed) in `order`
  // (EAVT, AVET or VAET). `key` must stay valid until Clear().
  void Add(IndexOrder order, std::string_view key, EntityId tx);

  // Entries per order, for save points.
  using Marks = std::array<uint32_t, 3>;
  Marks marks() const;
  // Forgets every write after `marks`.
  void Truncate(const Marks& marks);

  size_t size() const;

  // The tx of the latest write of `key` in this chunk (kDeleted if it was
  // removed), or nullopt if the chunk did not write it.
  std::optional<EntityId> Find(IndexOrder order, std::string_view key);

  // The chunk's writes under a prefix: the latest write of each key, in
  // key order (deleted keys included, with kDeleted). Valid until the
  // index changes.
  class Cursor {
   public:
    bool Valid() const {
      return map_ != nullptr ? it_ != end_ : pos_ < items_.size();
    }
    std::string_view key() const;
    EntityId tx() const;
    void Next();

   private:
    friend class ImportIndex;
    // Skips map entries not under prefix_ (another group of equal hash).
    void SkipForeign();
    absl::InlinedVector<std::pair<std::string_view, EntityId>, 4> items_;
    size_t pos_ = 0;
    const std::vector<Entry>* entries_ = nullptr;
    const Latest* map_ = nullptr;
    Latest::const_iterator it_, end_;
    std::string_view prefix_;
  };
  void Scan(IndexOrder order, std::string_view prefix, Cursor* cursor);

  // The same, collected into *out.
  void Collect(IndexOrder order, std::string_view prefix,
               std::vector<std::pair<std::string_view, EntityId>>* out);

  // Every key of `order` with its latest write, in key order.
  void SortedKeys(IndexOrder order,
                  std::vector<std::pair<std::string_view, EntityId>>* out);

  // Drops everything (the keys' storage is the caller's).
  void Clear();
  // The same, but keeps the entries' storage and sizes the chain-head maps
  // for as many chains as they had: the next chunk of an import, about as
  // large, neither grows them step by step nor faults in new pages.
  void ClearForReuse();

  // Which chain serves a scan of `prefix` in `order`: 0 or 1, or -1 if
  // the prefix ends inside a component (then level 0, filtered, or a walk
  // of every entry serves it). Public for ImportBatch and ImportedGroups.
  static int ScanLevel(IndexOrder order, std::string_view prefix);
  // The length of key's level-1 group (e+a, a+v, v+a).
  static size_t GroupLength(IndexOrder order, std::string_view key);
  // The hash chains (and the DB-side filter) use for a group's bytes.
  static uint64_t GroupHash(std::string_view bytes);

 private:
  struct Entry {
    const char* data;
    uint32_t size;
    // 1 + the index of the next older entry of the same chain; 0 ends it.
    // AVET and VAET have no level 2: next[2] holds instead what the
    // group's map held for this entry's entity before it (1 + index, or
    // 0), to undo the entry.
    std::array<uint32_t, 3> next;
    EntityId tx;
    std::string_view key() const { return std::string_view(data, size); }
  };
  struct Head {
    uint32_t first = 0;  // 1 + the newest entry's index
    uint32_t count = 0;
  };
  // A large level-1 group's map: its entities' latest entries.
  struct Promoted {
    uint32_t at = 0;  // the entry whose arrival promoted the group
    Latest latest;
  };
  struct Slot {
    std::vector<Entry> entries;
    // Entries [0, indexed) are linked into the chains.
    uint32_t indexed = 0;
    // Chain heads by the hash of the chain's bytes (level 0: the 8 bytes
    // themselves).
    std::array<absl::flat_hash_map<uint64_t, Head>, 3> heads;
    // Level-1 groups with a map (AVET, VAET), by the group's hash. A hash
    // two groups share is left to its chain for good.
    absl::flat_hash_map<uint64_t, Promoted> promoted;
    absl::flat_hash_map<uint64_t, bool> shared_hash;
    // A filter of the level-1 groups ever linked (two bits of a word per
    // group; kGroupFilterWords words, made on the first link): most scans
    // of an import name a group the chunk does not hold (a new value), and
    // the filter, small enough to stay in cache, answers them without a
    // probe of `heads` (a cache miss in a map of about a million groups).
    // Unlink leaves its bits: a stale bit only costs that probe.
    std::vector<uint64_t> group_filter;
  };
  static constexpr uint32_t kPromoteAt = 8;
  static constexpr size_t kGroupFilterWords = size_t{1} << 16;  // 512 KB
  static uint64_t GroupFilterMask(uint64_t hash) {
    return (uint64_t{1} << (hash & 63)) | (uint64_t{1} << ((hash >> 6) & 63));
  }
  static size_t GroupFilterWord(uint64_t hash) {
    return (hash >> 12) & (kGroupFilterWords - 1);
  }

  static bool HasMaps(IndexOrder order) { return order != IndexOrder::kEavt; }
  // Links entry i into its chains (and its group's map).
  void Link(IndexOrder order, Slot& slot, uint32_t i);
  // Undoes Link of entry i, the newest linked.
  void Unlink(IndexOrder order, Slot& slot, uint32_t i);

  static size_t SlotOf(IndexOrder order);
  static int Levels(IndexOrder order);
  // The chain of `key` at `level`.
  static uint64_t ChainHash(IndexOrder order, int level, std::string_view key);
  void EnsureIndexed(IndexOrder order);

  std::array<Slot, 3> slots_;
};

}  // namespace mentat::storage::internal

#endif  // MENTAT_STORAGE_INTERNAL_IMPORT_INDEX_H_
