#ifndef MENTAT_STORAGE_INDEX_RANGE_H_
#define MENTAT_STORAGE_INDEX_RANGE_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "mentat/storage/keys.h"
#include "mentat/storage/schema.h"
#include "mentat/storage/value.h"

namespace mentat::storage {

// What one position of an index order's key holds. kRefValue is VAET's
// value: an entity (the ref's target).
enum class KeySlot : uint8_t { kEntity, kAttribute, kValue, kRefValue };

// The slot at `position` (0, 1 or 2) of `order`'s key:
//   EAVT e a v, AEVT a e v, AVET a v e, VAET v(ref) a e.
// In every order the attribute comes before a plain value, so a caller
// decoding the components in order knows the value's type when it needs
// it.
KeySlot SlotOf(IndexOrder order, int position);

// The leading components of an index range, by role: `count` of them, in
// `order`'s key order (Datomic's `(d/datoms db :avet a v)`). A component
// past `count` is ignored; one within it must be set (entity, attribute,
// value; a kRefValue slot takes `entity_value`).
struct IndexComponents {
  int count = 0;
  EntityId entity = 0;
  const Attribute* attribute = nullptr;
  Value value;
  EntityId entity_value = 0;  // VAET's ref value
};

// The key prefix that selects the datoms matching `components` in
// `order`: every key of the range starts with it (empty: the whole
// index). InvalidArgument for more than 3 components, a missing attribute,
// or a non-ref attribute in VAET (which holds ref datoms only).
[[nodiscard]] absl::StatusOr<std::string> IndexRangePrefix(
    IndexOrder order, const IndexComponents& c);

}  // namespace mentat::storage

#endif  // MENTAT_STORAGE_INDEX_RANGE_H_
