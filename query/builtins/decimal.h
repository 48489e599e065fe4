#ifndef MENTAT_QUERY_BUILTINS_DECIMAL_H_
#define MENTAT_QUERY_BUILTINS_DECIMAL_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "mentat/storage/value.h"

namespace mentat::query::builtins {

// An exact decimal number of any size, (-1)^negative * digits * 10^-scale,
// for the bigint/bigdec arithmetic of the built-ins and for sums that
// overflow a long. Digits are kept as decimal characters: the numbers that
// reach it are short (database values, sums), so simplicity wins over speed.
//
// Always normalised: no leading zeros, no trailing fraction zeros, zero is
// non-negative with scale 0. Plain value type; not thread-safe to mutate.
class Decimal {
 public:
  Decimal() = default;  // zero

  static Decimal FromLong(int64_t v);
  static Decimal FromInt128(__int128 v);
  // Parses "[-+]digits[.digits][(e|E)[-+]digits]" (at least one digit, an
  // exponent of at most 10000 in size); false on anything else.
  static bool Parse(std::string_view text, Decimal* out);
  // From a kLong, kRef, kBigInt or kBigDec value; false for other types or
  // malformed text.
  static bool FromValue(const storage::Value& v, Decimal* out);

  static Decimal Add(const Decimal& a, const Decimal& b);
  static Decimal Sub(const Decimal& a, const Decimal& b);
  static Decimal Mul(const Decimal& a, const Decimal& b);
  // Truncating division: q = trunc(a / b) (an integer), r = a - q * b (sign
  // of a). `b` must not be zero.
  static void DivTrunc(const Decimal& a, const Decimal& b, Decimal* q,
                       Decimal* r);
  // a / b exactly when the quotient has a finite decimal expansion; false
  // otherwise (1/3). `b` must not be zero.
  static bool DivExact(const Decimal& a, const Decimal& b, Decimal* out);
  // -1, 0 or 1.
  static int Compare(const Decimal& a, const Decimal& b);

  bool is_zero() const { return digits_.empty(); }
  bool negative() const { return negative_; }
  bool is_integer() const { return scale_ == 0; }
  // Number of significant digits.
  size_t digit_count() const { return digits_.size(); }
  Decimal Negated() const;
  // Drops the fraction, rounding toward zero.
  Decimal Truncated() const;

  // The value as a long if it is an integer within range.
  bool ToLong(int64_t* out) const;
  // Nearest double; +-infinity when too large.
  double ToDouble() const;
  // Canonical text: "-12.5", "0", "1000" (no exponent).
  std::string ToText() const;
  // A kBigDec value; a kBigInt value of the integer part.
  storage::Value ToBigDec() const;
  storage::Value ToBigInt() const;

 private:
  void Normalize();

  bool negative_ = false;
  std::string digits_;  // magnitude, most significant first; empty is zero
  int32_t scale_ = 0;   // digits after the decimal point
};

// The double nearest to decimal text ("-12.5", "1e400" -> inf), for
// comparing bigint/bigdec values with doubles without allocating. NaN on
// malformed text.
double DecimalTextToDouble(std::string_view text);

// Compares two decimal texts by numeric value (-1, 0, 1); tolerates leading
// zeros, trailing fraction zeros and "-0". Allocates only for texts with an
// exponent. Malformed text compares as zero.
int CompareDecimalText(std::string_view a, std::string_view b);

}  // namespace mentat::query::builtins

#endif  // MENTAT_QUERY_BUILTINS_DECIMAL_H_
