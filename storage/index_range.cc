#include "mentat/storage/index_range.h"

#include "mentat/base/str_cat.h"

namespace mentat::storage {

KeySlot SlotOf(IndexOrder order, int position) {
  static constexpr KeySlot kSlots[4][3] = {
      {KeySlot::kEntity, KeySlot::kAttribute, KeySlot::kValue},     // EAVT
      {KeySlot::kAttribute, KeySlot::kEntity, KeySlot::kValue},     // AEVT
      {KeySlot::kAttribute, KeySlot::kValue, KeySlot::kEntity},     // AVET
      {KeySlot::kRefValue, KeySlot::kAttribute, KeySlot::kEntity},  // VAET
  };
  return kSlots[static_cast<int>(order)][position];
}

absl::StatusOr<std::string> IndexRangePrefix(IndexOrder order,
                                             const IndexComponents& c) {
  if (c.count < 0 || c.count > 3) {
    return absl::InvalidArgumentError(
        StrCat("at most 3 components, got ", c.count));
  }
  std::string prefix;
  const int n = c.count;
  if (n == 0) return prefix;
  bool needs_attribute = false;
  for (int i = 0; i < n; ++i) {
    needs_attribute |= SlotOf(order, i) == KeySlot::kAttribute;
  }
  if (needs_attribute && c.attribute == nullptr) {
    return absl::InvalidArgumentError("the range's attribute is not set");
  }
  switch (order) {
    case IndexOrder::kEavt:
      if (n == 1) {
        EavtKey::EncodePrefix(c.entity, &prefix);
      } else if (n == 2) {
        EavtKey::EncodePrefix(c.entity, c.attribute->id, &prefix);
      } else {
        EavtKey::Encode(c.entity, c.attribute->id, c.value, &prefix);
      }
      return prefix;
    case IndexOrder::kAevt:
      if (n == 1) {
        AevtKey::EncodePrefix(c.attribute->id, &prefix);
      } else if (n == 2) {
        AevtKey::EncodePrefix(c.attribute->id, c.entity, &prefix);
      } else {
        AevtKey::Encode(c.attribute->id, c.entity, c.value, &prefix);
      }
      return prefix;
    case IndexOrder::kAvet:
      if (n == 1) {
        AvetKey::EncodePrefix(c.attribute->id, &prefix);
      } else if (n == 2) {
        AvetKey::EncodePrefix(c.attribute->id, c.value, &prefix);
      } else {
        AvetKey::Encode(c.attribute->id, c.value, c.entity, &prefix);
      }
      return prefix;
    case IndexOrder::kVaet:
      if (n >= 2 && !c.attribute->is_ref()) {
        return absl::InvalidArgumentError(
            StrCat("component 2: VAET holds ref attributes only, :",
                   c.attribute->ident, " is not one"));
      }
      if (n == 1) {
        VaetKey::EncodePrefix(c.entity_value, &prefix);
      } else if (n == 2) {
        VaetKey::EncodePrefix(c.entity_value, c.attribute->id, &prefix);
      } else {
        VaetKey::Encode(c.entity_value, c.attribute->id, c.entity, &prefix);
      }
      return prefix;
  }
  return absl::InvalidArgumentError("unknown index");
}

}  // namespace mentat::storage
