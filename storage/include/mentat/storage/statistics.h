#ifndef MENTAT_STORAGE_STATISTICS_H_
#define MENTAT_STORAGE_STATISTICS_H_

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "mentat/storage/value.h"

namespace mentat::storage {

// An attribute's current datoms per value: (value, count) pairs sorted by
// value (Value's order), each value once. A sorted vector rather than a
// hash map because the transactor copies the counts of every attribute a
// commit changes while a published snapshot still shares them
// (Statistics::Mutable): a copy is one pass over the pairs, where a hash
// map rehashes every value (about 20K instructions a commit for 200
// values). There are at most StoreOptions::low_cardinality_limit values,
// so a lookup is a short binary search and an insertion a short shift.
class ValueCounts {
 public:
  using Entry = std::pair<Value, int64_t>;
  // Callers may change a pair's count through an iterator, never its
  // value.
  using iterator = std::vector<Entry>::iterator;
  using const_iterator = std::vector<Entry>::const_iterator;

  iterator begin() { return entries_.begin(); }
  iterator end() { return entries_.end(); }
  const_iterator begin() const { return entries_.begin(); }
  const_iterator end() const { return entries_.end(); }
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  void clear() { entries_.clear(); }

  // The pair of `v`, or end().
  iterator find(const Value& v) {
    const iterator it = LowerBound(v);
    return it != entries_.end() && it->first == v ? it : entries_.end();
  }
  const_iterator find(const Value& v) const {
    return const_cast<ValueCounts*>(this)->find(v);
  }
  // The count of `v`; 0 when it has none.
  int64_t CountOf(const Value& v) const {
    const const_iterator it = find(v);
    return it == end() ? 0 : it->second;
  }
  // Adds `v` with `count` unless `v` is there; returns its pair, and
  // whether it was added.
  std::pair<iterator, bool> emplace(Value v, int64_t count) {
    const iterator it = LowerBound(v);
    if (it != entries_.end() && it->first == v) return {it, false};
    return {entries_.emplace(it, std::move(v), count), true};
  }
  iterator erase(iterator it) { return entries_.erase(it); }

  bool operator==(const ValueCounts& other) const = default;

 private:
  iterator LowerBound(const Value& v) {
    return std::lower_bound(
        entries_.begin(), entries_.end(), v,
        [](const Entry& e, const Value& x) { return e.first < x; });
  }

  std::vector<Entry> entries_;
};

// Per-attribute statistics of the current state, maintained exactly by the
// transactor with every commit and persisted in the `meta` family.
struct AttributeStats {
  int64_t datoms = 0;           // current datoms of the attribute
  int64_t distinct_values = 0;  // distinct current values
  // While the attribute has at most StoreOptions::low_cardinality_limit
  // distinct values, the count of datoms per value; once it passes the
  // limit, tracking stops for good and `value_counts` stays empty.
  bool values_tracked = true;
  ValueCounts value_counts;
};

// A snapshot of the statistics, shared by readers once published.
//
// Copying one is cheap: it copies a pointer per attribute, and the two
// copies share every attribute's AttributeStats until one of them changes
// it through Mutable, which copies that attribute alone first. So a commit
// pays for the attributes it wrote, not for every attribute's value
// counts (up to low_cardinality_limit values each). A published snapshot
// is immutable; Mutable is for the one thread that owns an unpublished
// copy (the transactor, the loader).
class Statistics {
 public:
  using Map =
      absl::flat_hash_map<EntityId, std::shared_ptr<const AttributeStats>>;

  // nullptr if the attribute has no datoms and never had.
  const AttributeStats* Find(EntityId attribute) const {
    auto it = by_attribute_.find(attribute);
    return it == by_attribute_.end() ? nullptr : it->second.get();
  }
  // Every attribute's statistics (never a null pointer).
  const Map& all() const { return by_attribute_; }
  // The attribute's statistics to change (made empty if missing), this
  // copy's own: copied first while another copy shares them.
  AttributeStats& Mutable(EntityId attribute) {
    std::shared_ptr<const AttributeStats>& p = by_attribute_[attribute];
    if (p == nullptr) {
      p = std::make_shared<AttributeStats>();
    } else if (p.use_count() > 1) {
      p = std::make_shared<AttributeStats>(*p);
    } else {
      // Held by this copy alone: only its owner can copy it, but a
      // reader may just have dropped the last other copy (its release of
      // the count pairs with this acquire before we write).
      std::atomic_thread_fence(std::memory_order_acquire);
    }
    // Made above as non-const objects, and held by this copy alone.
    return const_cast<AttributeStats&>(*p);
  }

 private:
  Map by_attribute_;
};

}  // namespace mentat::storage

#endif  // MENTAT_STORAGE_STATISTICS_H_
