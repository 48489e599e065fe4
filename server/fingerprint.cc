#include "fingerprint.h"

#include <cstring>

namespace mentat::server {

void Fingerprint::Add(std::string_view bytes) {
  Add(bytes.size());
  size_t i = 0;
  for (; i + 8 <= bytes.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, bytes.data() + i, 8);
    Add(w);
  }
  uint64_t tail = 0;
  for (size_t j = 0; i < bytes.size(); ++i, ++j) {
    tail |= static_cast<uint64_t>(static_cast<uint8_t>(bytes[i])) << (8 * j);
  }
  Add(tail);
}

void Fingerprint::Add(const edn::EdnValue& v) {
  using edn::EdnKind;
  Add(static_cast<uint64_t>(v.kind()) + 0x100);
  switch (v.kind()) {
    case EdnKind::kNil:
      return;
    case EdnKind::kBool:
      Add(v.as_bool() ? 1 : 0);
      return;
    case EdnKind::kInt:
      Add(static_cast<uint64_t>(v.as_int()));
      return;
    case EdnKind::kFloat: {
      const double d = v.as_double();
      uint64_t bits;
      std::memcpy(&bits, &d, 8);
      Add(bits);
      return;
    }
    case EdnKind::kChar:
      Add(v.as_char());
      return;
    case EdnKind::kInst:
      Add(static_cast<uint64_t>(v.as_inst_micros()));
      return;
    case EdnKind::kBigInt:
    case EdnKind::kBigDec:
    case EdnKind::kString:
    case EdnKind::kKeyword:
    case EdnKind::kSymbol:
    case EdnKind::kUuid:
      Add(v.text());
      return;
    case EdnKind::kList:
    case EdnKind::kVector:
    case EdnKind::kMap:
    case EdnKind::kSet:
      Add(v.items().size());
      for (const edn::EdnValue& item : v.items()) Add(item);
      return;
    case EdnKind::kTagged:
      Add(v.text());
      Add(v.tagged_value());
      return;
  }
}

void StreamFingerprint::Append(std::string_view bytes) {
  length_ += bytes.size();
  size_t i = 0;
  // Complete the word a previous piece began.
  for (; carry_bytes_ != 0 && i < bytes.size(); ++i) {
    carry_ |= static_cast<uint64_t>(static_cast<uint8_t>(bytes[i]))
              << (8 * carry_bytes_);
    if (++carry_bytes_ == 8) {
      words_.Add(carry_);
      carry_ = 0;
      carry_bytes_ = 0;
    }
  }
  for (; i + 8 <= bytes.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, bytes.data() + i, 8);
    words_.Add(w);
  }
  for (; i < bytes.size(); ++i) {
    carry_ |= static_cast<uint64_t>(static_cast<uint8_t>(bytes[i]))
              << (8 * carry_bytes_++);
  }
}

uint64_t StreamFingerprint::value() const {
  Fingerprint f = words_;
  f.Add(carry_);
  f.Add(length_);
  return f.value();
}

}  // namespace mentat::server
