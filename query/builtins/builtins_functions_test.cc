// Tests of the built-in functions (functions.h).

#include <doctest/doctest.h>

#include <string>

#include "builtins/builtin_table.h"
#include "builtins/builtins_test_support.h"

namespace mentat::query::builtins::testing {
namespace {

TEST_CASE("builtins: + - * on longs") {
  CHECK(Fn("+", {}) == "0");
  CHECK(Fn("+", {L(1), L(2), L(3)}) == "6");
  CHECK(Fn("+", {L(5)}) == "5");
  CHECK(Fn("-", {L(5)}) == "-5");
  CHECK(Fn("-", {L(10), L(3), L(2)}) == "5");
  CHECK(Fn("*", {}) == "1");
  CHECK(Fn("*", {L(2), L(3), L(4)}) == "24");
  CHECK(Fn("*", {L(-2), L(3)}) == "-6");
  CHECK(Fn("+", {L(kMaxLong), L(kMinLong)}) == "-1");
  // Refs are longs, and arithmetic on them gives plain longs.
  std::vector<Value> args = {R(5), L(1)};
  auto r = CallFunction("+", args);
  REQUIRE(r.ok());
  REQUIRE(r->has_value());
  CHECK((*r)->type() == storage::ValueType::kLong);
  CHECK((*r)->as_long() == 6);
  // Non-numbers make no result.
  CHECK(Fn("+", {L(1), S("a")}) == "nil");
  CHECK(Fn("+", {S("a")}) == "nil");
  CHECK(Fn("-", {K("a")}) == "nil");
}

TEST_CASE("builtins: long overflow is OutOfRange naming the operation") {
  CHECK(Fn("+", {L(kMaxLong), L(1)}) ==
        "error(OUT_OF_RANGE): integer overflow in +");
  CHECK(Fn("+", {L(1), L(kMaxLong), L(-5)}) ==
        "error(OUT_OF_RANGE): integer overflow in +");
  CHECK(Fn("-", {L(kMinLong), L(1)}) ==
        "error(OUT_OF_RANGE): integer overflow in -");
  CHECK(Fn("-", {L(kMinLong)}) == "error(OUT_OF_RANGE): integer overflow in -");
  CHECK(Fn("*", {L(kMaxLong), L(2)}) ==
        "error(OUT_OF_RANGE): integer overflow in *");
  CHECK(Fn("*", {L(4294967296), L(4294967296)}) ==
        "error(OUT_OF_RANGE): integer overflow in *");
  CHECK(Fn("inc", {L(kMaxLong)}) ==
        "error(OUT_OF_RANGE): integer overflow in inc");
  CHECK(Fn("dec", {L(kMinLong)}) ==
        "error(OUT_OF_RANGE): integer overflow in dec");
  CHECK(Fn("abs", {L(kMinLong)}) ==
        "error(OUT_OF_RANGE): integer overflow in abs");
  CHECK(Fn("quot", {L(kMinLong), L(-1)}) ==
        "error(OUT_OF_RANGE): integer overflow in quot");
  CHECK(Fn("/", {L(kMinLong), L(-1)}) ==
        "error(OUT_OF_RANGE): integer overflow in /");
  // The same values through wider kinds do not overflow.
  CHECK(Fn("+", {L(kMaxLong), D(1.0)}) == "9223372036854775808.0");
  CHECK(Fn("+", {N("9223372036854775807"), L(1)}) == "9223372036854775808N");
  CHECK(Fn("inc", {N("9223372036854775807")}) == "9223372036854775808N");
  CHECK(Fn("-", {N("-9223372036854775808")}) == "9223372036854775808N");
}

TEST_CASE("builtins: arithmetic contagion across kinds") {
  CHECK(Fn("+", {L(1), D(2.5)}) == "3.5");
  CHECK(Fn("*", {L(2), D(0.5)}) == "1.0");
  CHECK(Fn("+", {L(1), N("1")}) == "2N");
  CHECK(Fn("+", {N("1"), M("1.5")}) == "2.5M");
  CHECK(Fn("+", {M("1.5"), D(1.0)}) == "2.5");
  CHECK(Fn("+", {M("0.1"), M("0.2")}) == "0.3M");
  CHECK(Fn("-", {M("1.5"), L(2)}) == "-0.5M");
  CHECK(Fn("*", {M("1.5"), L(2)}) == "3M");
  CHECK(Fn("*", {N("99999999999"), L(99999999999)}) ==
        "9999999999800000000001N");
  CHECK(Fn("-", {N("5"), N("5")}) == "0N");
  CHECK(Fn("*", {M("-0.5"), M("-0.5")}) == "0.25M");
}

TEST_CASE("builtins: division") {
  CHECK(Fn("/", {L(6), L(3)}) == "2");
  CHECK(Fn("/", {L(-6), L(3)}) == "-2");
  CHECK(Fn("/", {L(0), L(5)}) == "0");
  CHECK(Fn("/", {L(1), L(2)}) == "0.5");
  CHECK(Fn("/", {L(7), L(2)}) == "3.5");
  CHECK(Fn("/", {L(1), L(3)}) == "0.3333333333333333");
  CHECK(Fn("/", {L(2)}) == "0.5");
  CHECK(Fn("/", {L(1)}) == "1");
  CHECK(Fn("/", {L(12), L(2), L(3)}) == "2");
  CHECK(Fn("/", {L(10), D(4.0)}) == "2.5");
  CHECK(Fn("/", {N("6"), L(3)}) == "2N");
  CHECK(Fn("/", {N("7"), L(2)}) == "3.5");
  CHECK(Fn("/", {M("1"), L(4)}) == "0.25M");
  CHECK(Fn("/", {M("1.5"), M("0.5")}) == "3M");
  CHECK(Fn("/", {M("1"), M("3")}) == "0.3333333333333333");
  CHECK(Fn("/", {M("-1"), L(8)}) == "-0.125M");
  // Division by zero has no result, for every kind.
  CHECK(Fn("/", {L(1), L(0)}) == "nil");
  CHECK(Fn("/", {L(0)}) == "nil");
  CHECK(Fn("/", {D(1.0), L(0)}) == "nil");
  CHECK(Fn("/", {D(1.0), D(0.0)}) == "nil");
  CHECK(Fn("/", {N("1"), N("0")}) == "nil");
  CHECK(Fn("/", {M("1"), M("0")}) == "nil");
  CHECK(Fn("/", {L(1), S("2")}) == "nil");
}

TEST_CASE("builtins: quot rem mod") {
  CHECK(Fn("quot", {L(7), L(2)}) == "3");
  CHECK(Fn("quot", {L(-7), L(2)}) == "-3");
  CHECK(Fn("rem", {L(7), L(2)}) == "1");
  CHECK(Fn("rem", {L(-7), L(2)}) == "-1");
  CHECK(Fn("mod", {L(7), L(2)}) == "1");
  CHECK(Fn("mod", {L(-7), L(2)}) == "1");
  CHECK(Fn("mod", {L(7), L(-2)}) == "-1");
  CHECK(Fn("mod", {L(-7), L(-2)}) == "-1");
  CHECK(Fn("mod", {L(6), L(3)}) == "0");
  CHECK(Fn("mod", {L(-6), L(3)}) == "0");
  CHECK(Fn("rem", {L(kMinLong), L(-1)}) == "0");
  CHECK(Fn("mod", {L(kMinLong), L(-1)}) == "0");
  CHECK(Fn("quot", {L(7), L(0)}) == "nil");
  CHECK(Fn("rem", {L(7), L(0)}) == "nil");
  CHECK(Fn("mod", {L(7), L(0)}) == "nil");
  CHECK(Fn("quot", {D(7.5), L(2)}) == "3.0");
  CHECK(Fn("rem", {D(7.5), L(2)}) == "1.5");
  CHECK(Fn("mod", {D(-7.5), L(2)}) == "0.5");
  CHECK(Fn("mod", {D(1.0), D(0.0)}) == "nil");
  CHECK(Fn("quot", {N("7"), L(2)}) == "3N");
  CHECK(Fn("quot", {N("-7"), L(2)}) == "-3N");
  CHECK(Fn("mod", {N("-7"), L(2)}) == "1N");
  CHECK(Fn("rem", {N("-7"), L(2)}) == "-1N");
  CHECK(Fn("rem", {M("7.5"), L(2)}) == "1.5M");
  CHECK(Fn("quot", {M("7.5"), L(2)}) == "3M");
  CHECK(Fn("mod", {M("-7.5"), L(2)}) == "0.5M");
  CHECK(Fn("quot", {N("100000000000000000000"), N("3")}) ==
        "33333333333333333333N");
  CHECK(Fn("rem", {N("100000000000000000000"), N("3")}) == "1N");
  CHECK(Fn("quot", {S("a"), L(2)}) == "nil");
}

TEST_CASE("builtins: inc dec abs max min") {
  CHECK(Fn("inc", {L(1)}) == "2");
  CHECK(Fn("inc", {R(1)}) == "2");
  CHECK(Fn("inc", {D(1.5)}) == "2.5");
  CHECK(Fn("inc", {M("0.5")}) == "1.5M");
  CHECK(Fn("dec", {L(0)}) == "-1");
  CHECK(Fn("dec", {N("0")}) == "-1N");
  CHECK(Fn("inc", {S("1")}) == "nil");
  CHECK(Fn("abs", {L(-5)}) == "5");
  CHECK(Fn("abs", {L(5)}) == "5");
  CHECK(Fn("abs", {D(-2.5)}) == "2.5");
  CHECK(Fn("abs", {M("-1.5")}) == "1.5M");
  CHECK(Fn("abs", {N("-10")}) == "10N");
  CHECK(Fn("max", {L(1), L(3), L(2)}) == "3");
  CHECK(Fn("max", {L(1), D(2.5)}) == "2.5");
  CHECK(Fn("min", {L(3), N("1"), L(2)}) == "1N");
  CHECK(Fn("min", {L(5)}) == "5");
  CHECK(Fn("min", {M("0.5"), D(0.25)}) == "0.25");
  CHECK(Fn("max", {L(1), D(kNaN), L(3)}) == "##NaN");
  // Ties go to the later argument, as (if (> x y) x y) does.
  CHECK(Fn("max", {L(1), D(1.0)}) == "1.0");
  CHECK(Fn("min", {D(1.0), L(1)}) == "1");
  CHECK(Fn("max", {L(1), S("a")}) == "nil");
}

TEST_CASE("builtins: number conversions") {
  CHECK(Fn("long", {D(2.9)}) == "2");
  CHECK(Fn("long", {D(-2.9)}) == "-2");
  CHECK(Fn("long", {R(7)}) == "7");
  CHECK(Fn("long", {N("123")}) == "123");
  CHECK(Fn("long", {M("-1.9")}) == "-1");
  CHECK(Fn("long", {D(1e19)}) ==
        "error(OUT_OF_RANGE): value out of range for long");
  CHECK(Fn("long", {N("9223372036854775808")}) ==
        "error(OUT_OF_RANGE): value out of range for long");
  CHECK(Fn("long", {N("-9223372036854775808")}) == "-9223372036854775808");
  CHECK(Fn("long", {D(kNaN)}) == "nil");
  CHECK(Fn("long", {S("1")}) == "nil");
  CHECK(Fn("double", {L(1)}) == "1.0");
  CHECK(Fn("double", {M("0.125")}) == "0.125");
  CHECK(Fn("double", {N("1" + std::string(400, '0'))}) == "##Inf");
  CHECK(Fn("bigint", {D(2.5)}) == "2N");
  CHECK(Fn("bigint", {D(-2.5)}) == "-2N");
  CHECK(Fn("bigint", {D(1e20)}) == "100000000000000000000N");
  CHECK(Fn("bigint", {M("12.99")}) == "12N");
  CHECK(Fn("bigint", {L(-4)}) == "-4N");
  CHECK(Fn("bigint", {D(kInf)}) == "nil");
  CHECK(Fn("bigdec", {D(1.5)}) == "1.5M");
  CHECK(Fn("bigdec", {D(1e-7)}) == "0.0000001M");
  CHECK(Fn("bigdec", {L(3)}) == "3M");
  CHECK(Fn("bigdec", {N("-30")}) == "-30M");
  CHECK(Fn("bigdec", {S("1")}) == "nil");
}

TEST_CASE("builtins: str prints values like Clojure") {
  CHECK(Fn("str", {}) == "\"\"");
  CHECK(Fn("str", {S("a"), K("b/c"), L(1), D(2.5), D(1.0), B(true)}) ==
        "\"a:b/c12.51.0true\"");
  CHECK(Fn("str", {D(1e10)}) == "\"1.0E10\"");
  CHECK(Fn("str", {D(1e7)}) == "\"1.0E7\"");
  CHECK(Fn("str", {D(9999999.0)}) == "\"9999999.0\"");
  CHECK(Fn("str", {D(1234567.5)}) == "\"1234567.5\"");
  CHECK(Fn("str", {D(1.5e-7)}) == "\"1.5E-7\"");
  CHECK(Fn("str", {D(0.001)}) == "\"0.001\"");
  CHECK(Fn("str", {D(9e-4)}) == "\"9.0E-4\"");
  CHECK(Fn("str", {D(-1.25e21)}) == "\"-1.25E21\"");
  CHECK(Fn("str", {D(-0.0)}) == "\"-0.0\"");
  CHECK(Fn("str", {D(kNaN)}) == "\"NaN\"");
  CHECK(Fn("str", {D(-kInf)}) == "\"-Infinity\"");
  CHECK(Fn("str", {N("12"), M("1.5")}) == "\"121.5\"");
  CHECK(Fn("str", {R(5)}) == "\"5\"");
  CHECK(Fn("str", {I(0)}) == "\"1970-01-01T00:00:00Z\"");
  CHECK(Fn("str", {I(1741083720123000)}) == "\"2025-03-04T10:22:00.123Z\"");
  CHECK(Fn("str", {Value::Uuid(std::string("\xf8\x1d\x4f\xae\x7d\xec\x11\xd0"
                                           "\xa7\x65\x00\xa0\xc9\x1e\x6b\xf6",
                                           16))}) ==
        "\"f81d4fae-7dec-11d0-a765-00a0c91e6bf6\"");
  CHECK(Fn("str", {Value::Bytes("abc")}) == "\"#bytes \\\"YWJj\\\"\"");
}

TEST_CASE("builtins: subs and count work in code points") {
  CHECK(Fn("subs", {S("hello"), L(1)}) == "\"ello\"");
  CHECK(Fn("subs", {S("hello"), L(1), L(3)}) == "\"el\"");
  CHECK(Fn("subs", {S("hello"), L(5)}) == "\"\"");
  CHECK(Fn("subs", {S("hello"), L(0), L(5)}) == "\"hello\"");
  CHECK(Fn("subs", {S("hello"), L(6)}) == "nil");
  CHECK(Fn("subs", {S("hello"), L(3), L(2)}) == "nil");
  CHECK(Fn("subs", {S("hello"), L(-1)}) == "nil");
  CHECK(Fn("subs", {S("hello"), L(0), L(6)}) == "nil");
  CHECK(Fn("subs", {S("hello"), D(1.0)}) == "nil");
  CHECK(Fn("subs", {K("hello"), L(1)}) == "nil");
  CHECK(Fn("subs", {S("h\xC3\xA9llo"), L(1), L(2)}) == "\"\xC3\xA9\"");
  CHECK(Fn("subs", {S("a\xF0\x9F\x98\x80"
                      "b"),
                    L(1), L(2)}) == "\"\xF0\x9F\x98\x80\"");
  CHECK(Fn("subs", {S("a\xF0\x9F\x98\x80"
                      "b"),
                    L(2)}) == "\"b\"");
  CHECK(Fn("count", {S("h\xC3\xA9llo")}) == "5");
  CHECK(Fn("count", {S("")}) == "0");
  CHECK(Fn("count", {Value::Bytes("abc")}) == "3");
  CHECK(Fn("count", {K("abc")}) == "nil");
  CHECK(Fn("count", {L(3)}) == "nil");
}

TEST_CASE("builtins: case, trim, names, keyword, identity, compare") {
  CHECK(Fn("upper-case", {S("Hello, w\xC3\xB6rld")}) ==
        "\"HELLO, W\xC3\xB6RLD\"");
  CHECK(Fn("lower-case", {S("HeLLo")}) == "\"hello\"");
  CHECK(Fn("clojure.string/upper-case", {S("a")}) == "\"A\"");
  CHECK(Fn("upper-case", {K("a")}) == "nil");
  CHECK(Fn("trim", {S("  a b \n")}) == "\"a b\"");
  CHECK(Fn("triml", {S("  a ")}) == "\"a \"");
  CHECK(Fn("trimr", {S("  a ")}) == "\"  a\"");
  CHECK(Fn("name", {K("state/open")}) == "\"open\"");
  CHECK(Fn("name", {K("open")}) == "\"open\"");
  CHECK(Fn("name", {S("x")}) == "\"x\"");
  CHECK(Fn("name", {L(1)}) == "nil");
  CHECK(Fn("namespace", {K("state/open")}) == "\"state\"");
  CHECK(Fn("namespace", {K("open")}) == "nil");
  CHECK(Fn("keyword", {S("state/open")}) == ":state/open");
  CHECK(Fn("keyword", {S("state"), S("open")}) == ":state/open");
  CHECK(Fn("keyword", {K("a")}) == ":a");
  CHECK(Fn("keyword", {S("")}) == "nil");
  CHECK(Fn("identity", {M("1.5")}) == "1.5M");
  CHECK(Fn("compare", {L(1), L(2)}) == "-1");
  CHECK(Fn("compare", {L(2), D(2.0)}) == "0");
  CHECK(Fn("compare", {S("b"), S("a")}) == "1");
  CHECK(Fn("compare", {S("b"), L(1)}) == "nil");
}

TEST_CASE("builtins: function names, qualification and arity") {
  CHECK(IsBuiltinFunction("+", 0));
  CHECK(IsBuiltinFunction("+", 7));
  CHECK_FALSE(IsBuiltinFunction("-", 0));
  CHECK_FALSE(IsBuiltinFunction("/", 0));
  CHECK(IsBuiltinFunction("subs", 2));
  CHECK(IsBuiltinFunction("subs", 3));
  CHECK_FALSE(IsBuiltinFunction("subs", 1));
  CHECK_FALSE(IsBuiltinFunction("subs", 4));
  CHECK_FALSE(IsBuiltinFunction("quot", 3));
  CHECK_FALSE(IsBuiltinFunction("inc", 2));
  CHECK(IsBuiltinFunction("str", 0));
  CHECK_FALSE(IsBuiltinFunction("<", 2));         // a predicate
  CHECK_FALSE(IsBuiltinFunction("get-else", 3));  // the executor's
  CHECK(IsBuiltinFunction("clojure.core/+", 2));
  CHECK(IsBuiltinFunction("clojure.string/lower-case", 1));
  CHECK_FALSE(IsBuiltinFunction("clojure.string/+", 2));

  CHECK(Fn("frobnicate", {L(1)}) ==
        "error(INVALID_ARGUMENT): unknown function frobnicate");
  CHECK(Fn("inc", {}) ==
        "error(INVALID_ARGUMENT): wrong number of arguments (0) to function "
        "inc");
  CHECK(Fn("quot", {L(1), L(2), L(3)}) ==
        "error(INVALID_ARGUMENT): wrong number of arguments (3) to function "
        "quot");

  const FunctionInfo* plus = FindFunction("+");
  REQUIRE(plus != nullptr);
  CHECK(plus->Accepts(0));
  std::vector<Value> args = {L(40), L(2)};
  auto r = plus->fn(args);
  REQUIRE(r.ok());
  REQUIRE(r->has_value());
  CHECK((*r)->as_long() == 42);
  CHECK(FindFunction("nope") == nullptr);
}

}  // namespace
}  // namespace mentat::query::builtins::testing
