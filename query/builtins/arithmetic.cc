// Numeric functions: + - * / quot rem mod inc dec abs max min compare and
// the long/double/bigint/bigdec conversions.
//
// Clojure's contagion decides the result kind: long op long is a long
// (overflow is an OutOfRange error, as Clojure throws), a bigint makes a
// bigint, a bigdec a bigdec, a double a double. We have no ratios, so `/`
// returns the exact quotient when there is one (a long or bigint when it is
// an integer, a bigdec when it terminates) and a double otherwise:
// (/ 6 3) is 2, (/ 1 2) is 0.5, (/ 1M 4) is 0.25M, (/ 1M 3) is 0.333...
// as a double. Division by zero has no result (nullopt), for doubles too,
// as Clojure's boxed division throws for it.

#include <charconv>
#include <cmath>
#include <limits>

#include "builtins/builtin_table.h"
#include "builtins/decimal.h"
#include "builtins/value_compare.h"
#include "mentat/base/str_cat.h"

namespace mentat::query::builtins {
namespace {

using storage::Value;

// Bounds on digit work so that absurd bigints cannot stall a query.
constexpr size_t kMaxDigitWork = 50'000'000;

[[nodiscard]] absl::Status Overflow(std::string_view name) {
  return absl::OutOfRangeError(StrCat("integer overflow in ", name));
}

[[nodiscard]] absl::Status TooLarge(std::string_view name) {
  return absl::OutOfRangeError(StrCat("number too large in ", name));
}

FunctionResult NoResult() { return std::optional<Value>(); }
FunctionResult Some(Value v) { return std::optional<Value>(std::move(v)); }

Value DecimalOfKind(const Decimal& d, NumKind kind) {
  return kind == NumKind::kBigInt ? d.ToBigInt() : d.ToBigDec();
}

// The shortest text of a finite double as a Decimal.
Decimal DecimalOfDouble(double d) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, d);
  Decimal out;
  if (!Decimal::Parse(std::string_view(buf, static_cast<size_t>(r.ptr - buf)),
                      &out)) {
    out = Decimal();
  }
  return out;
}

FunctionResult Negate(const Value& v, std::string_view name) {
  switch (NumberKind(v)) {
    case NumKind::kLong:
      if (v.as_long() == std::numeric_limits<int64_t>::min()) {
        return Overflow(name);
      }
      return Some(Value::Long(-v.as_long()));
    case NumKind::kDouble:
      return Some(Value::Double(-v.as_double()));
    case NumKind::kBigInt:
    case NumKind::kBigDec: {
      Decimal d;
      if (!Decimal::FromValue(v, &d)) return NoResult();
      return Some(DecimalOfKind(d.Negated(), NumberKind(v)));
    }
    case NumKind::kNone:
      break;
  }
  return NoResult();
}

// Normalises a lone numeric argument: refs become longs.
FunctionResult AsNumber(const Value& v) {
  if (NumberKind(v) == NumKind::kNone) return NoResult();
  if (IsLongLike(v.type())) return Some(Value::Long(v.as_long()));
  return Some(v);
}

FunctionResult Fold(char op, std::string_view name,
                    std::span<const Value> args) {
  Value acc = args[0];
  if (NumberKind(acc) == NumKind::kNone) return NoResult();
  for (size_t i = 1; i < args.size(); ++i) {
    FunctionResult r = Arithmetic(op, name, acc, args[i]);
    if (!r.ok() || !r->has_value()) return r;
    acc = std::move(**r);
  }
  return AsNumber(acc);
}

// quot ('q'), rem ('r') and mod ('m'), truncating like Clojure's.
FunctionResult Division(char op, std::string_view name, const Value& a,
                        const Value& b) {
  NumKind ka = NumberKind(a), kb = NumberKind(b);
  if (ka == NumKind::kNone || kb == NumKind::kNone) return NoResult();
  NumKind kind = std::max(ka, kb);
  if (kind == NumKind::kLong) {
    int64_t x = a.as_long(), y = b.as_long();
    if (y == 0) return NoResult();
    if (op == 'q') {
      if (x == std::numeric_limits<int64_t>::min() && y == -1) {
        return Overflow(name);
      }
      return Some(Value::Long(x / y));
    }
    if (y == -1) return Some(Value::Long(0));  // x % -1 overflows for MIN
    int64_t m = x % y;
    if (op == 'm' && m != 0 && ((m < 0) != (y < 0))) m += y;
    return Some(Value::Long(m));
  }
  if (kind == NumKind::kDouble) {
    double x = NumberToDouble(a), y = NumberToDouble(b);
    if (y == 0) return NoResult();
    if (op == 'q') return Some(Value::Double(std::trunc(x / y)));
    double m = std::fmod(x, y);
    if (op == 'm' && m != 0 && ((m < 0) != (y < 0))) m += y;
    return Some(Value::Double(m));
  }
  Decimal x, y;
  if (!Decimal::FromValue(a, &x) || !Decimal::FromValue(b, &y)) {
    return NoResult();
  }
  if (y.is_zero()) return NoResult();
  if ((x.digit_count() + 1) * (y.digit_count() + 1) * 10 > kMaxDigitWork) {
    return TooLarge(name);
  }
  Decimal q, r;
  Decimal::DivTrunc(x, y, &q, &r);
  if (op == 'q') return Some(DecimalOfKind(q, kind));
  if (op == 'm' && !r.is_zero() && r.negative() != y.negative()) {
    r = Decimal::Add(r, y);
  }
  return Some(DecimalOfKind(r, kind));
}

}  // namespace

FunctionResult Arithmetic(char op, std::string_view name, const Value& a,
                          const Value& b) {
  NumKind ka = NumberKind(a), kb = NumberKind(b);
  if (ka == NumKind::kNone || kb == NumKind::kNone) return NoResult();
  if (ka == NumKind::kLong && kb == NumKind::kLong) {
    int64_t x = a.as_long(), y = b.as_long(), r = 0;
    switch (op) {
      case '+':
        if (__builtin_add_overflow(x, y, &r)) return Overflow(name);
        return Some(Value::Long(r));
      case '-':
        if (__builtin_sub_overflow(x, y, &r)) return Overflow(name);
        return Some(Value::Long(r));
      case '*':
        if (__builtin_mul_overflow(x, y, &r)) return Overflow(name);
        return Some(Value::Long(r));
      default:
        if (y == 0) return NoResult();
        if (x == std::numeric_limits<int64_t>::min() && y == -1) {
          return Overflow(name);
        }
        if (x % y == 0) return Some(Value::Long(x / y));
        return Some(
            Value::Double(static_cast<double>(x) / static_cast<double>(y)));
    }
  }
  NumKind kind = std::max(ka, kb);
  if (kind == NumKind::kDouble) {
    double x = NumberToDouble(a), y = NumberToDouble(b);
    switch (op) {
      case '+':
        return Some(Value::Double(x + y));
      case '-':
        return Some(Value::Double(x - y));
      case '*':
        return Some(Value::Double(x * y));
      default:
        if (y == 0) return NoResult();
        return Some(Value::Double(x / y));
    }
  }
  Decimal x, y;
  if (!Decimal::FromValue(a, &x) || !Decimal::FromValue(b, &y)) {
    return NoResult();
  }
  switch (op) {
    case '+':
      return Some(DecimalOfKind(Decimal::Add(x, y), kind));
    case '-':
      return Some(DecimalOfKind(Decimal::Sub(x, y), kind));
    case '*':
      if ((x.digit_count() + 1) * (y.digit_count() + 1) > kMaxDigitWork) {
        return TooLarge(name);
      }
      return Some(DecimalOfKind(Decimal::Mul(x, y), kind));
    default:
      break;
  }
  if (y.is_zero()) return NoResult();
  double inexact = x.ToDouble() / y.ToDouble();
  if ((x.digit_count() + 4 * y.digit_count() + 5) * (y.digit_count() + 1) * 10 >
      kMaxDigitWork) {
    return Some(Value::Double(inexact));
  }
  if (kind == NumKind::kBigInt) {
    Decimal q, r;
    Decimal::DivTrunc(x, y, &q, &r);
    if (r.is_zero()) return Some(q.ToBigInt());
    return Some(Value::Double(inexact));
  }
  Decimal q;
  if (Decimal::DivExact(x, y, &q)) return Some(q.ToBigDec());
  return Some(Value::Double(inexact));
}

FunctionResult Add(std::span<const Value> args) {
  if (args.empty()) return Some(Value::Long(0));
  return Fold('+', "+", args);
}

FunctionResult Subtract(std::span<const Value> args) {
  if (args.size() == 1) return Negate(args[0], "-");
  return Fold('-', "-", args);
}

FunctionResult Multiply(std::span<const Value> args) {
  if (args.empty()) return Some(Value::Long(1));
  return Fold('*', "*", args);
}

FunctionResult Divide(std::span<const Value> args) {
  if (args.size() == 1) return Arithmetic('/', "/", Value::Long(1), args[0]);
  return Fold('/', "/", args);
}

FunctionResult Quot(std::span<const Value> args) {
  return Division('q', "quot", args[0], args[1]);
}

FunctionResult Rem(std::span<const Value> args) {
  return Division('r', "rem", args[0], args[1]);
}

FunctionResult Mod(std::span<const Value> args) {
  return Division('m', "mod", args[0], args[1]);
}

FunctionResult Inc(std::span<const Value> args) {
  return Arithmetic('+', "inc", args[0], Value::Long(1));
}

FunctionResult Dec(std::span<const Value> args) {
  return Arithmetic('-', "dec", args[0], Value::Long(1));
}

FunctionResult Abs(std::span<const Value> args) {
  const Value& v = args[0];
  switch (NumberKind(v)) {
    case NumKind::kLong:
      if (v.as_long() >= 0) return Some(Value::Long(v.as_long()));
      return Negate(v, "abs");
    case NumKind::kDouble:
      return Some(Value::Double(std::fabs(v.as_double())));
    case NumKind::kBigInt:
    case NumKind::kBigDec: {
      Decimal d;
      if (!Decimal::FromValue(v, &d)) return NoResult();
      return Some(DecimalOfKind(d.negative() ? d.Negated() : d, NumberKind(v)));
    }
    case NumKind::kNone:
      break;
  }
  return NoResult();
}

namespace {

// Clojure's (max x y) is (if (> x y) x y): ties go to the later argument,
// and a NaN anywhere makes NaN.
FunctionResult Extremum(std::span<const Value> args, bool max) {
  for (const Value& v : args) {
    if (NumberKind(v) == NumKind::kNone) return NoResult();
  }
  for (const Value& v : args) {
    if (v.type() == storage::ValueType::kDouble && std::isnan(v.as_double())) {
      return Some(v);
    }
  }
  size_t best = 0;
  for (size_t i = 1; i < args.size(); ++i) {
    std::partial_ordering c = CompareNumbers(args[best], args[i]);
    bool keep = max ? c == std::partial_ordering::greater
                    : c == std::partial_ordering::less;
    if (!keep) best = i;
  }
  return Some(args[best]);
}

}  // namespace

FunctionResult Max(std::span<const Value> args) { return Extremum(args, true); }

FunctionResult Min(std::span<const Value> args) {
  return Extremum(args, false);
}

FunctionResult ToLongFn(std::span<const Value> args) {
  const Value& v = args[0];
  switch (NumberKind(v)) {
    case NumKind::kLong:
      return Some(Value::Long(v.as_long()));
    case NumKind::kDouble: {
      double d = v.as_double();
      if (std::isnan(d)) return NoResult();
      if (d >= 0x1p63 || d < -0x1p63) {
        return absl::OutOfRangeError("value out of range for long");
      }
      return Some(Value::Long(static_cast<int64_t>(std::trunc(d))));
    }
    case NumKind::kBigInt:
    case NumKind::kBigDec: {
      Decimal d;
      if (!Decimal::FromValue(v, &d)) return NoResult();
      int64_t out;
      if (!d.Truncated().ToLong(&out)) {
        return absl::OutOfRangeError("value out of range for long");
      }
      return Some(Value::Long(out));
    }
    case NumKind::kNone:
      break;
  }
  return NoResult();
}

FunctionResult ToDoubleFn(std::span<const Value> args) {
  if (NumberKind(args[0]) == NumKind::kNone) return NoResult();
  return Some(Value::Double(NumberToDouble(args[0])));
}

namespace {

FunctionResult ToDecimalKind(const Value& v, NumKind kind) {
  Decimal d;
  switch (NumberKind(v)) {
    case NumKind::kDouble:
      if (!std::isfinite(v.as_double())) return NoResult();
      d = DecimalOfDouble(v.as_double());
      break;
    case NumKind::kNone:
      return NoResult();
    default:
      if (!Decimal::FromValue(v, &d)) return NoResult();
      break;
  }
  return Some(DecimalOfKind(d, kind));
}

}  // namespace

FunctionResult ToBigIntFn(std::span<const Value> args) {
  return ToDecimalKind(args[0], NumKind::kBigInt);
}

FunctionResult ToBigDecFn(std::span<const Value> args) {
  return ToDecimalKind(args[0], NumKind::kBigDec);
}

FunctionResult Compare(std::span<const Value> args) {
  std::partial_ordering c = CompareForPredicate(args[0], args[1]);
  if (c == std::partial_ordering::unordered) return NoResult();
  return Some(Value::Long(c < 0 ? -1 : (c > 0 ? 1 : 0)));
}

}  // namespace mentat::query::builtins
