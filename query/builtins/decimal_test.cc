#include "builtins/decimal.h"

#include <doctest/doctest.h>

#include <cmath>
#include <string>

namespace mentat::query::builtins {
namespace {

Decimal Dec(std::string_view text) {
  Decimal d;
  REQUIRE(Decimal::Parse(text, &d));
  return d;
}

TEST_CASE("builtins: decimal parsing and printing") {
  CHECK(Dec("0").ToText() == "0");
  CHECK(Dec("-0.00").ToText() == "0");
  CHECK_FALSE(Dec("-0.00").negative());
  CHECK(Dec("007.50").ToText() == "7.5");
  CHECK(Dec("+1.5e3").ToText() == "1500");
  CHECK(Dec("1.5E-3").ToText() == "0.0015");
  CHECK(Dec(".5").ToText() == "0.5");
  CHECK(Dec("-12").ToText() == "-12");
  Decimal d;
  CHECK_FALSE(Decimal::Parse("", &d));
  CHECK_FALSE(Decimal::Parse("-", &d));
  CHECK_FALSE(Decimal::Parse("1.2.3", &d));
  CHECK_FALSE(Decimal::Parse("1e", &d));
  CHECK_FALSE(Decimal::Parse("1e99999", &d));
  CHECK_FALSE(Decimal::Parse("abc", &d));
  CHECK(Decimal::FromLong(std::numeric_limits<int64_t>::min()).ToText() ==
        "-9223372036854775808");
}

TEST_CASE("builtins: decimal arithmetic") {
  CHECK(Decimal::Add(Dec("0.1"), Dec("0.2")).ToText() == "0.3");
  CHECK(Decimal::Add(Dec("-1.25"), Dec("1.25")).ToText() == "0");
  CHECK(Decimal::Add(Dec("999"), Dec("1")).ToText() == "1000");
  CHECK(Decimal::Sub(Dec("1"), Dec("1.5")).ToText() == "-0.5");
  CHECK(Decimal::Sub(Dec("-2"), Dec("-7")).ToText() == "5");
  CHECK(Decimal::Mul(Dec("-1.5"), Dec("-2")).ToText() == "3");
  CHECK(Decimal::Mul(Dec("123456789"), Dec("987654321")).ToText() ==
        "121932631112635269");
  CHECK(Decimal::Mul(Dec("0"), Dec("-5")).ToText() == "0");
  Decimal q, r;
  Decimal::DivTrunc(Dec("-7"), Dec("2"), &q, &r);
  CHECK(q.ToText() == "-3");
  CHECK(r.ToText() == "-1");
  Decimal::DivTrunc(Dec("7.5"), Dec("0.2"), &q, &r);
  CHECK(q.ToText() == "37");
  CHECK(r.ToText() == "0.1");
  Decimal e;
  CHECK(Decimal::DivExact(Dec("1"), Dec("8"), &e));
  CHECK(e.ToText() == "0.125");
  CHECK(Decimal::DivExact(Dec("1"), Dec("0.5"), &e));
  CHECK(e.ToText() == "2");
  CHECK(Decimal::DivExact(Dec("300"), Dec("-3"), &e));
  CHECK(e.ToText() == "-100");
  CHECK(Decimal::DivExact(Dec("1"), Dec("1024"), &e));
  CHECK(e.ToText() == "0.0009765625");
  CHECK_FALSE(Decimal::DivExact(Dec("1"), Dec("3"), &e));
  CHECK_FALSE(Decimal::DivExact(Dec("1"), Dec("6"), &e));
}

TEST_CASE("builtins: decimal comparisons and conversions") {
  CHECK(Decimal::Compare(Dec("1.5"), Dec("1.50")) == 0);
  CHECK(Decimal::Compare(Dec("-2"), Dec("1")) == -1);
  CHECK(Decimal::Compare(Dec("-2"), Dec("-10")) == 1);
  CHECK(Decimal::Compare(Dec("0.05"), Dec("0.5")) == -1);
  CHECK(CompareDecimalText("1.50", "1.5") == 0);
  CHECK(CompareDecimalText("-0", "0") == 0);
  CHECK(CompareDecimalText("10", "9") == 1);
  CHECK(CompareDecimalText("-10", "-9") == -1);
  CHECK(CompareDecimalText("0.05", "0.5") == -1);
  CHECK(CompareDecimalText("007", "7") == 0);
  CHECK(CompareDecimalText("1e3", "999") == 1);  // the slow path
  int64_t v = 0;
  CHECK(Dec("9223372036854775807").ToLong(&v));
  CHECK(v == std::numeric_limits<int64_t>::max());
  CHECK(Dec("-9223372036854775808").ToLong(&v));
  CHECK(v == std::numeric_limits<int64_t>::min());
  CHECK_FALSE(Dec("9223372036854775808").ToLong(&v));
  CHECK_FALSE(Dec("1.5").ToLong(&v));
  CHECK(Dec("-1.9").Truncated().ToText() == "-1");
  CHECK(Dec("0.9").Truncated().ToText() == "0");
  CHECK(Dec("2.5").ToDouble() == 2.5);
  CHECK(DecimalTextToDouble("1e400") ==
        std::numeric_limits<double>::infinity());
  CHECK(DecimalTextToDouble("-1" + std::string(400, '0')) ==
        -std::numeric_limits<double>::infinity());
  CHECK(DecimalTextToDouble("0.000001e-400") == 0.0);
  CHECK(std::isnan(DecimalTextToDouble("x")));
}

}  // namespace
}  // namespace mentat::query::builtins
