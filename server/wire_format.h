#ifndef MENTAT_SERVER_WIRE_FORMAT_H_
#define MENTAT_SERVER_WIRE_FORMAT_H_

// Protobuf's wire format, for the encoders that write mentat.proto's
// messages as bytes (wire_encoding.h, query_response_encoder.h) instead of
// building message objects. Field numbers are mentat.proto's. Writers
// write into bytes already sized (a cell then costs a few stores instead of
// a string append per field); appenders grow a string through them.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace mentat::server::wire {

// Wire types.
constexpr uint32_t kVarint = 0;
constexpr uint32_t kFixed64 = 1;
constexpr uint32_t kLen = 2;

// mentat.v1.Value's fields.
enum ValueField : uint32_t {
  kNil = 1,
  kLong = 2,
  kDouble = 4,
  kString = 5,
  kKeyword = 6,
  kBoolean = 7,
  kInstant = 8,
  kUuid = 9,
  kBigint = 10,
  kBigdec = 11,
  kBytes = 12,
  kSymbol = 13,
  kChar = 14,
  kList = 15,
  kSet = 16,
  kMap = 17,
  kTagged = 18,
  kUri = 19,
};

// One byte per 7 bits of the highest set bit: no loop (an entity id takes
// 6 to 9 bytes, and every cell of a row is sized).
inline size_t VarintSize(uint64_t v) {
  return static_cast<size_t>(63 - __builtin_clzll(v | 1)) / 7 + 1;
}

inline char* WriteVarint(uint64_t v, char* p) {
  while (v >= 0x80) {
    *p++ = static_cast<char>((v & 0x7F) | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<char>(v);
  return p;
}

// A double as protobuf's fixed64: its bits, little-endian.
inline char* WriteDouble(double d, char* p) {
  uint64_t bits;
  std::memcpy(&bits, &d, sizeof bits);
  for (int i = 0; i < 8; ++i) *p++ = static_cast<char>(bits >> (8 * i));
  return p;
}

// Grows `out` by the varint's exact size and writes into it, rather than
// copying from a stack buffer: GCC 12 with the server's precompiled header
// cannot bound WriteVarint's loop and refuses the copy (-Warray-bounds).
inline void AppendVarint(uint64_t v, std::string* out) {
  const size_t at = out->size();
  out->resize(at + VarintSize(v));
  WriteVarint(v, out->data() + at);
}

inline size_t TagSize(uint32_t field) { return field < 16 ? 1 : 2; }

inline void AppendTag(uint32_t field, uint32_t wire_type, std::string* out) {
  AppendVarint((field << 3) | wire_type, out);
}

// A length-delimited field of `len` bytes: its tag, length and bytes.
inline size_t LenFieldSize(uint32_t field, size_t len) {
  return TagSize(field) + VarintSize(len) + len;
}

inline void AppendBytesField(uint32_t field, std::string_view bytes,
                             std::string* out) {
  AppendTag(field, kLen, out);
  AppendVarint(bytes.size(), out);
  out->append(bytes);
}

// A length-delimited field's tag and length.
inline char* WriteLenHeader(uint32_t field, size_t len, char* p) {
  p = WriteVarint((field << 3) | kLen, p);
  return WriteVarint(len, p);
}

inline char* WriteBytesField(uint32_t field, std::string_view bytes, char* p) {
  p = WriteLenHeader(field, bytes.size(), p);
  std::memcpy(p, bytes.data(), bytes.size());
  return p + bytes.size();
}

// mentat.v1.QueryResponse's fields.
enum QueryResponseField : uint32_t {
  kColumns = 1,
  kFindKind = 2,
  kBasisTx = 3,
  kRows = 4,
  kResumeToken = 5,
  kRowsSoFar = 6,
  kMore = 7,
};

}  // namespace mentat::server::wire

#endif  // MENTAT_SERVER_WIRE_FORMAT_H_
