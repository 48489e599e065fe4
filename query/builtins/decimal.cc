#include "builtins/decimal.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <vector>

namespace mentat::query::builtins {
namespace {

// Magnitudes: decimal digit strings, most significant first, no leading
// zeros, empty for zero.

void StripLeadingZeros(std::string* s) {
  size_t i = 0;
  while (i < s->size() && (*s)[i] == '0') ++i;
  s->erase(0, i);
}

int CompareMag(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  int c = a.compare(b);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

std::string AddMag(std::string_view a, std::string_view b) {
  std::string out(std::max(a.size(), b.size()) + 1, '0');
  size_t i = a.size(), j = b.size(), k = out.size();
  int carry = 0;
  while (k > 0) {
    int s = carry;
    if (i > 0) s += a[--i] - '0';
    if (j > 0) s += b[--j] - '0';
    out[--k] = static_cast<char>('0' + s % 10);
    carry = s / 10;
  }
  StripLeadingZeros(&out);
  return out;
}

// Requires a >= b.
std::string SubMag(std::string_view a, std::string_view b) {
  std::string out(a);
  size_t k = out.size(), j = b.size();
  int borrow = 0;
  while (k > 0) {
    int d = (out[--k] - '0') - borrow - (j > 0 ? b[--j] - '0' : 0);
    borrow = d < 0 ? 1 : 0;
    out[k] = static_cast<char>('0' + (d + 10) % 10);
  }
  StripLeadingZeros(&out);
  return out;
}

std::string MulMag(std::string_view a, std::string_view b) {
  if (a.empty() || b.empty()) return std::string();
  std::vector<uint64_t> acc(a.size() + b.size(), 0);
  for (size_t i = 0; i < a.size(); ++i) {
    uint64_t da = static_cast<uint64_t>(a[i] - '0');
    if (da == 0) continue;
    for (size_t j = 0; j < b.size(); ++j) {
      acc[i + j + 1] += da * static_cast<uint64_t>(b[j] - '0');
    }
  }
  std::string out(acc.size(), '0');
  uint64_t carry = 0;
  for (size_t k = acc.size(); k > 0; --k) {
    uint64_t s = acc[k - 1] + carry;
    out[k - 1] = static_cast<char>('0' + s % 10);
    carry = s / 10;
  }
  StripLeadingZeros(&out);
  return out;
}

// Schoolbook long division; b must be non-empty.
void DivModMag(std::string_view a, std::string_view b, std::string* q,
               std::string* r) {
  q->clear();
  r->clear();
  for (char c : a) {
    if (!r->empty() || c != '0') r->push_back(c);
    char d = '0';
    while (CompareMag(*r, b) >= 0) {
      *r = SubMag(*r, b);
      ++d;
    }
    q->push_back(d);
  }
  StripLeadingZeros(q);
}

}  // namespace

Decimal Decimal::FromLong(int64_t v) { return FromInt128(v); }

Decimal Decimal::FromInt128(__int128 v) {
  Decimal d;
  d.negative_ = v < 0;
  unsigned __int128 m = d.negative_ ? -static_cast<unsigned __int128>(v)
                                    : static_cast<unsigned __int128>(v);
  while (m != 0) {
    d.digits_.push_back(static_cast<char>('0' + static_cast<int>(m % 10)));
    m /= 10;
  }
  std::reverse(d.digits_.begin(), d.digits_.end());
  d.Normalize();
  return d;
}

bool Decimal::Parse(std::string_view text, Decimal* out) {
  size_t i = 0;
  bool negative = false;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) {
    negative = text[i] == '-';
    ++i;
  }
  std::string digits;
  size_t frac_digits = 0;
  bool any_digit = false;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    digits.push_back(text[i++]);
    any_digit = true;
  }
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      digits.push_back(text[i++]);
      ++frac_digits;
      any_digit = true;
    }
  }
  if (!any_digit) return false;
  int64_t exponent = 0;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    bool exp_negative = false;
    if (i < text.size() && (text[i] == '-' || text[i] == '+')) {
      exp_negative = text[i] == '-';
      ++i;
    }
    if (i == text.size()) return false;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      exponent = exponent * 10 + (text[i++] - '0');
      if (exponent > 10000) return false;
    }
    if (exp_negative) exponent = -exponent;
  }
  if (i != text.size()) return false;
  int64_t scale = static_cast<int64_t>(frac_digits) - exponent;
  if (scale < 0) {
    digits.append(static_cast<size_t>(-scale), '0');
    scale = 0;
  }
  if (scale > std::numeric_limits<int32_t>::max()) return false;
  out->negative_ = negative;
  out->digits_ = std::move(digits);
  out->scale_ = static_cast<int32_t>(scale);
  out->Normalize();
  return true;
}

bool Decimal::FromValue(const storage::Value& v, Decimal* out) {
  switch (v.type()) {
    case storage::ValueType::kLong:
    case storage::ValueType::kRef:
      *out = FromLong(v.as_long());
      return true;
    case storage::ValueType::kBigInt:
    case storage::ValueType::kBigDec:
      return Parse(v.text(), out);
    default:
      return false;
  }
}

void Decimal::Normalize() {
  StripLeadingZeros(&digits_);
  while (scale_ > 0 && !digits_.empty() && digits_.back() == '0') {
    digits_.pop_back();
    --scale_;
  }
  if (digits_.empty()) {
    negative_ = false;
    scale_ = 0;
  }
}

namespace {

// The magnitude of `d` with its scale raised to `scale` (>= its own).
std::string ScaledMag(const std::string& digits, int32_t own_scale,
                      int32_t scale) {
  if (digits.empty()) return std::string();
  std::string out = digits;
  out.append(static_cast<size_t>(scale - own_scale), '0');
  return out;
}

}  // namespace

Decimal Decimal::Add(const Decimal& a, const Decimal& b) {
  int32_t scale = std::max(a.scale_, b.scale_);
  std::string am = ScaledMag(a.digits_, a.scale_, scale);
  std::string bm = ScaledMag(b.digits_, b.scale_, scale);
  Decimal out;
  out.scale_ = scale;
  if (a.negative_ == b.negative_) {
    out.digits_ = AddMag(am, bm);
    out.negative_ = a.negative_;
  } else if (CompareMag(am, bm) >= 0) {
    out.digits_ = SubMag(am, bm);
    out.negative_ = a.negative_;
  } else {
    out.digits_ = SubMag(bm, am);
    out.negative_ = b.negative_;
  }
  out.Normalize();
  return out;
}

Decimal Decimal::Sub(const Decimal& a, const Decimal& b) {
  return Add(a, b.Negated());
}

Decimal Decimal::Mul(const Decimal& a, const Decimal& b) {
  Decimal out;
  out.digits_ = MulMag(a.digits_, b.digits_);
  out.scale_ = a.scale_ + b.scale_;
  out.negative_ = a.negative_ != b.negative_;
  out.Normalize();
  return out;
}

void Decimal::DivTrunc(const Decimal& a, const Decimal& b, Decimal* q,
                       Decimal* r) {
  int32_t scale = std::max(a.scale_, b.scale_);
  std::string qm, rm;
  DivModMag(ScaledMag(a.digits_, a.scale_, scale),
            ScaledMag(b.digits_, b.scale_, scale), &qm, &rm);
  Decimal quotient, remainder;
  quotient.digits_ = std::move(qm);
  quotient.negative_ = a.negative_ != b.negative_;
  remainder.digits_ = std::move(rm);
  remainder.scale_ = scale;
  remainder.negative_ = a.negative_;
  quotient.Normalize();
  remainder.Normalize();
  *q = std::move(quotient);
  *r = std::move(remainder);
}

bool Decimal::DivExact(const Decimal& a, const Decimal& b, Decimal* out) {
  // If a/b terminates, it does within log2(b) extra digits (b's factors of
  // 2 and 5 bound them), and 4 digits per digit of b exceed that.
  int32_t extra = static_cast<int32_t>(4 * b.digits_.size() + 4);
  std::string am = a.digits_;
  if (!am.empty()) am.append(static_cast<size_t>(extra), '0');
  std::string qm, rm;
  DivModMag(am, b.digits_, &qm, &rm);
  if (!rm.empty()) return false;
  Decimal q;
  q.digits_ = std::move(qm);
  int64_t scale = static_cast<int64_t>(a.scale_) + extra - b.scale_;
  if (scale < 0) {
    if (!q.digits_.empty()) q.digits_.append(static_cast<size_t>(-scale), '0');
    scale = 0;
  }
  q.scale_ = static_cast<int32_t>(scale);
  q.negative_ = a.negative_ != b.negative_;
  q.Normalize();
  *out = std::move(q);
  return true;
}

int Decimal::Compare(const Decimal& a, const Decimal& b) {
  if (a.negative_ != b.negative_) return a.negative_ ? -1 : 1;
  int32_t scale = std::max(a.scale_, b.scale_);
  int c = CompareMag(ScaledMag(a.digits_, a.scale_, scale),
                     ScaledMag(b.digits_, b.scale_, scale));
  return a.negative_ ? -c : c;
}

Decimal Decimal::Negated() const {
  Decimal out = *this;
  if (!out.digits_.empty()) out.negative_ = !out.negative_;
  return out;
}

Decimal Decimal::Truncated() const {
  if (scale_ == 0) return *this;
  Decimal out;
  if (digits_.size() > static_cast<size_t>(scale_)) {
    out.digits_ = digits_.substr(0, digits_.size() - scale_);
    out.negative_ = negative_;
  }
  out.Normalize();
  return out;
}

bool Decimal::ToLong(int64_t* out) const {
  if (scale_ != 0 || digits_.size() > 19) return false;
  unsigned __int128 m = 0;
  for (char c : digits_) m = m * 10 + static_cast<unsigned>(c - '0');
  constexpr unsigned __int128 kMax = std::numeric_limits<int64_t>::max();
  if (negative_) {
    if (m > kMax + 1) return false;
    *out = static_cast<int64_t>(-static_cast<__int128>(m));
  } else {
    if (m > kMax) return false;
    *out = static_cast<int64_t>(m);
  }
  return true;
}

double Decimal::ToDouble() const { return DecimalTextToDouble(ToText()); }

std::string Decimal::ToText() const {
  if (digits_.empty()) return "0";
  std::string out = negative_ ? "-" : "";
  size_t scale = static_cast<size_t>(scale_);
  if (scale == 0) {
    out.append(digits_);
  } else if (digits_.size() > scale) {
    out.append(digits_, 0, digits_.size() - scale);
    out.push_back('.');
    out.append(digits_, digits_.size() - scale, scale);
  } else {
    out.append("0.");
    out.append(scale - digits_.size(), '0');
    out.append(digits_);
  }
  return out;
}

storage::Value Decimal::ToBigDec() const {
  return storage::Value::BigDec(ToText());
}

storage::Value Decimal::ToBigInt() const {
  return storage::Value::BigInt(Truncated().ToText());
}

double DecimalTextToDouble(std::string_view text) {
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  bool negative = false;
  if (begin != end && (*begin == '+' || *begin == '-')) {
    negative = *begin == '-';
    ++begin;
  }
  double d = 0;
  auto [ptr, ec] = std::from_chars(begin, end, d);
  if (ptr != end || ec == std::errc::invalid_argument) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  if (ec == std::errc::result_out_of_range) {
    // Overflow or underflow: tell them apart by the decimal exponent of the
    // first significant digit.
    int64_t position = 0;  // digits before the point, minus leading zeros
    bool seen_point = false, seen_digit = false;
    int64_t exponent = 0;
    const char* p = begin;
    for (; p != end && *p != 'e' && *p != 'E'; ++p) {
      if (*p == '.') {
        seen_point = true;
      } else if (!seen_digit && *p == '0') {
        if (seen_point) --position;
      } else {
        seen_digit = true;
        if (!seen_point) ++position;
      }
    }
    if (p != end) {
      std::string_view exp_text(p + 1, static_cast<size_t>(end - p - 1));
      bool exp_negative = !exp_text.empty() && exp_text[0] == '-';
      if (!exp_text.empty() && (exp_text[0] == '-' || exp_text[0] == '+')) {
        exp_text.remove_prefix(1);
      }
      for (char c : exp_text) {
        exponent = std::min<int64_t>(exponent * 10 + (c - '0'), 1000000);
      }
      if (exp_negative) exponent = -exponent;
    }
    d = position + exponent > 0 ? std::numeric_limits<double>::infinity() : 0.0;
  }
  return negative ? -d : d;
}

namespace {

struct DecimalView {
  bool negative = false;
  std::string_view int_digits;   // without leading zeros
  std::string_view frac_digits;  // without trailing zeros
};

// False when the text has anything but [-+]digits[.digits].
bool ParseView(std::string_view text, DecimalView* out) {
  size_t i = 0;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) {
    out->negative = text[i] == '-';
    ++i;
  }
  size_t int_begin = i;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
  std::string_view int_digits = text.substr(int_begin, i - int_begin);
  std::string_view frac_digits;
  if (i < text.size() && text[i] == '.') {
    size_t frac_begin = ++i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
    frac_digits = text.substr(frac_begin, i - frac_begin);
  }
  if (i != text.size()) return false;
  while (!int_digits.empty() && int_digits.front() == '0') {
    int_digits.remove_prefix(1);
  }
  while (!frac_digits.empty() && frac_digits.back() == '0') {
    frac_digits.remove_suffix(1);
  }
  if (int_digits.empty() && frac_digits.empty()) out->negative = false;
  out->int_digits = int_digits;
  out->frac_digits = frac_digits;
  return true;
}

}  // namespace

int CompareDecimalText(std::string_view a, std::string_view b) {
  DecimalView va, vb;
  if (!ParseView(a, &va) || !ParseView(b, &vb)) {
    Decimal da, db;
    if (!Decimal::Parse(a, &da)) da = Decimal();
    if (!Decimal::Parse(b, &db)) db = Decimal();
    return Decimal::Compare(da, db);
  }
  if (va.negative != vb.negative) return va.negative ? -1 : 1;
  int c = CompareMag(va.int_digits, vb.int_digits);
  if (c == 0) {
    int f = va.frac_digits.compare(vb.frac_digits);
    c = f < 0 ? -1 : (f > 0 ? 1 : 0);
  }
  return va.negative ? -c : c;
}

}  // namespace mentat::query::builtins
