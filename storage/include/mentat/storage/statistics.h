#ifndef MENTAT_STORAGE_STATISTICS_H_
#define MENTAT_STORAGE_STATISTICS_H_

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

// An immutable snapshot of the statistics, shared by readers.
class Statistics {
 public:
  // nullptr if the attribute has no datoms and never had.
  const AttributeStats* Find(EntityId attribute) const {
    auto it = by_attribute_.find(attribute);
    return it == by_attribute_.end() ? nullptr : &it->second;
  }
  const absl::flat_hash_map<EntityId, AttributeStats>& all() const {
    return by_attribute_;
  }
  absl::flat_hash_map<EntityId, AttributeStats>& mutable_all() {
    return by_attribute_;
  }

 private:
  absl::flat_hash_map<EntityId, AttributeStats> by_attribute_;
};

}  // namespace mentat::storage

#endif  // MENTAT_STORAGE_STATISTICS_H_
