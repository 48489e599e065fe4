#ifndef MENTAT_STORAGE_VALUE_H_
#define MENTAT_STORAGE_VALUE_H_

#include <array>
#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

namespace mentat::storage {

// An entity id: the `e` and `tx` of a datom, and the value of a ref.
// Ids are Datomic-shaped: the partition index in the bits above 42,
// a counter below (so a tx id looks like 13194139534313).
using EntityId = int64_t;

// The type of a value, as declared by an attribute's :db/valueType. The
// numeric order is the order of the type tags in encoded values.
enum class ValueType : uint8_t {
  kRef = 1,
  kBoolean = 2,
  kLong = 3,
  kBigInt = 4,
  kDouble = 5,
  kBigDec = 6,
  kInstant = 7,
  kUuid = 8,
  kKeyword = 9,
  kString = 10,
  kBytes = 11,
  // Appended: stores on disk hold these numbers, so never renumber.
  kUri = 12,
  kSymbol = 13,
  kTuple = 14,
};

// ":db.type/long" etc. for a type; the inverse returns false on unknown text.
std::string_view ValueTypeIdent(ValueType type);
bool ValueTypeFromIdent(std::string_view ident, ValueType* type);

// A typed value: what `v` holds in a datom. Plain value semantics; cheap to
// copy for scalars, strings use std::string (short ones inline).
//
// Representations:
//   kRef, kLong          int64
//   kInstant             int64 microseconds since the Unix epoch, UTC
//   kDouble              double
//   kBoolean             bool
//   kUuid                16 raw bytes in text()
//   kKeyword             "ns/name" (no leading colon) in text()
//   kString, kBytes      the bytes in text()
//   kUri                 the URI reference as written, RFC 3986 syntax
//                        checked by ParseUri (value_codec.h), in text()
//   kSymbol              "ns/name" or "name" in text(), like a keyword
//   kTuple               in text(), the elements' encodings back to back
//                        (EncodeValue), a nil element as kTupleNilTag;
//                        refs as the longs they equal. Build one with
//                        MakeTuple, read it with DecodeTupleElements
//                        (value_codec.h)
//   kBigInt              canonical decimal digits with optional '-' ("-123")
//   kBigDec              canonical decimal: optional '-', digits, optional
//                        '.' and digits, no exponent, no trailing fraction
//                        zeros ("-12.5", "0", "1000")
//
// Ordering (operator<=>) is the order of the encoded bytes: first by type,
// then by value within the type (see value_codec.h).
class Value {
 public:
  Value() : type_(ValueType::kLong), i_(0) {}

  static Value Ref(EntityId e) { return Value(ValueType::kRef, e); }
  static Value Long(int64_t v) { return Value(ValueType::kLong, v); }
  static Value Instant(int64_t micros) {
    return Value(ValueType::kInstant, micros);
  }
  static Value Boolean(bool b) {
    Value v(ValueType::kBoolean, 0);
    v.b_ = b;
    return v;
  }
  static Value Double(double d) {
    Value v(ValueType::kDouble, 0);
    v.d_ = d;
    return v;
  }
  static Value Keyword(std::string_view text) {
    return Value(ValueType::kKeyword, text);
  }
  static Value String(std::string_view text) {
    return Value(ValueType::kString, text);
  }
  static Value Bytes(std::string_view bytes) {
    return Value(ValueType::kBytes, bytes);
  }
  // `text` must be a valid URI reference; see ParseUri in value_codec.h
  // for checking user text.
  static Value Uri(std::string_view text) {
    return Value(ValueType::kUri, text);
  }
  // `text` is "ns/name" or "name", as an EDN symbol is written.
  static Value Symbol(std::string_view text) {
    return Value(ValueType::kSymbol, text);
  }
  // `elements`: encoded elements (see the table above); MakeTuple in
  // value_codec.h builds them.
  static Value Tuple(std::string_view elements) {
    return Value(ValueType::kTuple, elements);
  }
  // `bytes` must be exactly 16 bytes.
  static Value Uuid(std::string_view bytes) {
    return Value(ValueType::kUuid, bytes);
  }
  // `digits` must already be canonical (see above); see ParseBigInt /
  // ParseBigDec in value_codec.h for parsing user text.
  static Value BigInt(std::string_view digits) {
    return Value(ValueType::kBigInt, digits);
  }
  static Value BigDec(std::string_view digits) {
    return Value(ValueType::kBigDec, digits);
  }

  // Makes this a kKeyword, kString, kBytes, kUri or kSymbol value holding
  // `text`, reusing the existing buffer: decoders call it on a reused Value so
  // reading a stream of string datoms does not allocate per datom.
  void AssignText(ValueType type, std::string_view text) {
    type_ = type;
    i_ = 0;
    s_.assign(text.data(), text.size());
  }
  // Makes this a kRef, kLong or kInstant value, keeping the text buffer for
  // a later AssignText (assigning Value::Ref(e) would free it).
  void AssignInt(ValueType type, int64_t v) {
    type_ = type;
    i_ = v;
    s_.clear();
  }
  void AssignBoolean(bool b) {
    type_ = ValueType::kBoolean;
    i_ = 0;
    b_ = b;
    s_.clear();
  }
  // The buffer AssignText writes; for decoders that build text in place.
  std::string* mutable_text_for(ValueType type) {
    type_ = type;
    i_ = 0;
    return &s_;
  }

  // The bytes the text buffer has room for (inline ones included), and a
  // way to free it: for containers that keep spare values to reuse their
  // buffers and bound what they keep. Release leaves the value a long 0.
  size_t text_capacity() const { return s_.capacity(); }
  void ReleaseText() {
    type_ = ValueType::kLong;
    i_ = 0;
    std::string().swap(s_);
  }

  ValueType type() const { return type_; }
  int64_t as_long() const { return i_; }  // kRef, kLong, kInstant
  EntityId as_ref() const { return i_; }
  double as_double() const { return d_; }
  bool as_bool() const { return b_; }
  const std::string& text() const { return s_; }

  bool operator==(const Value& other) const;
  std::strong_ordering operator<=>(const Value& other) const;

  // A readable EDN-like rendering for messages: 42, "x", :a/b, #inst "...".
  std::string DebugString() const;

 private:
  Value(ValueType t, int64_t i) : type_(t), i_(i) {}
  Value(ValueType t, std::string_view s) : type_(t), i_(0), s_(s) {}

  ValueType type_;
  union {
    int64_t i_;
    double d_;
    bool b_;
  };
  std::string s_;
};

struct ValueHash {
  size_t operator()(const Value& v) const;
};

}  // namespace mentat::storage

#endif  // MENTAT_STORAGE_VALUE_H_
