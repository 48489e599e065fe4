#ifndef MENTAT_STORAGE_KEYS_H_
#define MENTAT_STORAGE_KEYS_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "mentat/storage/datom.h"
#include "mentat/storage/value.h"

namespace mentat::storage {

// Key layouts of the four index orders. Entity ids are 8 bytes big-endian
// (ids are never negative), values use value_codec.h's encoding, so one
// prefix seek answers every pattern shape:
//   EAVT  e(8) a(8) v(enc)      entity view, pull
//   AEVT  a(8) e(8) v(enc)      attribute scans
//   AVET  a(8) v(enc) e(8)      lookups by value, unique checks
//   VAET  v(8) a(8) e(8)        reverse refs (ref values only)
// The current column families hold these keys, each with the tx that
// asserted the datom as its value (8 bytes BE). The history families hold
// retracted datoms only: the same key followed by the asserting tx (8 bytes
// BE), with the retracting tx as the value. No family uses RocksDB's
// user-defined timestamps (docs/architecture.md, "Column families").

enum class IndexOrder : uint8_t { kEavt = 0, kAevt = 1, kAvet = 2, kVaet = 3 };

// "eavt" etc.
std::string_view IndexOrderName(IndexOrder order);

void AppendEntityId(EntityId id, std::string* out);
// Reads 8 bytes big-endian from the front of `*in` and advances it.
[[nodiscard]] absl::Status ReadEntityId(std::string_view* in, EntityId* id);

struct EavtKey {
  static void Encode(EntityId e, EntityId a, const Value& v, std::string* out);
  // Prefixes for partially bound patterns.
  static void EncodePrefix(EntityId e, std::string* out);
  static void EncodePrefix(EntityId e, EntityId a, std::string* out);
};

struct AevtKey {
  static void Encode(EntityId a, EntityId e, const Value& v, std::string* out);
  static void EncodePrefix(EntityId a, std::string* out);
  static void EncodePrefix(EntityId a, EntityId e, std::string* out);
};

struct AvetKey {
  static void Encode(EntityId a, const Value& v, EntityId e, std::string* out);
  static void EncodePrefix(EntityId a, std::string* out);
  static void EncodePrefix(EntityId a, const Value& v, std::string* out);
};

struct VaetKey {
  // `v` must be a ref.
  static void Encode(EntityId v, EntityId a, EntityId e, std::string* out);
  static void EncodePrefix(EntityId v, std::string* out);
  static void EncodePrefix(EntityId v, EntityId a, std::string* out);
};

// Encodes the key of `d` (its e, a, v) in `order`.
void EncodeKey(IndexOrder order, const Datom& d, std::string* out);

// Decodes e, a and v of a key in `order` into `*d` (tx and added are left
// alone), reusing d->v's buffer. Returns DataLoss on malformed bytes, after
// which *d's e, a and v are unspecified.
[[nodiscard]] absl::Status DecodeKey(IndexOrder order, std::string_view key,
                                     Datom* d);

// As DecodeKey, but leaves d->v alone: e and a sit at fixed places (AVET's
// entity is its last 8 bytes), so nothing is decoded or copied. The value
// is not checked either: for keys read back from the store, when the
// caller knows v (from its seek prefix) or does not read it.
[[nodiscard]] absl::Status DecodeKeyIds(IndexOrder order, std::string_view key,
                                        Datom* d);

// The smallest key greater than every key that starts with `prefix`, for
// iterate_upper_bound; empty if there is none (prefix all 0xFF).
std::string PrefixSuccessor(std::string_view prefix);

}  // namespace mentat::storage

#endif  // MENTAT_STORAGE_KEYS_H_
