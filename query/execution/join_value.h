#ifndef MENTAT_QUERY_EXECUTION_JOIN_VALUE_H_
#define MENTAT_QUERY_EXECUTION_JOIN_VALUE_H_

// Equality and hashing of values as the executor unifies them: a ref and a
// long with the same number are the same value (an entity id reaches a
// query as an integer input, a function result or a ref datom alike);
// everything else compares by type and value.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "absl/hash/hash.h"
#include "absl/strings/string_view.h"
#include "mentat/storage/value.h"

namespace mentat::query::execution {

inline bool IsLongLike(storage::ValueType t) {
  return t == storage::ValueType::kRef || t == storage::ValueType::kLong;
}

inline bool JoinEq(const storage::Value& a, const storage::Value& b) {
  if (a.type() == b.type()) return a == b;
  return IsLongLike(a.type()) && IsLongLike(b.type()) &&
         a.as_long() == b.as_long();
}

inline size_t MixHash(uint64_t x) {
  // A 64-bit finaliser (splitmix): cheap and good enough for hash tables.
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return static_cast<size_t>(x);
}

inline size_t JoinHash(const storage::Value& v) {
  switch (v.type()) {
    case storage::ValueType::kRef:
    case storage::ValueType::kLong:
      return MixHash(static_cast<uint64_t>(v.as_long()));
    case storage::ValueType::kInstant:
      return MixHash(static_cast<uint64_t>(v.as_long()) ^ 0x7777);
    case storage::ValueType::kString:
    case storage::ValueType::kKeyword:
    case storage::ValueType::kBytes:
    case storage::ValueType::kUri:
    case storage::ValueType::kSymbol:
    case storage::ValueType::kUuid:
      return absl::HashOf(static_cast<int>(v.type()),
                          absl::string_view(v.text().data(), v.text().size()));
    default:
      return storage::ValueHash()(v);
  }
}

inline size_t HashRow(const storage::Value* row, int width) {
  size_t h = 0x9e3779b97f4a7c15ULL;
  for (int i = 0; i < width; ++i) {
    h = MixHash(h ^ JoinHash(row[i])) + static_cast<size_t>(i);
  }
  return h;
}

inline bool RowsEq(const storage::Value* a, const storage::Value* b,
                   int width) {
  for (int i = 0; i < width; ++i) {
    if (!JoinEq(a[i], b[i])) return false;
  }
  return true;
}

// Approximate bytes a value holds, for the memory budget.
inline size_t ValueBytes(const storage::Value& v) {
  size_t n = sizeof(storage::Value);
  // Strings past the small-string buffer live on the heap.
  if (v.text().size() > 15) n += v.text().capacity();
  return n;
}

}  // namespace mentat::query::execution

#endif  // MENTAT_QUERY_EXECUTION_JOIN_VALUE_H_
