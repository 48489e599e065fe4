#include "builtins/value_compare.h"

#include <charconv>
#include <cmath>
#include <string_view>

#include "builtins/decimal.h"

namespace mentat::query::builtins {
namespace {

using storage::Value;
using storage::ValueType;

// Exact: no rounding of the long to a double.
std::partial_ordering CompareLongDouble(int64_t a, double b) {
  if (std::isnan(b)) return std::partial_ordering::unordered;
  if (b >= 0x1p63) return std::partial_ordering::less;
  if (b < -0x1p63) return std::partial_ordering::greater;
  double t = std::trunc(b);
  int64_t bi = static_cast<int64_t>(t);
  if (a != bi) return a <=> bi;
  double frac = b - t;
  if (frac > 0) return std::partial_ordering::less;
  if (frac < 0) return std::partial_ordering::greater;
  return std::partial_ordering::equivalent;
}

std::partial_ordering FromInt(int c) {
  if (c < 0) return std::partial_ordering::less;
  if (c > 0) return std::partial_ordering::greater;
  return std::partial_ordering::equivalent;
}

// The decimal text of an exact number (long or bigint/bigdec); `buf` holds
// a long's digits.
std::string_view DecimalText(const Value& v, char (&buf)[24]) {
  if (IsLongLike(v.type())) {
    auto r = std::to_chars(buf, buf + sizeof buf, v.as_long());
    return std::string_view(buf, static_cast<size_t>(r.ptr - buf));
  }
  return v.text();
}

// Clojure's categories for `=`: integers, floating, decimal.
int EqualityCategory(NumKind k) {
  switch (k) {
    case NumKind::kLong:
    case NumKind::kBigInt:
      return 1;
    case NumKind::kDouble:
      return 2;
    case NumKind::kBigDec:
      return 3;
    case NumKind::kNone:
      break;
  }
  return 0;
}

std::strong_ordering ToStrong(int c) {
  if (c < 0) return std::strong_ordering::less;
  if (c > 0) return std::strong_ordering::greater;
  return std::strong_ordering::equal;
}

// Clojure orders keywords (like symbols) by namespace, none first, then by
// name; the namespace ends at the first '/'.
std::strong_ordering CompareKeywords(std::string_view a, std::string_view b) {
  auto split = [](std::string_view k, std::string_view* ns,
                  std::string_view* name) {
    size_t slash = k.find('/');
    if (slash == std::string_view::npos || k == "/") {
      *name = k;
      return false;
    }
    *ns = k.substr(0, slash);
    *name = k.substr(slash + 1);
    return true;
  };
  std::string_view ans, aname, bns, bname;
  bool ahas = split(a, &ans, &aname);
  bool bhas = split(b, &bns, &bname);
  if (ahas != bhas)
    return ahas ? std::strong_ordering::greater : std::strong_ordering::less;
  if (ahas) {
    int c = ans.compare(bns);
    if (c != 0) return ToStrong(c);
  }
  return ToStrong(aname.compare(bname));
}

bool IsNaN(const Value& v) {
  return v.type() == ValueType::kDouble && std::isnan(v.as_double());
}

}  // namespace

std::partial_ordering CompareNumbers(const Value& a, const Value& b) {
  NumKind ka = NumberKind(a);
  NumKind kb = NumberKind(b);
  if (ka == NumKind::kLong && kb == NumKind::kLong) {
    return a.as_long() <=> b.as_long();
  }
  if (ka == NumKind::kDouble || kb == NumKind::kDouble) {
    if (ka == NumKind::kDouble && kb == NumKind::kDouble) {
      return a.as_double() <=> b.as_double();
    }
    if (ka == NumKind::kLong)
      return CompareLongDouble(a.as_long(), b.as_double());
    if (kb == NumKind::kLong) {
      return 0 <=> CompareLongDouble(b.as_long(), a.as_double());
    }
    return NumberToDouble(a) <=> NumberToDouble(b);
  }
  char abuf[24], bbuf[24];
  return FromInt(
      CompareDecimalText(DecimalText(a, abuf), DecimalText(b, bbuf)));
}

double NumberToDouble(const Value& v) {
  switch (NumberKind(v)) {
    case NumKind::kLong:
      return static_cast<double>(v.as_long());
    case NumKind::kDouble:
      return v.as_double();
    case NumKind::kBigInt:
    case NumKind::kBigDec:
      return DecimalTextToDouble(v.text());
    case NumKind::kNone:
      break;
  }
  return 0;
}

bool ValuesEqual(const Value& a, const Value& b) {
  NumKind ka = NumberKind(a);
  NumKind kb = NumberKind(b);
  if (ka != NumKind::kNone || kb != NumKind::kNone) {
    if (EqualityCategory(ka) != EqualityCategory(kb)) return false;
    return CompareNumbers(a, b) == std::partial_ordering::equivalent;
  }
  if (a.type() != b.type()) return false;
  switch (a.type()) {
    case ValueType::kBoolean:
      return a.as_bool() == b.as_bool();
    case ValueType::kInstant:
      return a.as_long() == b.as_long();
    default:
      return a.text() == b.text();
  }
}

std::partial_ordering CompareForPredicateSlow(const Value& a, const Value& b) {
  NumKind ka = NumberKind(a);
  NumKind kb = NumberKind(b);
  if (ka != NumKind::kNone && kb != NumKind::kNone) return CompareNumbers(a, b);
  if (ka != NumKind::kNone || kb != NumKind::kNone || a.type() != b.type()) {
    return std::partial_ordering::unordered;
  }
  switch (a.type()) {
    case ValueType::kBoolean:
      return a.as_bool() <=> b.as_bool();
    case ValueType::kInstant:
      return a.as_long() <=> b.as_long();
    case ValueType::kString:
    case ValueType::kUuid:
    case ValueType::kUri:
      return a.text() <=> b.text();
    case ValueType::kKeyword:
    // Clojure compares symbols as it compares keywords: namespace, name.
    case ValueType::kSymbol:
      return CompareKeywords(a.text(), b.text());
    default:
      return std::partial_ordering::unordered;
  }
}

std::strong_ordering TotalCompare(const Value& a, const Value& b) {
  NumKind ka = NumberKind(a);
  NumKind kb = NumberKind(b);
  if (ka != NumKind::kNone && kb != NumKind::kNone) {
    std::partial_ordering c = CompareNumbers(a, b);
    if (c == std::partial_ordering::less) return std::strong_ordering::less;
    if (c == std::partial_ordering::greater) {
      return std::strong_ordering::greater;
    }
    if (c == std::partial_ordering::unordered) {
      bool na = IsNaN(a), nb = IsNaN(b);
      if (na && nb) return std::strong_ordering::equal;
      return na ? std::strong_ordering::greater : std::strong_ordering::less;
    }
    if (ka != kb) return ka <=> kb;
    return static_cast<uint8_t>(a.type()) <=> static_cast<uint8_t>(b.type());
  }
  if (ka != NumKind::kNone) return std::strong_ordering::less;
  if (kb != NumKind::kNone) return std::strong_ordering::greater;
  if (a.type() != b.type()) {
    return static_cast<uint8_t>(a.type()) <=> static_cast<uint8_t>(b.type());
  }
  if (a.type() == ValueType::kKeyword || a.type() == ValueType::kSymbol)
    return CompareKeywords(a.text(), b.text());
  return a <=> b;
}

}  // namespace mentat::query::builtins
