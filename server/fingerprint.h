#ifndef MENTAT_SERVER_FINGERPRINT_H_
#define MENTAT_SERVER_FINGERPRINT_H_

#include <cstdint>
#include <string_view>

#include "mentat/edn/edn_value.h"

namespace mentat::server {

// A 64-bit hash that is the same in every process and on every run (unlike
// absl::Hash), for resume tokens: a token made by one server process must
// check out in the next. Not cryptographic.
class Fingerprint {
 public:
  Fingerprint() = default;
  explicit Fingerprint(uint64_t state) : h_(state) {}

  void Add(uint64_t v) {
    h_ ^= v + 0x9e3779b97f4a7c15ULL + (h_ << 6) + (h_ >> 2);
    h_ *= 0xff51afd7ed558ccdULL;
    h_ ^= h_ >> 33;
  }
  void Add(std::string_view bytes);
  // An EDN value, structurally (kind and payload, recursively).
  void Add(const edn::EdnValue& v);

  uint64_t value() const { return h_; }

 private:
  uint64_t h_ = 0x6a09e667f3bcc908ULL;
};

// A Fingerprint of a byte stream that does not depend on how the stream
// is cut: Append("ab") then Append("c") is Append("abc"). A query's rows
// digest: a message's encoded rows are appended at once (a few
// instructions per 8 bytes), a resumed request's skipped rows one by one.
class StreamFingerprint {
 public:
  void Append(std::string_view bytes);
  // Of the bytes appended so far (appending more goes on from there).
  uint64_t value() const;

 private:
  Fingerprint words_;
  uint64_t carry_ = 0;  // the bytes after the last whole word, little-endian
  size_t carry_bytes_ = 0;
  uint64_t length_ = 0;
};

}  // namespace mentat::server

#endif  // MENTAT_SERVER_FINGERPRINT_H_
