// The order-preserving byte encoding of values (see value_codec.h).
//
// Big numbers (kBigInt and kBigDec share one body layout):
//
//   A nonzero number is written as  sign * 0.d1 d2 ... dn * 10^E  with
//   d1 != 0 and dn != 0 (the significant digits, no leading or trailing
//   zeros). The body is
//
//     class     1 byte: 0x01 negative, 0x02 zero, 0x03 positive
//     exponent  4 bytes: E as int32 big-endian with the sign bit flipped
//     digits    the digits two per byte, the last pair padded with a zero
//               digit; pair p (0..99) is written as 2p+1 when more pairs
//               follow and as 2p for the last pair, so the end of the
//               digits is the first even byte
//
//   Zero is the class byte alone. For negatives every byte after the class
//   is inverted (b -> 255 - b), so larger magnitudes sort first.
//
//   Why it sorts: within a class and exponent, the digit strings compare
//   as decimal fractions. At the first pair that differs, the smaller pair
//   gives the smaller byte whatever its parity (2p+1 < 2q when p < q). If
//   one digit string ends where the other goes on with the same pair, the
//   ending one has 2p < 2p+1, and it is the smaller number because the
//   longer one has a nonzero tail. No encoding is a prefix of another, so
//   inverting the bytes exactly reverses the order, and any bytes that
//   follow an encoded value (the e of an AVET key) never change the
//   comparison of two different values.
//
//   |E| is limited to kMaxDecimalExponent: the canonical text of a value is
//   written without an exponent, so "1e999999999" would otherwise expand to
//   a gigabyte of zeros.

#include "mentat/storage/value_codec.h"

#include <cstring>
#include <limits>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "internal/coding.h"
#include "mentat/base/excerpt.h"

namespace mentat::storage {
namespace {

constexpr int64_t kMaxDecimalExponent = 1 << 16;

constexpr uint8_t kBigNegative = 0x01;
constexpr uint8_t kBigZero = 0x02;
constexpr uint8_t kBigPositive = 0x03;

constexpr uint64_t kSignBit = uint64_t{1} << 63;
constexpr uint64_t kCanonicalNaNBits = 0x7FF8000000000000ULL;

uint64_t DoubleKeyBits(double d) {
  uint64_t bits;
  if (d != d) {
    bits = kCanonicalNaNBits;
  } else if (d == 0) {
    bits = 0;  // -0.0 folds into +0.0
  } else {
    std::memcpy(&bits, &d, sizeof bits);
  }
  return (bits & kSignBit) ? ~bits : (bits | kSignBit);
}

[[nodiscard]] absl::Status Corrupt(absl::string_view what) {
  return absl::DataLossError(absl::StrCat("malformed encoded value: ", what));
}

// A nonzero decimal as significant digits and exponent: sign * 0.digits *
// 10^exponent, with no leading or trailing zero in `digits`.
struct DecimalParts {
  bool negative = false;
  std::string digits;  // empty for zero
  int64_t exponent = 0;
};

// Splits canonical text ("-12.5", "0.003", "1000") into parts. Characters
// other than a leading '-', one '.' and digits cannot occur in canonical
// text; they are skipped so that a contract violation stays memory-safe.
DecimalParts SplitCanonical(std::string_view text) {
  DecimalParts p;
  size_t i = 0;
  if (i < text.size() && text[i] == '-') {
    p.negative = true;
    ++i;
  }
  int64_t int_digits = 0;  // digits before the point, after leading zeros
  int64_t leading_frac_zeros = 0;
  bool seen_point = false;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (c == '.') {
      seen_point = true;
      continue;
    }
    if (c < '0' || c > '9') continue;
    if (p.digits.empty() && c == '0') {
      if (seen_point) ++leading_frac_zeros;
      continue;
    }
    p.digits.push_back(c);
    if (!seen_point) ++int_digits;
  }
  while (!p.digits.empty() && p.digits.back() == '0') p.digits.pop_back();
  if (p.digits.empty()) {
    p.negative = false;
    return p;
  }
  p.exponent = int_digits > 0 ? int_digits : -leading_frac_zeros;
  return p;
}

void EncodeDecimal(const DecimalParts& p, std::string* out) {
  if (p.digits.empty()) {
    out->push_back(static_cast<char>(kBigZero));
    return;
  }
  const uint8_t flip = p.negative ? 0xFF : 0x00;
  out->push_back(static_cast<char>(p.negative ? kBigNegative : kBigPositive));
  uint32_t e =
      static_cast<uint32_t>(static_cast<int32_t>(p.exponent)) ^ 0x80000000u;
  for (int shift = 24; shift >= 0; shift -= 8) {
    out->push_back(static_cast<char>(((e >> shift) & 0xFF) ^ flip));
  }
  const size_t n = p.digits.size();
  for (size_t i = 0; i < n; i += 2) {
    int hi = p.digits[i] - '0';
    int lo = i + 1 < n ? p.digits[i + 1] - '0' : 0;
    int pair = hi * 10 + lo;
    bool last = i + 2 >= n;
    uint8_t b = static_cast<uint8_t>(last ? 2 * pair : 2 * pair + 1);
    out->push_back(static_cast<char>(b ^ flip));
  }
}

[[nodiscard]] absl::Status DecodeDecimal(std::string_view* in,
                                         DecimalParts* p) {
  if (in->empty()) return Corrupt("truncated big number");
  uint8_t cls = static_cast<uint8_t>((*in)[0]);
  in->remove_prefix(1);
  *p = DecimalParts();
  if (cls == kBigZero) return absl::OkStatus();
  if (cls != kBigNegative && cls != kBigPositive) {
    return Corrupt(absl::StrCat("bad big number sign byte ", cls));
  }
  p->negative = cls == kBigNegative;
  const uint8_t flip = p->negative ? 0xFF : 0x00;
  if (in->size() < 4) return Corrupt("truncated big number exponent");
  uint32_t e = 0;
  for (int i = 0; i < 4; ++i) {
    e = (e << 8) | (static_cast<uint8_t>((*in)[i]) ^ flip);
  }
  in->remove_prefix(4);
  p->exponent = static_cast<int32_t>(e ^ 0x80000000u);
  if (p->exponent > kMaxDecimalExponent || p->exponent < -kMaxDecimalExponent) {
    return Corrupt(
        absl::StrCat("big number exponent out of range: ", p->exponent));
  }
  while (true) {
    if (in->empty()) return Corrupt("truncated big number digits");
    uint8_t b = static_cast<uint8_t>((*in)[0]) ^ flip;
    in->remove_prefix(1);
    if (b > 199) return Corrupt(absl::StrCat("bad big number digit byte ", b));
    int pair = b / 2;
    bool last = (b & 1) == 0;
    if (p->digits.empty() && pair < 10) {
      return Corrupt("big number digits with a leading zero");
    }
    p->digits.push_back(static_cast<char>('0' + pair / 10));
    p->digits.push_back(static_cast<char>('0' + pair % 10));
    if (last) {
      if (pair == 0) return Corrupt("big number digits with a trailing zero");
      if (p->digits.back() == '0') p->digits.pop_back();
      return absl::OkStatus();
    }
  }
}

// Canonical text of a decimal (see value.h): no exponent, no trailing
// fraction zeros, "0." before a pure fraction.
std::string DecimalText(const DecimalParts& p) {
  if (p.digits.empty()) return "0";
  std::string s;
  if (p.negative) s.push_back('-');
  const int64_t n = static_cast<int64_t>(p.digits.size());
  if (p.exponent >= n) {
    s.append(p.digits);
    s.append(static_cast<size_t>(p.exponent - n), '0');
  } else if (p.exponent > 0) {
    s.append(p.digits, 0, static_cast<size_t>(p.exponent));
    s.push_back('.');
    s.append(p.digits, static_cast<size_t>(p.exponent));
  } else {
    s.append("0.");
    s.append(static_cast<size_t>(-p.exponent), '0');
    s.append(p.digits);
  }
  return s;
}

// Decodes an escaped text body into `text`, or (null) only checks it.
[[nodiscard]] absl::Status DecodeText(std::string_view* in, std::string* text) {
  if (text != nullptr) text->clear();
  size_t i = 0;
  while (true) {
    size_t z = in->find('\0', i);
    if (z == std::string_view::npos || z + 1 >= in->size()) {
      return Corrupt("truncated string (no terminator)");
    }
    if (text != nullptr) text->append(in->data() + i, z - i);
    uint8_t next = static_cast<uint8_t>((*in)[z + 1]);
    if (next == 0x01) {
      in->remove_prefix(z + 2);
      return absl::OkStatus();
    }
    if (next != 0xFF) {
      return Corrupt(absl::StrCat("bad string escape 0x00 0x",
                                  absl::Hex(next, absl::kZeroPad2)));
    }
    if (text != nullptr) text->push_back('\0');
    i = z + 2;
  }
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

[[nodiscard]] absl::Status BadNumber(absl::string_view kind,
                                     std::string_view text,
                                     absl::string_view why) {
  const std::string_view shown = ExcerptPrefix(text);
  const std::string marker = ExcerptMarker(text);
  return absl::InvalidArgumentError(absl::StrCat(
      "invalid ", kind, " \"",
      absl::CHexEscape(absl::string_view(shown.data(), shown.size())), "\"",
      absl::string_view(marker.data(), marker.size()), ": ", why));
}

// Parses [+-]digits[.digits][(e|E)[+-]digits][suffix] into parts. Without
// `allow_fraction` only [+-]digits[suffix] is accepted.
[[nodiscard]] absl::Status ParseDecimal(std::string_view text,
                                        bool allow_fraction, char suffix,
                                        absl::string_view kind,
                                        DecimalParts* out) {
  std::string_view s = text;
  if (!s.empty() && s.back() == suffix) s.remove_suffix(1);
  DecimalParts p;
  size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) {
    p.negative = s[i] == '-';
    ++i;
  }
  std::string digits;
  int64_t frac_len = 0;
  size_t mantissa_digits = 0;
  for (; i < s.size() && IsDigit(s[i]); ++i) {
    ++mantissa_digits;
    if (digits.empty() && s[i] == '0') continue;
    digits.push_back(s[i]);
  }
  if (allow_fraction && i < s.size() && s[i] == '.') {
    ++i;
    for (; i < s.size() && IsDigit(s[i]); ++i) {
      ++mantissa_digits;
      ++frac_len;
      if (digits.empty() && s[i] == '0') continue;
      digits.push_back(s[i]);
    }
  }
  if (mantissa_digits == 0) return BadNumber(kind, text, "no digits");
  int64_t exp10 = 0;
  if (allow_fraction && i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    bool exp_negative = false;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) {
      exp_negative = s[i] == '-';
      ++i;
    }
    if (i >= s.size() || !IsDigit(s[i])) {
      return BadNumber(kind, text, "no digits in the exponent");
    }
    for (; i < s.size() && IsDigit(s[i]); ++i) {
      // Saturate: anything this large fails the range check below.
      if (exp10 < (int64_t{1} << 40)) exp10 = exp10 * 10 + (s[i] - '0');
    }
    if (exp_negative) exp10 = -exp10;
  }
  if (i != s.size()) {
    return BadNumber(kind, text,
                     absl::StrCat("unexpected character at offset ", i));
  }
  size_t trailing = 0;
  while (!digits.empty() && digits.back() == '0') {
    digits.pop_back();
    ++trailing;
  }
  if (digits.empty()) {
    *out = DecimalParts();
    return absl::OkStatus();
  }
  // value = digits * 10^(exp10 - frac_len + trailing)
  //       = 0.digits * 10^(len + exp10 - frac_len + trailing)
  int64_t exponent = static_cast<int64_t>(digits.size()) + exp10 - frac_len +
                     static_cast<int64_t>(trailing);
  if (exponent > kMaxDecimalExponent || exponent < -kMaxDecimalExponent) {
    return BadNumber(kind, text,
                     absl::StrCat("magnitude out of range (decimal exponent "
                                  "beyond +/-",
                                  kMaxDecimalExponent, ")"));
  }
  p.digits = std::move(digits);
  p.exponent = exponent;
  *out = std::move(p);
  return absl::OkStatus();
}

}  // namespace

void EncodeValue(const Value& v, std::string* out) {
  out->push_back(static_cast<char>(v.type()));
  switch (v.type()) {
    case ValueType::kRef:
    case ValueType::kLong:
    case ValueType::kInstant:
      internal::PutFixed64BE(static_cast<uint64_t>(v.as_long()) ^ kSignBit,
                             out);
      return;
    case ValueType::kBoolean:
      out->push_back(v.as_bool() ? 1 : 0);
      return;
    case ValueType::kDouble:
      internal::PutFixed64BE(DoubleKeyBits(v.as_double()), out);
      return;
    case ValueType::kUuid: {
      // Always 16 bytes, so the body stays self-delimiting even if a
      // caller broke the contract of Value::Uuid.
      std::string_view b = v.text();
      if (b.size() > 16) b = b.substr(0, 16);
      out->append(b);
      out->append(16 - b.size(), '\0');
      return;
    }
    case ValueType::kKeyword:
    case ValueType::kString:
    case ValueType::kBytes:
    case ValueType::kUri:
    case ValueType::kSymbol: {
      std::string_view s = v.text();
      out->reserve(out->size() + s.size() + 2);
      size_t start = 0;
      while (true) {
        size_t z = s.find('\0', start);
        if (z == std::string_view::npos) break;
        out->append(s.data() + start, z - start);
        out->push_back('\0');
        out->push_back('\xFF');
        start = z + 1;
      }
      out->append(s.data() + start, s.size() - start);
      out->push_back('\0');
      out->push_back('\x01');
      return;
    }
    case ValueType::kBigInt:
    case ValueType::kBigDec:
      EncodeDecimal(SplitCanonical(v.text()), out);
      return;
  }
}

absl::Status DecodeValue(std::string_view* in, Value* out) {
  if (in->empty()) return Corrupt("empty input");
  const uint8_t tag = static_cast<uint8_t>((*in)[0]);
  std::string_view body = in->substr(1);
  switch (static_cast<ValueType>(tag)) {
    case ValueType::kRef:
    case ValueType::kLong:
    case ValueType::kInstant: {
      if (body.size() < 8) return Corrupt("truncated integer");
      int64_t x = static_cast<int64_t>(internal::LoadBigEndian64(body.data()) ^
                                       kSignBit);
      // In place: a reused Value keeps its text buffer.
      out->AssignInt(static_cast<ValueType>(tag), x);
      body.remove_prefix(8);
      break;
    }
    case ValueType::kBoolean: {
      if (body.empty()) return Corrupt("truncated boolean");
      uint8_t b = static_cast<uint8_t>(body[0]);
      if (b > 1) return Corrupt(absl::StrCat("bad boolean byte ", b));
      out->AssignBoolean(b == 1);
      body.remove_prefix(1);
      break;
    }
    case ValueType::kDouble: {
      if (body.size() < 8) return Corrupt("truncated double");
      uint64_t k = internal::LoadBigEndian64(body.data());
      uint64_t bits = (k & kSignBit) ? (k ^ kSignBit) : ~k;
      double d;
      std::memcpy(&d, &bits, sizeof d);
      if (d != d && bits != kCanonicalNaNBits) {
        return Corrupt("non-canonical NaN");
      }
      if (bits == kSignBit) return Corrupt("non-canonical negative zero");
      *out = Value::Double(d);
      body.remove_prefix(8);
      break;
    }
    case ValueType::kUuid:
      if (body.size() < 16) return Corrupt("truncated uuid");
      *out = Value::Uuid(body.substr(0, 16));
      body.remove_prefix(16);
      break;
    case ValueType::kKeyword:
    case ValueType::kString:
    case ValueType::kBytes:
    case ValueType::kUri:
    case ValueType::kSymbol: {
      // Decoded into *out's own buffer: no allocation once it is large
      // enough, which matters to cursors decoding one datom after another.
      std::string* text = out->mutable_text_for(static_cast<ValueType>(tag));
      if (absl::Status s = DecodeText(&body, text); !s.ok()) return s;
      break;
    }
    case ValueType::kBigInt:
    case ValueType::kBigDec: {
      DecimalParts p;
      if (absl::Status s = DecodeDecimal(&body, &p); !s.ok()) return s;
      if (static_cast<ValueType>(tag) == ValueType::kBigInt) {
        if (p.exponent < static_cast<int64_t>(p.digits.size())) {
          return Corrupt("bigint with a fractional part");
        }
        *out = Value::BigInt(DecimalText(p));
      } else {
        *out = Value::BigDec(DecimalText(p));
      }
      break;
    }
    default:
      return Corrupt(absl::StrCat("unknown type tag ", tag));
  }
  *in = body;
  return absl::OkStatus();
}

absl::Status SkipValue(std::string_view* in) {
  if (!in->empty()) {
    switch (static_cast<ValueType>((*in)[0])) {
      case ValueType::kKeyword:
      case ValueType::kString:
      case ValueType::kBytes:
      case ValueType::kUri:
      case ValueType::kSymbol: {
        std::string_view body = in->substr(1);
        if (absl::Status s = DecodeText(&body, nullptr); !s.ok()) return s;
        *in = body;
        return absl::OkStatus();
      }
      default:
        break;
    }
  }
  // The other types decode without allocating (big numbers are rare).
  Value scratch;
  return DecodeValue(in, &scratch);
}

absl::StatusOr<Value> ParseBigInt(std::string_view text) {
  DecimalParts p;
  if (absl::Status s =
          ParseDecimal(text, /*allow_fraction=*/false, 'N', "bigint", &p);
      !s.ok()) {
    return s;
  }
  return Value::BigInt(DecimalText(p));
}

absl::StatusOr<Value> ParseBigDec(std::string_view text) {
  DecimalParts p;
  if (absl::Status s =
          ParseDecimal(text, /*allow_fraction=*/true, 'M', "bigdec", &p);
      !s.ok()) {
    return s;
  }
  return Value::BigDec(DecimalText(p));
}

}  // namespace mentat::storage
