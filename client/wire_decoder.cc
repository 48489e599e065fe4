#include "wire_decoder.h"

#include <cstring>

namespace mentat::client {

namespace wire {

const char* VarintSlow(const char* p, const char* end, const char* readable,
                       uint64_t* out) {
  if (readable - p >= 8) {
    uint64_t x;
    const int n = VarintIn8(p, &x);
    if (n > 0) {
      if (n > end - p) return nullptr;  // cut off
      *out = x;
      return p + n;
    }
  }
  uint64_t v = 0;
  for (int shift = 0; shift < 70 && p < end; shift += 7) {
    const uint64_t byte = static_cast<unsigned char>(*p++);
    v |= (byte & 0x7F) << shift;
    if (byte < 0x80) {
      *out = v;
      return p;
    }
  }
  return nullptr;
}

const char* Varint32Slow(const char* p, const char* end, uint32_t* out) {
  uint64_t v = 0;
  for (int shift = 0; shift < 35 && p < end; shift += 7) {
    const uint64_t byte = static_cast<unsigned char>(*p++);
    v |= (byte & 0x7F) << shift;
    if (byte < 0x80) {
      *out = static_cast<uint32_t>(v);
      return p;
    }
  }
  return nullptr;
}

// No overlong forms, no surrogates, nothing past U+10FFFF. ASCII, most of
// what mentatd sends, goes 8 bytes at a time.
bool ValidUtf8Slow(const char* begin, const char* stop) {
  const auto* p = reinterpret_cast<const unsigned char*>(begin);
  const auto* end = reinterpret_cast<const unsigned char*>(stop);
  while (end - p >= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    if ((word & 0x8080808080808080ull) != 0) break;
    p += 8;
  }
  while (p < end) {
    const unsigned char c = *p;
    if (c < 0x80) {
      ++p;
      continue;
    }
    int n;
    unsigned char lo = 0x80, hi = 0xBF;  // bounds of the second byte
    if (c >= 0xC2 && c <= 0xDF) {
      n = 1;
    } else if (c >= 0xE0 && c <= 0xEF) {
      n = 2;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      n = 3;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    } else {
      return false;
    }
    if (end - p <= n) return false;
    if (p[1] < lo || p[1] > hi) return false;
    for (int i = 2; i <= n; ++i) {
      if (p[i] < 0x80 || p[i] > 0xBF) return false;
    }
    p += n + 1;
  }
  return true;
}

}  // namespace wire

using wire::kEndGroup;
using wire::kFixed32;
using wire::kFixed64;
using wire::kLen;
using wire::kStartGroup;
using wire::kVarint;

const char* WireDecoder::Skip(const char* p, const char* end, uint32_t field,
                              uint32_t type, int depth) {
  switch (type) {
    case kVarint: {
      uint64_t ignored;
      const char* q = wire::Varint(p, end, readable_, &ignored);
      if (q == nullptr) Fail(p, "a varint cut off or longer than 10 bytes");
      return q;
    }
    case kFixed64:
    case kFixed32: {
      const size_t n = type == kFixed64 ? 8 : 4;
      if (static_cast<size_t>(end - p) < n) {
        Fail(p, "a fixed-size field cut off");
        return nullptr;
      }
      return p + n;
    }
    case kLen: {
      std::string_view ignored;
      return Len(p, end, &ignored);
    }
    case kStartGroup: {
      // protobuf counts a group as a level, like a message.
      if (depth - 1 < 0) {
        Fail(p, "groups nested over 100 deep");
        return nullptr;
      }
      while (true) {
        if (p == end) {
          Fail(p, "a group without its end");
          return nullptr;
        }
        const char* at = p;
        uint32_t f, t;
        if ((p = Tag(p, end, &f, &t)) == nullptr) return nullptr;
        if (t == kEndGroup) {
          if (f == field) return p;
          Fail(at, "a group ended by another's end");
          return nullptr;
        }
        if ((p = Skip(p, end, f, t, depth - 1)) == nullptr) return nullptr;
      }
    }
    default:  // kEndGroup outside its group
      Fail(p, "the end of a group that was not started");
      return nullptr;
  }
}

bool WireDecoder::ValueFields(const char* p, const char* end, int depth,
                              bool check, WireValue* v) {
  using Kind = WireValue::Kind;
  *v = WireValue();
  while (p < end) {
    const char* at = p;
    uint32_t field, type;
    if ((p = Tag(p, end, &field, &type)) == nullptr) return false;
    switch (field) {
      case Kind::kNil:
      case Kind::kLongValue:
      case Kind::kRef:
      case Kind::kBoolean:
      case Kind::kInstantMicros:
      case Kind::kCharValue: {
        if (type != kVarint) break;
        uint64_t x;
        const char* q = wire::Varint(p, end, readable_, &x);
        if (q == nullptr) return Fail(p, "a varint cut off or too long");
        p = q;
        v->kind_ = static_cast<uint8_t>(field);
        if (field == Kind::kNil || field == Kind::kBoolean) {
          v->number_ = x != 0;
        } else if (field == Kind::kCharValue) {
          v->number_ = static_cast<uint32_t>(x);
        } else {
          v->number_ = static_cast<int64_t>(x);
        }
        continue;
      }
      case Kind::kDoubleValue:
        if (type != kFixed64) break;
        if (end - p < 8) return Fail(p, "a double cut off");
        std::memcpy(&v->double_, p, 8);
        p += 8;
        v->kind_ = static_cast<uint8_t>(field);
        continue;
      case Kind::kStringValue:
      case Kind::kKeyword:
      case Kind::kBigint:
      case Kind::kBigdec:
      case Kind::kSymbol:
      case Kind::kUri:
      case Kind::kUuid:
      case Kind::kBytesValue:
      case Kind::kList:
      case Kind::kSet:
      case Kind::kMap:
      case Kind::kTagged:
      case Kind::kTuple: {
        if (type != kLen) break;
        std::string_view body;
        if ((p = Len(p, end, &body)) == nullptr) return false;
        const bool message = field == Kind::kList || field == Kind::kSet ||
                             field == Kind::kMap || field == Kind::kTagged ||
                             field == Kind::kTuple;
        if (message && v->kind_ == field) {
          return Fail(at, "a Value whose collection is given twice");
        }
        const bool bytes = field == Kind::kUuid || field == Kind::kBytesValue;
        if (!message && !bytes && !Utf8(body)) return false;
        if (message && check && !CheckNested(field, body, depth - 1)) {
          return false;
        }
        v->kind_ = static_cast<uint8_t>(field);
        v->data_ = body.data();
        v->size_ = static_cast<uint32_t>(body.size());
        v->number_ = 0;
        continue;
      }
      default:
        break;
    }
    // An unknown field, or a known one of another wire type (protobuf
    // keeps both as unknown fields).
    if ((p = Skip(p, end, field, type, depth)) == nullptr) return false;
  }
  return true;
}

bool WireDecoder::CheckNested(uint32_t kind, std::string_view body, int depth) {
  using Kind = WireValue::Kind;
  switch (kind) {
    case Kind::kList:
    case Kind::kSet:
    case Kind::kTuple:
      return List(body, depth);
    case Kind::kMap:
      return Map(body, depth);
    case Kind::kTagged:
      return Tagged(body, depth);
    default:
      return true;
  }
}

bool WireDecoder::Value(std::string_view body, int depth, WireValue* v) {
  if (depth < 0) return Fail(body.data(), "values nested over 100 deep");
  return ValueFields(body.data(), body.data() + body.size(), depth,
                     /*check=*/true, v);
}

template <typename Wants, typename Take>
bool WireDecoder::Fields(std::string_view body, int depth, Wants wants,
                         Take take) {
  if (depth < 0) return Fail(body.data(), "values nested over 100 deep");
  const char* p = body.data();
  const char* end = p + body.size();
  while (p < end) {
    const char* at = p;
    uint32_t field, type;
    if ((p = Tag(p, end, &field, &type)) == nullptr) return false;
    if (type == kLen && wants(field)) {
      std::string_view part;
      if ((p = Len(p, end, &part)) == nullptr || !take(at, field, part)) {
        return false;
      }
    } else if ((p = Skip(p, end, field, type, depth)) == nullptr) {
      return false;
    }
  }
  return true;
}

bool WireDecoder::List(std::string_view body, int depth) {
  return Fields(
      body, depth, [](uint32_t field) { return field == 1; },
      [&](const char*, uint32_t, std::string_view element) {
        WireValue v;
        return Value(element, depth - 1, &v);
      });
}

bool WireDecoder::Map(std::string_view body, int depth) {
  return Fields(
      body, depth, [](uint32_t field) { return field == 1; },
      [&](const char*, uint32_t, std::string_view entry) {
        return MapEntry(entry, depth - 1);
      });
}

bool WireDecoder::MapEntry(std::string_view body, int depth) {
  bool seen[3] = {false, false, false};
  return Fields(
      body, depth, [](uint32_t field) { return field == 1 || field == 2; },
      [&](const char* at, uint32_t field, std::string_view part) {
        if (seen[field]) return Fail(at, "a map entry's key or value twice");
        seen[field] = true;
        WireValue v;
        return Value(part, depth - 1, &v);
      });
}

bool WireDecoder::Tagged(std::string_view body, int depth) {
  bool value_seen = false;
  return Fields(
      body, depth, [](uint32_t field) { return field == 1 || field == 2; },
      [&](const char* at, uint32_t field, std::string_view part) {
        if (field == 1) return Utf8(part);
        if (value_seen) return Fail(at, "a tagged value's value twice");
        value_seen = true;
        WireValue v;
        return Value(part, depth - 1, &v);
      });
}

// Inlined: a call per value costs as much as reading it.
__attribute__((always_inline)) inline bool WireDecoder::OneScalar(
    const char* p, const char* end, WireValue* v) {
  using Kind = WireValue::Kind;
  constexpr uint32_t kIntegers =
      1u << Kind::kLongValue | 1u << Kind::kRef | 1u << Kind::kInstantMicros;
  constexpr uint32_t kStrings = 1u << Kind::kStringValue | 1u << Kind::kKeyword;
  if (end - p < 2) return false;
  const uint32_t tag = static_cast<unsigned char>(p[0]);
  const uint32_t field = tag >> 3;  // under 16: the tag is one byte
  if ((tag & 7) == kVarint && (kIntegers >> field & 1) != 0) {
    uint64_t x;
    // Entity ids take 7 bytes: read 8 at once where they may be loaded.
    const char* q = readable_ - (p + 1) >= 8
                        ? p + 1 + wire::VarintIn8(p + 1, &x)
                        : wire::Varint(p + 1, end, readable_, &x);
    if (q != end) return false;
    v->kind_ = static_cast<uint8_t>(field);
    v->number_ = static_cast<int64_t>(x);
    return true;
  }
  if ((tag & 7) == kLen && (kStrings >> field & 1) != 0 &&
      static_cast<unsigned char>(p[1]) == end - p - 2) {
    if (!Utf8(std::string_view(p + 2, end - p - 2))) return false;
    v->kind_ = static_cast<uint8_t>(field);
    v->data_ = p + 2;
    v->size_ = static_cast<uint32_t>(end - p - 2);
    return true;
  }
  return false;
}

// Inlined into Batch, its one caller: a call per row is a tenth of a row's
// cost.
__attribute__((always_inline)) inline bool WireDecoder::Row(const char* p,
                                                            const char* end,
                                                            QueryBatch* b) {
  // The Row's body is 1 level below the QueryResponse, its Values' 2.
  constexpr int kRowDepth = wire::kDepthLimit - 1;
  while (p < end) {
    // The usual value: field 1, under 128 bytes, one scalar.
    if (p[0] == 0x0A && end - p >= 2 && static_cast<signed char>(p[1]) >= 0 &&
        static_cast<unsigned char>(p[1]) <= end - p - 2) {
      const char* body = p + 2;
      p = body + static_cast<unsigned char>(p[1]);
      WireValue* v = b->AddValue();
      if (OneScalar(body, p, v)) continue;
      if (error_ != nullptr ||
          !ValueFields(body, p, kRowDepth - 1, /*check=*/true, v)) {
        return false;
      }
      continue;
    }
    uint32_t field, type;
    if ((p = Tag(p, end, &field, &type)) == nullptr) return false;
    if (field == 1 && type == kLen) {
      std::string_view body;
      if ((p = Len(p, end, &body)) == nullptr) return false;
      WireValue* v = b->AddValue();
      if (!ValueFields(body.data(), body.data() + body.size(), kRowDepth - 1,
                       /*check=*/true, v)) {
        return false;
      }
    } else if ((p = Skip(p, end, field, type, kRowDepth)) == nullptr) {
      return false;
    }
  }
  return true;
}

bool WireDecoder::Batch(const char* p, const char* end, QueryBatch* b) {
  while (p < end) {
    // The usual row: field 4, under 128 bytes.
    if (p[0] == 0x22 && end - p >= 2 && static_cast<signed char>(p[1]) >= 0 &&
        static_cast<unsigned char>(p[1]) <= end - p - 2) {
      const char* body = p + 2;
      p = body + static_cast<unsigned char>(p[1]);
      if (!Row(body, p, b)) return false;
      b->EndRow();
      continue;
    }
    uint32_t field, type;
    if ((p = Tag(p, end, &field, &type)) == nullptr) return false;
    std::string_view body;
    if (field == 4 && type == kLen) {  // rows, the most of any message
      if ((p = Len(p, end, &body)) == nullptr ||
          !Row(body.data(), body.data() + body.size(), b)) {
        return false;
      }
      b->EndRow();
      continue;
    }
    uint64_t x;
    switch (field) {
      case 1:  // columns
        if (type != kLen) break;
        if ((p = Len(p, end, &body)) == nullptr || !Utf8(body)) return false;
        b->columns_.push_back(body);
        continue;
      case 5:  // resume_token
        if (type != kLen) break;
        if ((p = Len(p, end, &body)) == nullptr) return false;
        b->resume_token_ = body;
        continue;
      case 2:    // find_kind
      case 3:    // basis_tx
      case 6:    // rows_so_far
      case 7: {  // more
        if (type != kVarint) break;
        const char* q = wire::Varint(p, end, readable_, &x);
        if (q == nullptr) return Fail(p, "a varint cut off or too long");
        p = q;
        if (field == 2) {
          b->find_kind_ = static_cast<v1::FindKind>(static_cast<int32_t>(x));
        } else if (field == 3) {
          b->basis_tx_ = static_cast<int64_t>(x);
        } else if (field == 6) {
          b->rows_so_far_ = static_cast<int64_t>(x);
        } else {
          b->more_ = x != 0;
        }
        continue;
      }
      default:
        break;
    }
    if ((p = Skip(p, end, field, type, wire::kDepthLimit)) == nullptr) {
      return false;
    }
  }
  return true;
}

bool WireDecoder::NextLenField(const char** next, const char* end,
                               uint32_t* field, std::string_view* body) {
  const char* p = *next;
  // The usual field: a one-byte tag and a one-byte length.
  if (end - p >= 2 && (p[0] & 0x87) == kLen &&
      static_cast<signed char>(p[1]) >= 0 &&
      static_cast<unsigned char>(p[1]) <= end - p - 2) {
    *field = static_cast<unsigned char>(p[0]) >> 3;
    *body = std::string_view(p + 2, static_cast<unsigned char>(p[1]));
    *next = p + 2 + body->size();
    return *field != 0;
  }
  WireDecoder d(nullptr, end);
  while (p != nullptr && p < end) {
    uint32_t type;
    if ((p = d.Tag(p, end, field, &type)) == nullptr) break;
    if (type == kLen) {
      p = d.Len(p, end, body);
      *next = p == nullptr ? end : p;
      return p != nullptr;
    }
    p = d.Skip(p, end, *field, type, wire::kDepthLimit);
  }
  *next = end;
  return false;
}

void WireDecoder::ShallowValue(std::string_view body, WireValue* v) {
  // Checked when the batch was decoded: this cannot fail.
  WireDecoder d(nullptr, body.data() + body.size());
  *v = WireValue();
  if (d.OneScalar(body.data(), body.data() + body.size(), v)) return;
  (void)d.ValueFields(body.data(), body.data() + body.size(), wire::kDepthLimit,
                      /*check=*/false, v);
}

}  // namespace mentat::client
