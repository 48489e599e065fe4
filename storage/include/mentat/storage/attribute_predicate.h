#ifndef MENTAT_STORAGE_ATTRIBUTE_PREDICATE_H_
#define MENTAT_STORAGE_ATTRIBUTE_PREDICATE_H_

#include <optional>
#include <string>
#include <string_view>

#include "mentat/storage/value.h"

namespace mentat::storage {

// A predicate of one value that :db.attr/preds may name. Datomic names any
// Clojure function there; mentatd runs no user code in its transactor, so
// an attribute may name only these, the one-argument built-ins of the
// query engine whose answer depends on the value and not on its type
// alone (a type test such as string? is decided by :db/valueType).
enum class AttributePredicate : uint8_t {
  kZero,   // zero?  numbers
  kPos,    // pos?   numbers
  kNeg,    // neg?   numbers
  kEven,   // even?  integers
  kOdd,    // odd?   integers
  kTrue,   // true?  booleans
  kFalse,  // false? booleans
  kBlank,  // blank? strings: empty or only whitespace
};

// The predicate a :db.attr/preds symbol names: bare ("pos?") or qualified
// as Datomic writes it ("clojure.core/pos?", "clojure.string/blank?").
// nullopt for any other name.
std::optional<AttributePredicate> FindAttributePredicate(std::string_view name);

// The bare name ("pos?").
std::string_view AttributePredicateName(AttributePredicate p);

// Every accepted bare name, for messages ("zero?, pos?, ...").
std::string AttributePredicateNames();

// True when `p` applies to values of `type` (pos? to the four number
// types, even? to longs and bigints, true? to booleans, blank? to
// strings).
bool AttributePredicateTakes(AttributePredicate p, ValueType type);

// `p` of `v`, with the query engine's meaning of the same name. `v` must
// be of a type the predicate takes; any other value is false.
bool AttributePredicateHolds(AttributePredicate p, const Value& v);

}  // namespace mentat::storage

#endif  // MENTAT_STORAGE_ATTRIBUTE_PREDICATE_H_
