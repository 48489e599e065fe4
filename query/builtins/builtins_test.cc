// Tests of the built-in predicates (functions.h); the functions, the
// aggregates and the decimals have their own files.

#include <doctest/doctest.h>

#include <string>

#include "builtins/builtin_table.h"
#include "builtins/builtins_test_support.h"
#include "mentat/storage/attribute_predicate.h"

namespace mentat::query::builtins::testing {
namespace {

TEST_CASE("builtins: = and not=") {
  CHECK(Pred("=", {L(1), L(1)}));
  CHECK_FALSE(Pred("=", {L(1), L(2)}));
  CHECK(Pred("=", {L(1), L(1), L(1)}));
  CHECK_FALSE(Pred("=", {L(1), L(1), L(2)}));
  CHECK(Pred("=", {L(1)}));
  // Clojure: integers and doubles are never =, integers of both sizes are.
  CHECK_FALSE(Pred("=", {L(1), D(1.0)}));
  CHECK(Pred("=", {L(1), N("1")}));
  CHECK_FALSE(Pred("=", {L(1), M("1")}));
  CHECK_FALSE(Pred("=", {N("1"), M("1")}));
  CHECK(Pred("=", {M("1.5"), M("1.50")}));
  CHECK(Pred("=", {D(0.0), D(-0.0)}));
  CHECK_FALSE(Pred("=", {D(kNaN), D(kNaN)}));
  // Entity ids are longs.
  CHECK(Pred("=", {R(5), L(5)}));
  CHECK(Pred("=", {S("a"), S("a")}));
  CHECK_FALSE(Pred("=", {S("a"), K("a")}));
  CHECK(Pred("=", {K("a/b"), K("a/b")}));
  CHECK_FALSE(Pred("=", {K("a/b"), K("a/c")}));
  CHECK(Pred("=", {I(1000), I(1000)}));
  CHECK_FALSE(Pred("=", {I(1000), L(1000)}));
  CHECK(Pred("=", {B(true), B(true)}));
  CHECK_FALSE(Pred("=", {B(true), B(false)}));
  CHECK(Pred("=", {Value::Uuid(std::string(16, 'x')),
                   Value::Uuid(std::string(16, 'x'))}));

  CHECK(Pred("not=", {L(1), L(2)}));
  CHECK_FALSE(Pred("not=", {L(1), L(1)}));
  CHECK(Pred("not=", {L(1), D(1.0)}));
  CHECK_FALSE(Pred("not=", {L(1)}));
  CHECK(Pred("!=", {S("a"), S("b")}));
  CHECK_FALSE(Pred("!=", {S("a"), S("a")}));
  CHECK(Pred("!=", {L(1), L(1), L(2)}));
}

TEST_CASE("builtins: == compares numbers across kinds") {
  CHECK(Pred("==", {L(1), D(1.0)}));
  CHECK(Pred("==", {L(1), N("1"), M("1"), D(1.0)}));
  CHECK_FALSE(Pred("==", {L(1), D(1.5)}));
  CHECK_FALSE(Pred("==", {S("a"), S("a")}));
  CHECK_FALSE(Pred("==", {L(1), S("1")}));
}

TEST_CASE("builtins: < <= > >= chain like Clojure") {
  CHECK(Pred("<", {L(1), L(2), L(3)}));
  CHECK_FALSE(Pred("<", {L(1), L(3), L(2)}));
  CHECK_FALSE(Pred("<", {L(1), L(1)}));
  CHECK(Pred("<=", {L(1), L(1), L(2)}));
  CHECK_FALSE(Pred("<=", {L(2), L(1)}));
  CHECK(Pred(">", {L(3), L(2), L(1)}));
  CHECK_FALSE(Pred(">", {L(3), L(3)}));
  CHECK(Pred(">=", {L(3), L(3), L(1)}));
  CHECK_FALSE(Pred(">=", {L(3), L(4)}));
  CHECK(Pred("<", {L(1)}));
  CHECK(Pred("<", {L(kMinLong), L(kMaxLong)}));
}

TEST_CASE("builtins: numbers compare across kinds by value") {
  CHECK(Pred("<", {L(1), D(1.5)}));
  CHECK(Pred("<", {D(1.5), L(2)}));
  CHECK(Pred(">", {L(2), D(1.5)}));
  CHECK(Pred("<=", {L(2), D(2.0)}));
  CHECK(Pred(">=", {D(2.0), L(2)}));
  // Exact long/double comparison: 2^53 + 1 does not round to 2^53.
  CHECK(Pred(">", {L(9007199254740993), D(9007199254740992.0)}));
  CHECK_FALSE(Pred("<=", {L(9007199254740993), D(9007199254740992.0)}));
  CHECK(Pred("<", {L(kMaxLong), D(9223372036854775808.0)}));
  CHECK(Pred(">", {L(kMinLong), D(-1e19)}));
  CHECK(Pred("<", {L(-3), D(-2.5)}));
  CHECK(Pred(">", {L(-2), D(-2.5)}));
  CHECK(Pred("<", {L(1), N("2")}));
  CHECK(Pred(">", {N("-1"), L(-2)}));
  CHECK(Pred("<", {L(kMaxLong), N("9223372036854775808")}));
  CHECK(Pred(">", {N("2"), M("1.5")}));
  CHECK(Pred("<", {M("1.25"), M("1.3")}));
  CHECK(Pred("<", {M("-1.5"), M("-1.25")}));
  CHECK(Pred("<", {M("0.05"), M("0.5")}));
  CHECK(Pred("<", {M("9.99"), M("10")}));
  CHECK(Pred("<", {L(1), M("1.000001")}));
  CHECK(Pred("<", {N("1"), D(1.5)}));
  CHECK(Pred("<", {D(1e300), N("1" + std::string(301, '0'))}));
  CHECK(Pred("<=", {R(5), L(5)}));
  CHECK(Pred("<", {R(5), L(6)}));
  // NaN is unordered.
  CHECK_FALSE(Pred("<", {L(1), D(kNaN)}));
  CHECK_FALSE(Pred(">", {L(1), D(kNaN)}));
  CHECK_FALSE(Pred(">=", {D(kNaN), D(kNaN)}));
  CHECK(Pred("<", {D(-kInf), L(kMinLong)}));
}

TEST_CASE("builtins: comparing different types is false, not an error") {
  CHECK(PredStatus("<", {L(1), S("a")}).ok());
  CHECK_FALSE(Pred("<", {L(1), S("a")}));
  CHECK_FALSE(Pred(">", {S("a"), L(1)}));
  CHECK_FALSE(Pred("<", {K("a"), S("b")}));
  CHECK_FALSE(Pred(">=", {B(true), L(1)}));
  CHECK_FALSE(Pred("<", {I(5), L(6)}));
  CHECK_FALSE(Pred("<", {L(1), L(2), S("c")}));
  CHECK_FALSE(Pred("<=", {Value::Bytes("a"), Value::Bytes("a")}));
}

TEST_CASE("builtins: comparisons within a non-numeric type") {
  CHECK(Pred("<", {S("a"), S("b")}));
  CHECK(Pred("<", {S("Z"), S("a")}));
  CHECK(Pred("<", {S("ab"), S("abc")}));
  CHECK(Pred("<", {S("abc"), S("abd")}));
  CHECK(Pred(">", {S("\xC3\xA9"), S("z")}));  // é after z in UTF-8
  CHECK(Pred("<=", {S("x"), S("x")}));
  // Keywords: no namespace first, then namespace, then name.
  CHECK(Pred("<", {K("z"), K("a/b")}));
  CHECK(Pred("<", {K("a/z"), K("b/a")}));
  CHECK(Pred("<", {K("a/c"), K("a.b/c")}));
  CHECK(Pred("<", {K("state/closed"), K("state/open")}));
  CHECK(Pred("<", {I(-1), I(0), I(1)}));
  CHECK(Pred("<", {B(false), B(true)}));
  CHECK(Pred("<", {Value::Uuid(std::string(15, '\0') + "\x01"),
                   Value::Uuid(std::string(15, '\0') + "\xff")}));
}

TEST_CASE("builtins: numeric predicates") {
  CHECK(Pred("zero?", {L(0)}));
  CHECK(Pred("zero?", {D(0.0)}));
  CHECK(Pred("zero?", {D(-0.0)}));
  CHECK(Pred("zero?", {N("0")}));
  CHECK(Pred("zero?", {M("0")}));
  CHECK_FALSE(Pred("zero?", {L(1)}));
  CHECK_FALSE(Pred("zero?", {S("0")}));
  CHECK_FALSE(Pred("zero?", {D(kNaN)}));
  CHECK(Pred("pos?", {L(1)}));
  CHECK(Pred("pos?", {R(1)}));
  CHECK_FALSE(Pred("pos?", {D(-1.5)}));
  CHECK_FALSE(Pred("pos?", {L(0)}));
  CHECK(Pred("pos?", {M("0.001")}));
  CHECK_FALSE(Pred("pos?", {D(kNaN)}));
  CHECK_FALSE(Pred("pos?", {K("a")}));
  CHECK(Pred("neg?", {N("-5")}));
  CHECK(Pred("neg?", {D(-kInf)}));
  CHECK_FALSE(Pred("neg?", {L(0)}));
  CHECK(Pred("even?", {L(2)}));
  CHECK(Pred("even?", {L(-4)}));
  CHECK(Pred("even?", {L(0)}));
  CHECK_FALSE(Pred("even?", {L(3)}));
  CHECK(Pred("odd?", {L(3)}));
  CHECK(Pred("odd?", {L(-3)}));
  CHECK(Pred("odd?", {L(kMinLong + 1)}));
  CHECK_FALSE(Pred("odd?", {L(kMinLong)}));
  CHECK(Pred("odd?", {N("12345678901234567891")}));
  CHECK(Pred("even?", {N("-12345678901234567890")}));
  CHECK_FALSE(Pred("even?", {D(2.0)}));
  CHECK_FALSE(Pred("odd?", {D(3.0)}));
  CHECK_FALSE(Pred("even?", {S("a")}));
}

TEST_CASE("builtins: nil? some? true? false? not") {
  CHECK_FALSE(Pred("nil?", {L(1)}));
  CHECK(Pred("some?", {S("a")}));
  CHECK(Pred("some?", {B(false)}));
  CHECK(Pred("true?", {B(true)}));
  CHECK_FALSE(Pred("true?", {B(false)}));
  CHECK_FALSE(Pred("true?", {L(1)}));
  CHECK(Pred("false?", {B(false)}));
  CHECK_FALSE(Pred("false?", {L(0)}));
  CHECK(Pred("not", {B(false)}));
  CHECK_FALSE(Pred("not", {B(true)}));
  CHECK_FALSE(Pred("not", {L(0)}));
}

TEST_CASE("builtins: string predicates") {
  CHECK(Pred("starts-with?", {S("hello"), S("he")}));
  CHECK(Pred("starts-with?", {S("hello"), S("")}));
  CHECK_FALSE(Pred("starts-with?", {S("hello"), S("lo")}));
  CHECK_FALSE(Pred("starts-with?", {S("he"), S("hello")}));
  CHECK(Pred("ends-with?", {S("hello"), S("lo")}));
  CHECK_FALSE(Pred("ends-with?", {S("hello"), S("he")}));
  CHECK(Pred("includes?", {S("hello"), S("ell")}));
  CHECK(Pred("includes?", {S("hello"), S("")}));
  CHECK_FALSE(Pred("includes?", {S("hello"), S("elo")}));
  // Only strings: a keyword is not its text.
  CHECK_FALSE(Pred("starts-with?", {K("hello"), S("he")}));
  CHECK_FALSE(Pred("starts-with?", {S("hello"), K("h")}));
  CHECK_FALSE(Pred("includes?", {L(123), S("2")}));
  CHECK(Pred("clojure.string/starts-with?", {S("Issue 1"), S("Issue")}));
  CHECK(Pred("clojure.string/includes?", {S("a crash"), S("crash")}));
  CHECK(Pred("blank?", {S("")}));
  CHECK(Pred("blank?", {S(" \t\n")}));
  CHECK_FALSE(Pred("blank?", {S(" a ")}));
  CHECK_FALSE(Pred("clojure.string/blank?", {L(1)}));
}

TEST_CASE("builtins: type predicates") {
  CHECK(Pred("number?", {L(1)}));
  CHECK(Pred("number?", {M("1.5")}));
  CHECK_FALSE(Pred("number?", {S("1")}));
  CHECK(Pred("integer?", {N("1")}));
  CHECK(Pred("integer?", {R(1)}));
  CHECK_FALSE(Pred("integer?", {D(1.0)}));
  CHECK(Pred("int?", {L(1)}));
  CHECK_FALSE(Pred("int?", {N("1")}));
  CHECK(Pred("double?", {D(1.0)}));
  CHECK(Pred("float?", {D(1.0)}));
  CHECK(Pred("decimal?", {M("1")}));
  CHECK(Pred("string?", {S("")}));
  CHECK(Pred("keyword?", {K("a")}));
  CHECK(Pred("boolean?", {B(false)}));
  CHECK(Pred("inst?", {I(0)}));
  CHECK(Pred("uuid?", {Value::Uuid(std::string(16, 'u'))}));
  CHECK(Pred("bytes?", {Value::Bytes("b")}));
  CHECK_FALSE(Pred("bytes?", {S("b")}));
}

TEST_CASE("builtins: predicate names, qualification and arity") {
  CHECK(IsBuiltinPredicate("<", 1));
  CHECK(IsBuiltinPredicate("<", 5));
  CHECK_FALSE(IsBuiltinPredicate("<", 0));
  CHECK_FALSE(IsBuiltinPredicate("=", 0));
  CHECK(IsBuiltinPredicate("zero?", 1));
  CHECK_FALSE(IsBuiltinPredicate("zero?", 2));
  CHECK(IsBuiltinPredicate("starts-with?", 2));
  CHECK_FALSE(IsBuiltinPredicate("starts-with?", 1));
  CHECK_FALSE(IsBuiltinPredicate("starts-with?", 3));
  CHECK_FALSE(IsBuiltinPredicate("frobnicate?", 1));
  CHECK_FALSE(IsBuiltinPredicate("+", 2));  // a function, not a predicate
  CHECK(IsBuiltinPredicate("clojure.core/<", 2));
  CHECK(IsBuiltinPredicate("clojure.string/ends-with?", 2));
  CHECK_FALSE(IsBuiltinPredicate("clojure.string/<", 2));
  CHECK_FALSE(IsBuiltinPredicate("clojure.core/starts-with?", 2));

  absl::Status unknown = PredStatus("frobnicate?", {L(1)});
  CHECK(unknown.code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(unknown.message()).find("frobnicate?") !=
        std::string::npos);
  absl::Status arity = PredStatus("zero?", {L(1), L(2)});
  CHECK(arity.code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(arity.message()).find("zero?") != std::string::npos);
  CHECK(PredStatus("<", {}).code() == absl::StatusCode::kInvalidArgument);

  // The resolved form the executor uses.
  const PredicateInfo* less = FindPredicate("clojure.core/<");
  REQUIRE(less != nullptr);
  CHECK(less->name == "<");
  CHECK(less->Accepts(3));
  std::vector<Value> args = {L(1), L(2)};
  CHECK(less->fn(args));
  CHECK(FindPredicate("nope") == nullptr);
}

TEST_CASE("builtins: :db.attr/preds predicates mean what the engine's do") {
  // Storage checks attribute predicates with its own copies (it cannot
  // call the engine); a value passes an attribute's predicate exactly
  // when the query predicate of that name holds for it.
  const std::vector<Value> values = {L(0),
                                     L(1),
                                     L(-1),
                                     L(2),
                                     L(-3),
                                     L(kMaxLong),
                                     L(kMinLong),
                                     D(0.0),
                                     D(-0.0),
                                     D(2.5),
                                     D(-2.5),
                                     D(kNaN),
                                     D(kInf),
                                     D(-kInf),
                                     N("0"),
                                     N("12345678901234567891"),
                                     N("-12345678901234567890"),
                                     M("0"),
                                     M("0.001"),
                                     M("-12.5"),
                                     B(true),
                                     B(false),
                                     S(""),
                                     S(" \t\n"),
                                     S(" x "),
                                     S("\x1C")};
  for (const char* name : {"zero?", "pos?", "neg?", "even?", "odd?", "true?",
                           "false?", "clojure.string/blank?"}) {
    auto p = storage::FindAttributePredicate(name);
    REQUIRE(p.has_value());
    for (const Value& v : values) {
      if (!storage::AttributePredicateTakes(*p, v.type())) continue;
      CHECK_MESSAGE(storage::AttributePredicateHolds(*p, v) == Pred(name, {v}),
                    name, " of ", v.DebugString());
    }
  }
}

}  // namespace
}  // namespace mentat::query::builtins::testing
