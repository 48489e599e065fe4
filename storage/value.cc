#include "mentat/storage/value.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>

#include "absl/hash/hash.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "mentat/base/excerpt.h"
#include "mentat/base/str_cat.h"
#include "mentat/storage/value_codec.h"

namespace mentat::storage {
namespace {

struct TypeIdent {
  ValueType type;
  std::string_view ident;
};

constexpr TypeIdent kTypeIdents[] = {
    {ValueType::kRef, ":db.type/ref"},
    {ValueType::kBoolean, ":db.type/boolean"},
    {ValueType::kLong, ":db.type/long"},
    {ValueType::kBigInt, ":db.type/bigint"},
    {ValueType::kDouble, ":db.type/double"},
    {ValueType::kBigDec, ":db.type/bigdec"},
    {ValueType::kInstant, ":db.type/instant"},
    {ValueType::kUuid, ":db.type/uuid"},
    {ValueType::kKeyword, ":db.type/keyword"},
    {ValueType::kString, ":db.type/string"},
    {ValueType::kBytes, ":db.type/bytes"},
    {ValueType::kUri, ":db.type/uri"},
    {ValueType::kSymbol, ":db.type/symbol"},
};

// The bits a double sorts by in its encoding (value_codec.h): NaN and -0.0
// canonicalised, then mapped so unsigned comparison is numeric order.
uint64_t DoubleOrderBits(double d) {
  constexpr uint64_t kSignBit = uint64_t{1} << 63;
  uint64_t bits;
  if (std::isnan(d)) {
    bits = 0x7FF8000000000000ULL;
  } else if (d == 0) {
    bits = 0;
  } else {
    std::memcpy(&bits, &d, sizeof bits);
  }
  return (bits & kSignBit) ? ~bits : (bits | kSignBit);
}

std::string Encoded(const Value& v) {
  std::string out;
  EncodeValue(v, &out);
  return out;
}

void AppendQuoted(std::string_view s, std::string* out) {
  out->push_back('"');
  for (char c : s) {
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\t':
        out->append("\\t");
        break;
      case '\r':
        out->append("\\r");
        break;
      default: {
        unsigned char u = static_cast<unsigned char>(c);
        if (u < 0x20 || u == 0x7F) {
          absl::StrAppend(out, "\\u", absl::Hex(u, absl::kZeroPad4));
        } else {
          out->push_back(c);
        }
      }
    }
  }
  out->push_back('"');
}

std::string DoubleText(double d) {
  if (std::isnan(d)) return "##NaN";
  if (std::isinf(d)) return d > 0 ? "##Inf" : "##-Inf";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, d);
  std::string s(buf, ec == std::errc() ? end : buf);
  // EDN reads "1" as a long; keep doubles recognisable.
  if (s.find_first_of(".e") == std::string::npos) s.append(".0");
  return s;
}

std::string InstantText(int64_t micros) {
  absl::Time t = absl::FromUnixMicros(micros);
  int64_t frac = micros % 1000000;
  if (frac < 0) frac += 1000000;
  std::string s = absl::StrCat(
      "#inst \"", absl::FormatTime("%Y-%m-%dT%H:%M:%S", t, absl::UTCTimeZone()),
      ".");
  if (frac % 1000 == 0) {
    absl::StrAppend(&s, absl::Dec(frac / 1000, absl::kZeroPad3));
  } else {
    absl::StrAppend(&s, absl::Dec(frac, absl::kZeroPad6));
  }
  s.append("Z\"");
  return s;
}

std::string UuidText(std::string_view bytes) {
  std::string hex =
      absl::BytesToHexString(absl::string_view(bytes.data(), bytes.size()));
  if (hex.size() == 32) {
    hex = absl::StrCat(hex.substr(0, 8), "-", hex.substr(8, 4), "-",
                       hex.substr(12, 4), "-", hex.substr(16, 4), "-",
                       hex.substr(20));
  }
  return absl::StrCat("#uuid \"", hex, "\"");
}

}  // namespace

std::string_view ValueTypeIdent(ValueType type) {
  for (const TypeIdent& ti : kTypeIdents) {
    if (ti.type == type) return ti.ident;
  }
  return ":db.type/unknown";
}

bool ValueTypeFromIdent(std::string_view ident, ValueType* type) {
  if (!ident.empty() && ident.front() != ':') {
    for (const TypeIdent& ti : kTypeIdents) {
      if (ti.ident.substr(1) == ident) {
        *type = ti.type;
        return true;
      }
    }
    return false;
  }
  for (const TypeIdent& ti : kTypeIdents) {
    if (ti.ident == ident) {
      *type = ti.type;
      return true;
    }
  }
  return false;
}

bool Value::operator==(const Value& other) const {
  if (type_ != other.type_) return false;
  switch (type_) {
    case ValueType::kRef:
    case ValueType::kLong:
    case ValueType::kInstant:
      return i_ == other.i_;
    case ValueType::kBoolean:
      return b_ == other.b_;
    case ValueType::kDouble:
      return DoubleOrderBits(d_) == DoubleOrderBits(other.d_);
    case ValueType::kUuid:
    case ValueType::kKeyword:
    case ValueType::kString:
    case ValueType::kBytes:
    case ValueType::kUri:
    case ValueType::kSymbol:
      return s_ == other.s_;
    case ValueType::kBigInt:
    case ValueType::kBigDec:
      // Canonical text is unique per number; fall back to the encoding
      // only when the texts differ, in case a caller skipped canonicalising.
      return s_ == other.s_ || Encoded(*this) == Encoded(other);
  }
  return false;
}

std::strong_ordering Value::operator<=>(const Value& other) const {
  if (type_ != other.type_) {
    return static_cast<uint8_t>(type_) <=> static_cast<uint8_t>(other.type_);
  }
  switch (type_) {
    case ValueType::kRef:
    case ValueType::kLong:
    case ValueType::kInstant:
      return i_ <=> other.i_;
    case ValueType::kBoolean:
      return b_ <=> other.b_;
    case ValueType::kDouble:
      return DoubleOrderBits(d_) <=> DoubleOrderBits(other.d_);
    case ValueType::kUuid:
    case ValueType::kKeyword:
    case ValueType::kString:
    case ValueType::kBytes:
    case ValueType::kUri:
    case ValueType::kSymbol:
      // std::string compares bytes as unsigned char, like the encoding.
      return s_ <=> other.s_;
    case ValueType::kBigInt:
    case ValueType::kBigDec:
      if (s_ == other.s_) return std::strong_ordering::equal;
      return Encoded(*this) <=> Encoded(other);
  }
  return std::strong_ordering::equal;
}

std::string Value::DebugString() const {
  switch (type_) {
    case ValueType::kRef:
    case ValueType::kLong:
      return absl::StrCat(i_);
    case ValueType::kBoolean:
      return b_ ? "true" : "false";
    case ValueType::kDouble:
      return DoubleText(d_);
    case ValueType::kInstant:
      return InstantText(i_);
    case ValueType::kUuid:
      return UuidText(s_);
    // Texts are quoted as excerpts: a value can be megabytes long, and
    // this rendering goes into error messages and log lines.
    case ValueType::kKeyword:
      return StrCat(":", ExcerptPrefix(s_), ExcerptMarker(s_));
    case ValueType::kString: {
      std::string out;
      AppendQuoted(ExcerptPrefix(s_), &out);
      out += ExcerptMarker(s_);
      return out;
    }
    case ValueType::kBytes: {
      // Base64 of at most kExcerptBytes characters.
      const size_t shown = std::min(s_.size(), kExcerptBytes / 4 * 3);
      return StrCat("#bytes \"",
                    absl::Base64Escape(absl::string_view(s_.data(), shown)),
                    "\"", ExcerptMarker(s_, shown));
    }
    case ValueType::kSymbol:
      return StrCat(ExcerptPrefix(s_), ExcerptMarker(s_));
    case ValueType::kUri: {
      std::string out = "#uri ";
      AppendQuoted(ExcerptPrefix(s_), &out);
      out += ExcerptMarker(s_);
      return out;
    }
    case ValueType::kBigInt:
      return StrCat(ExcerptPrefix(s_), ExcerptMarker(s_), "N");
    case ValueType::kBigDec:
      return StrCat(ExcerptPrefix(s_), ExcerptMarker(s_), "M");
  }
  return "#unknown";
}

size_t ValueHash::operator()(const Value& v) const {
  const auto tag = static_cast<uint8_t>(v.type());
  switch (v.type()) {
    case ValueType::kRef:
    case ValueType::kLong:
    case ValueType::kInstant:
      return absl::HashOf(tag, v.as_long());
    case ValueType::kBoolean:
      return absl::HashOf(tag, v.as_bool());
    case ValueType::kDouble:
      return absl::HashOf(tag, DoubleOrderBits(v.as_double()));
    case ValueType::kUuid:
    case ValueType::kKeyword:
    case ValueType::kString:
    case ValueType::kBytes:
    case ValueType::kUri:
    case ValueType::kSymbol:
      return absl::HashOf(tag, std::string_view(v.text()));
    case ValueType::kBigInt:
    case ValueType::kBigDec:
      // Hash the encoding: equal numbers have equal encodings even if a
      // caller built one from non-canonical text.
      return absl::HashOf(Encoded(v));
  }
  return 0;
}

}  // namespace mentat::storage
