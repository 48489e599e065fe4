#ifndef MENTAT_QUERY_BUILTINS_VALUE_COMPARE_H_
#define MENTAT_QUERY_BUILTINS_VALUE_COMPARE_H_

#include <compare>
#include <cstdint>

#include "mentat/storage/value.h"

namespace mentat::query::builtins {

// Numeric kinds in the order of Clojure's contagion: combining two numbers
// gives the larger kind (long + bigint -> bigint, anything + double ->
// double). Refs count as longs.
enum class NumKind : uint8_t { kNone, kLong, kBigInt, kBigDec, kDouble };

inline NumKind NumberKind(const storage::Value& v) {
  switch (v.type()) {
    case storage::ValueType::kLong:
    case storage::ValueType::kRef:
      return NumKind::kLong;
    case storage::ValueType::kBigInt:
      return NumKind::kBigInt;
    case storage::ValueType::kBigDec:
      return NumKind::kBigDec;
    case storage::ValueType::kDouble:
      return NumKind::kDouble;
    default:
      return NumKind::kNone;
  }
}

inline bool IsLongLike(storage::ValueType t) {
  return t == storage::ValueType::kLong || t == storage::ValueType::kRef;
}

// Compares two numbers (both NumberKind != kNone) by value. Long against
// double is exact; a bigint/bigdec against a double compares as doubles (as
// Clojure does); bigint/bigdec against longs and each other is exact.
// Unordered when a NaN is involved. Allocates nothing for canonical values.
std::partial_ordering CompareNumbers(const storage::Value& a,
                                     const storage::Value& b);

// The value of a number as a double (bigints beyond range give +-inf).
double NumberToDouble(const storage::Value& v);

// Clojure's `=`: numbers are equal when they have the same category
// (integers: long, ref, bigint; doubles; bigdecs) and value, so (= 1 1.0)
// is false and (= 1 1N) true; other values when they have the same type
// and value (strings by bytes, instants by time).
bool ValuesEqual(const storage::Value& a, const storage::Value& b);

std::partial_ordering CompareForPredicateSlow(const storage::Value& a,
                                              const storage::Value& b);

// The order of < <= > >= and compare: numbers across kinds by value;
// strings by bytes (UTF-8 order), keywords by namespace then name (as
// Clojure; no namespace first), instants by time, booleans false < true,
// uuids by bytes. Unordered for values that do not compare: different
// non-numeric types, bytes, NaN.
inline std::partial_ordering CompareForPredicate(const storage::Value& a,
                                                 const storage::Value& b) {
  if (IsLongLike(a.type()) && IsLongLike(b.type())) {
    return a.as_long() <=> b.as_long();
  }
  return CompareForPredicateSlow(a, b);
}

// A total order over all values for the aggregates (min, max, min n, max
// n, median, distinct's output order): CompareForPredicate where it orders;
// NaN after every other number; numbers equal in value ordered by kind
// (1 < 1N < 1M < 1.0, ref before long); numbers before other values; other
// values of different types by type tag; bytes by bytes.
std::strong_ordering TotalCompare(const storage::Value& a,
                                  const storage::Value& b);

struct TotalLess {
  bool operator()(const storage::Value& a, const storage::Value& b) const {
    return TotalCompare(a, b) < 0;
  }
};

}  // namespace mentat::query::builtins

#endif  // MENTAT_QUERY_BUILTINS_VALUE_COMPARE_H_
