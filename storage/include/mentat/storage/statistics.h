#ifndef MENTAT_STORAGE_STATISTICS_H_
#define MENTAT_STORAGE_STATISTICS_H_

#include <atomic>
#include <cstdint>
#include <memory>

#include "absl/container/flat_hash_map.h"
#include "mentat/storage/value.h"

namespace mentat::storage {

// Per-attribute statistics of the current state, maintained exactly by the
// transactor with every commit and persisted in the `meta` family.
struct AttributeStats {
  int64_t datoms = 0;           // current datoms of the attribute
  int64_t distinct_values = 0;  // distinct current values
  // While the attribute has at most StoreOptions::low_cardinality_limit
  // distinct values, the count of datoms per value; once it passes the
  // limit, tracking stops for good and `value_counts` stays empty.
  bool values_tracked = true;
  absl::flat_hash_map<Value, int64_t, ValueHash> value_counts;
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
