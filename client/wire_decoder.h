#ifndef MENTAT_CLIENT_WIRE_DECODER_H_
#define MENTAT_CLIENT_WIRE_DECODER_H_

// The protobuf wire format as QueryBatch reads it (query_batch.h). Private
// to the client.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "mentat/client/query_batch.h"

namespace mentat::client {

namespace wire {

enum WireType : uint32_t {
  kVarint = 0,
  kFixed64 = 1,
  kLen = 2,
  kStartGroup = 3,
  kEndGroup = 4,
  kFixed32 = 5,
};

// protobuf's default recursion limit: how deep messages (and groups) may
// nest below the top-level message.
inline constexpr int kDepthLimit = 100;

// The varint at p (before end) into *out: the position after it, or null
// when it is cut off or longer than 10 bytes. Bytes before `readable`
// (at or past end) may be loaded, though not used, to read 8 at a time.
const char* VarintSlow(const char* p, const char* end, const char* readable,
                       uint64_t* out);
inline const char* Varint(const char* p, const char* end, const char* readable,
                          uint64_t* out) {
  if (__builtin_expect(p < end && static_cast<signed char>(*p) >= 0, 1)) {
    *out = static_cast<unsigned char>(*p);
    return p + 1;
  }
  return VarintSlow(p, end, readable, out);
}

// The varint in the 8 bytes at p (all readable) into *out: its length,
// or 0 when it is longer than 8 bytes. The 7-bit groups are packed
// together in 3 steps, not a loop.
inline int VarintIn8(const char* p, uint64_t* out) {
  uint64_t word;
  std::memcpy(&word, p, 8);
  const uint64_t last = ~word & 0x8080808080808080ull;
  if (last == 0) return 0;
  const int bits = __builtin_ctzll(last) + 1;  // through the last byte
  uint64_t x = bits == 64 ? word : word & ((uint64_t{1} << bits) - 1);
  x = ((x & 0x7F007F007F007F00ull) >> 1) | (x & 0x007F007F007F007Full);
  x = ((x & 0x3FFF00003FFF0000ull) >> 2) | (x & 0x00003FFF00003FFFull);
  x = ((x & 0x0FFFFFFF00000000ull) >> 4) | (x & 0x000000000FFFFFFFull);
  *out = x;
  return bits / 8;
}

// A tag or a length, as protobuf reads them: at most 5 bytes, the low 32
// bits kept.
const char* Varint32Slow(const char* p, const char* end, uint32_t* out);
inline const char* Varint32(const char* p, const char* end, uint32_t* out) {
  if (__builtin_expect(p < end && static_cast<signed char>(*p) >= 0, 1)) {
    *out = static_cast<unsigned char>(*p);
    return p + 1;
  }
  return Varint32Slow(p, end, out);
}

// Whether [p, end) is UTF-8 as protobuf's parser requires of `string`
// fields.
bool ValidUtf8Slow(const char* p, const char* end);
inline bool ValidUtf8(const char* p, const char* end) {
  // ASCII (keywords, names, titles) without a call: 8 bytes at a time,
  // the last 8 overlapping the others.
  if (end - p >= 8) {
    uint64_t any = 0, word;
    for (const char* q = p; end - q > 8; q += 8) {
      std::memcpy(&word, q, 8);
      any |= word;
    }
    std::memcpy(&word, end - 8, 8);
    if (((any | word) & 0x8080808080808080ull) == 0) return true;
  } else {
    const char* q = p;
    while (q < end && static_cast<signed char>(*q) >= 0) ++q;
    if (q == end) return true;
  }
  return ValidUtf8Slow(p, end);
}

}  // namespace wire

// Reads and checks one serialized QueryResponse into a QueryBatch, and
// reads the nested collections of a checked one. One instance per
// Decode: it keeps the first error and where it was.
class WireDecoder {
 public:
  // `base`: the start of the message (for the offsets of errors);
  // `readable`: its end.
  WireDecoder(const char* base, const char* readable)
      : base_(base), readable_(readable) {}

  [[nodiscard]] bool Batch(const char* p, const char* end, QueryBatch* b);
  // The fields of one Value message in [p, end), read at `depth` (what is
  // left of protobuf's recursion budget there): its kind and scalar, or
  // the body of its nested message. With `check`, every nested message
  // met is checked, as protobuf parses each (also one a later field
  // replaces).
  [[nodiscard]] bool ValueFields(const char* p, const char* end, int depth,
                                 bool check, WireValue* v);

  // For bytes Decode checked: the next length-delimited field at or after
  // *next (its number and body), skipping others; false at the end.
  static bool NextLenField(const char** next, const char* end, uint32_t* field,
                           std::string_view* body);
  // For bytes Decode checked: a Value's fields.
  static void ShallowValue(std::string_view body, WireValue* v);

  // What was wrong, and its offset from `base`; null when nothing was.
  const char* error() const { return error_; }
  size_t error_offset() const {
    return base_ == nullptr ? 0 : static_cast<size_t>(error_at_ - base_);
  }

 private:
  bool Fail(const char* at, const char* what) {
    if (error_ == nullptr) {
      error_ = what;
      error_at_ = at;
    }
    return false;
  }
  // These return the position after what they read, or null with the
  // error recorded.
  const char* Tag(const char* p, const char* end, uint32_t* field,
                  uint32_t* type) {
    uint32_t tag;
    const char* q = wire::Varint32(p, end, &tag);
    if (__builtin_expect(q == nullptr, 0)) {
      Fail(p, "a field tag cut off or longer than 5 bytes");
      return nullptr;
    }
    *field = tag >> 3;
    *type = tag & 7;
    if (__builtin_expect(*field == 0 || *type > wire::kFixed32, 0)) {
      Fail(p, *field == 0 ? "a field numbered 0"
                          : "a field of an unknown wire type");
      return nullptr;
    }
    return q;
  }
  const char* Len(const char* p, const char* end, std::string_view* body) {
    uint32_t n;
    const char* q = wire::Varint32(p, end, &n);
    if (__builtin_expect(q == nullptr, 0)) {
      Fail(p, "a length cut off or longer than 5 bytes");
      return nullptr;
    }
    if (__builtin_expect(n > static_cast<size_t>(end - q), 0)) {
      Fail(p, "a length past the end of its message");
      return nullptr;
    }
    *body = std::string_view(q, n);
    return q + n;
  }
  // Skips a field of `type` in a message at `depth` (a group to its end).
  const char* Skip(const char* p, const char* end, uint32_t field,
                   uint32_t type, int depth);
  bool Utf8(std::string_view s) {
    return wire::ValidUtf8(s.data(), s.data() + s.size()) ||
           Fail(s.data(), "a string field that is not UTF-8");
  }
  // The nested message of `kind` whose body is `body`, at `depth`.
  bool CheckNested(uint32_t kind, std::string_view body, int depth);
  bool Row(const char* p, const char* end, QueryBatch* b);
  // The usual Value, [p, end) holding one scalar field in its shortest
  // form (an integer, a string or a keyword): true with *v read; false
  // for anything else, which ValueFields then reads.
  bool OneScalar(const char* p, const char* end, WireValue* v);
  // A Value's body, nested messages checked: the value at `depth`.
  bool Value(std::string_view body, int depth, WireValue* v);
  // Walks the fields of a message body read at `depth` (what is left of
  // the recursion budget for it): a length-delimited field `wants`
  // accepts goes to `take(at, field, part)` (`at`: its tag), any other is
  // skipped as protobuf skips it. False at the first error.
  template <typename Wants, typename Take>
  bool Fields(std::string_view body, int depth, Wants wants, Take take);
  bool List(std::string_view body, int depth);
  bool Map(std::string_view body, int depth);
  bool MapEntry(std::string_view body, int depth);
  bool Tagged(std::string_view body, int depth);

  const char* base_;
  const char* readable_;
  const char* error_ = nullptr;
  const char* error_at_ = nullptr;
};

}  // namespace mentat::client

#endif  // MENTAT_CLIENT_WIRE_DECODER_H_
