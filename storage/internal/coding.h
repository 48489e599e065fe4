#ifndef MENTAT_STORAGE_INTERNAL_CODING_H_
#define MENTAT_STORAGE_INTERNAL_CODING_H_

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace mentat::storage::internal {

// Fixed-width big-endian integers: they sort bytewise in numeric order
// (for unsigned values), which is why keys use them. One load and a byte
// swap: GCC does not turn a loop over the bytes into that, and keys are
// decoded millions of times a query.
inline uint64_t LoadBigEndian64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
  if constexpr (std::endian::native == std::endian::little) {
    v = __builtin_bswap64(v);
  }
  return v;
}

inline void StoreBigEndian64(uint64_t v, char* p) {
  if constexpr (std::endian::native == std::endian::little) {
    v = __builtin_bswap64(v);
  }
  std::memcpy(p, &v, sizeof v);
}

inline void PutFixed64BE(uint64_t v, std::string* out) {
  char buf[8];
  StoreBigEndian64(v, buf);
  out->append(buf, 8);
}

// Requires in.size() >= 8.
inline uint64_t DecodeFixed64BE(std::string_view in) {
  return LoadBigEndian64(in.data());
}

inline std::string Fixed64BE(uint64_t v) {
  std::string s;
  PutFixed64BE(v, &s);
  return s;
}

inline void PutVarint64(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

// Reads a varint from the front of *in; false if truncated or too long.
inline bool GetVarint64(std::string_view* in, uint64_t* v) {
  uint64_t result = 0;
  for (int shift = 0; shift <= 63 && !in->empty(); shift += 7) {
    uint8_t byte = static_cast<uint8_t>((*in)[0]);
    in->remove_prefix(1);
    result |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      *v = result;
      return true;
    }
  }
  return false;
}

}  // namespace mentat::storage::internal

#endif  // MENTAT_STORAGE_INTERNAL_CODING_H_
