#ifndef MENTAT_STORAGE_DATOM_H_
#define MENTAT_STORAGE_DATOM_H_

#include <string>

#include "mentat/storage/value.h"

namespace mentat::storage {

// A fact: entity `e` has value `v` for attribute `a`, asserted (added) or
// retracted by transaction `tx`.
struct Datom {
  EntityId e = 0;
  EntityId a = 0;
  Value v;
  EntityId tx = 0;
  bool added = true;

  bool operator==(const Datom&) const = default;
  // "[e a v tx added]" with v rendered by Value::DebugString.
  std::string DebugString() const;
};

}  // namespace mentat::storage

#endif  // MENTAT_STORAGE_DATOM_H_
