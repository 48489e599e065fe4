// The built-in predicates and the public predicate API of functions.h.

#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "builtins/builtin_table.h"
#include "builtins/decimal.h"
#include "builtins/value_compare.h"
#include "mentat/base/str_cat.h"
#include "mentat/query/functions.h"

namespace mentat::query {
namespace builtins {
namespace {

using storage::Value;
using storage::ValueType;
using Args = std::span<const Value>;

bool Equal(Args args) {
  for (size_t i = 1; i < args.size(); ++i) {
    if (!ValuesEqual(args[0], args[i])) return false;
  }
  return true;
}

bool NotEqual(Args args) { return !Equal(args); }

// Numeric equality across kinds: (== 1 1.0) is true; non-numbers false.
bool NumericEqual(Args args) {
  for (const Value& v : args) {
    if (NumberKind(v) == NumKind::kNone) return false;
  }
  for (size_t i = 1; i < args.size(); ++i) {
    if (CompareNumbers(args[0], args[i]) != std::partial_ordering::equivalent) {
      return false;
    }
  }
  return true;
}

template <typename Holds>
bool Chain(Args args, Holds holds) {
  for (size_t i = 1; i < args.size(); ++i) {
    if (!holds(CompareForPredicate(args[i - 1], args[i]))) return false;
  }
  return true;
}

bool Less(Args args) {
  return Chain(args, [](std::partial_ordering c) { return c < 0; });
}
bool LessEqual(Args args) {
  return Chain(args, [](std::partial_ordering c) { return c <= 0; });
}
bool Greater(Args args) {
  return Chain(args, [](std::partial_ordering c) { return c > 0; });
}
bool GreaterEqual(Args args) {
  return Chain(args, [](std::partial_ordering c) { return c >= 0; });
}

// The sign of a number compared with zero; unordered for NaN and
// non-numbers.
std::partial_ordering Sign(const Value& v) {
  if (IsLongLike(v.type())) return v.as_long() <=> 0;
  if (NumberKind(v) == NumKind::kNone) return std::partial_ordering::unordered;
  return CompareNumbers(v, Value::Long(0));
}

bool IsZero(Args args) { return Sign(args[0]) == 0; }
bool IsPositive(Args args) { return Sign(args[0]) > 0; }
bool IsNegative(Args args) { return Sign(args[0]) < 0; }

// 1 for odd, 0 for even, -1 for non-integers.
int Parity(const Value& v) {
  if (IsLongLike(v.type())) return static_cast<int>(v.as_long() & 1);
  if (v.type() == ValueType::kBigInt && !v.text().empty()) {
    char last = v.text().back();
    if (last >= '0' && last <= '9') return (last - '0') & 1;
  }
  return -1;
}

bool IsEven(Args args) { return Parity(args[0]) == 0; }
bool IsOdd(Args args) { return Parity(args[0]) == 1; }

// There is no nil value in a binding: every value is "some".
bool IsNil(Args) { return false; }
bool IsSome(Args) { return true; }
bool IsTrue(Args args) {
  return args[0].type() == ValueType::kBoolean && args[0].as_bool();
}
bool IsFalse(Args args) {
  return args[0].type() == ValueType::kBoolean && !args[0].as_bool();
}
// Clojure's `not`: true only for false (and nil).
bool Not(Args args) { return IsFalse(args); }

bool BothStrings(Args args) {
  return args[0].type() == ValueType::kString &&
         args[1].type() == ValueType::kString;
}

bool StartsWith(Args args) {
  return BothStrings(args) &&
         std::string_view(args[0].text()).starts_with(args[1].text());
}
bool EndsWith(Args args) {
  return BothStrings(args) &&
         std::string_view(args[0].text()).ends_with(args[1].text());
}
bool Includes(Args args) {
  return BothStrings(args) &&
         args[0].text().find(args[1].text()) != std::string::npos;
}
bool IsBlank(Args args) {
  if (args[0].type() != ValueType::kString) return false;
  for (char c : args[0].text()) {
    if (!(c == ' ' || (c >= '\t' && c <= '\r') ||
          (c >= '\x1C' && c <= '\x1F'))) {
      return false;
    }
  }
  return true;
}

template <ValueType... kTypes>
bool HasType(Args args) {
  return ((args[0].type() == kTypes) || ...);
}

bool IsNumber(Args args) { return NumberKind(args[0]) != NumKind::kNone; }

constexpr PredicateInfo kCorePredicates[] = {
    {"=", 1, kVariadic, Equal},
    {"==", 1, kVariadic, NumericEqual},
    {"not=", 1, kVariadic, NotEqual},
    {"!=", 1, kVariadic, NotEqual},
    {"<", 1, kVariadic, Less},
    {"<=", 1, kVariadic, LessEqual},
    {">", 1, kVariadic, Greater},
    {">=", 1, kVariadic, GreaterEqual},
    {"zero?", 1, 1, IsZero},
    {"pos?", 1, 1, IsPositive},
    {"neg?", 1, 1, IsNegative},
    {"even?", 1, 1, IsEven},
    {"odd?", 1, 1, IsOdd},
    {"nil?", 1, 1, IsNil},
    {"some?", 1, 1, IsSome},
    {"true?", 1, 1, IsTrue},
    {"false?", 1, 1, IsFalse},
    {"not", 1, 1, Not},
    {"number?", 1, 1, IsNumber},
    {"integer?", 1, 1,
     HasType<ValueType::kLong, ValueType::kRef, ValueType::kBigInt>},
    {"int?", 1, 1, HasType<ValueType::kLong, ValueType::kRef>},
    {"double?", 1, 1, HasType<ValueType::kDouble>},
    {"float?", 1, 1, HasType<ValueType::kDouble>},
    {"decimal?", 1, 1, HasType<ValueType::kBigDec>},
    {"string?", 1, 1, HasType<ValueType::kString>},
    {"keyword?", 1, 1, HasType<ValueType::kKeyword>},
    {"boolean?", 1, 1, HasType<ValueType::kBoolean>},
    {"inst?", 1, 1, HasType<ValueType::kInstant>},
    {"uuid?", 1, 1, HasType<ValueType::kUuid>},
    {"bytes?", 1, 1, HasType<ValueType::kBytes>},
    {"symbol?", 1, 1, HasType<ValueType::kSymbol>},
    {"uri?", 1, 1, HasType<ValueType::kUri>},
};

constexpr PredicateInfo kStringPredicates[] = {
    {"starts-with?", 2, 2, StartsWith},
    {"ends-with?", 2, 2, EndsWith},
    {"includes?", 2, 2, Includes},
    {"blank?", 1, 1, IsBlank},
};

using PredicateMap = absl::flat_hash_map<std::string, const PredicateInfo*>;

PredicateMap* BuildPredicateMap() {
  auto* map = new PredicateMap();
  for (const PredicateInfo& p : kCorePredicates) {
    (*map)[std::string(p.name)] = &p;
    (*map)[StrCat("clojure.core/", p.name)] = &p;
  }
  for (const PredicateInfo& p : kStringPredicates) {
    (*map)[std::string(p.name)] = &p;
    (*map)[StrCat("clojure.string/", p.name)] = &p;
  }
  return map;
}

}  // namespace

static const PredicateMap& Predicates() {
  static const PredicateMap* const kMap = BuildPredicateMap();
  return *kMap;
}

const PredicateInfo* FindPredicate(std::string_view name) {
  auto it = Predicates().find(absl::string_view(name.data(), name.size()));
  return it == Predicates().end() ? nullptr : it->second;
}

std::vector<std::string_view> PredicateNames() {
  std::vector<std::string_view> names;
  names.reserve(Predicates().size());
  for (const auto& [name, info] : Predicates()) names.push_back(name);
  return names;
}

}  // namespace builtins

std::vector<std::string_view> BuiltinPredicateNames() {
  return builtins::PredicateNames();
}

bool IsBuiltinPredicate(std::string_view name, size_t arity) {
  const builtins::PredicateInfo* p = builtins::FindPredicate(name);
  return p != nullptr && p->Accepts(arity);
}

absl::StatusOr<bool> CallPredicate(std::string_view name,
                                   std::span<const storage::Value> args) {
  const builtins::PredicateInfo* p = builtins::FindPredicate(name);
  if (p == nullptr) {
    return absl::InvalidArgumentError(StrCat("unknown predicate ", name));
  }
  if (!p->Accepts(args.size())) {
    return absl::InvalidArgumentError(StrCat(
        "wrong number of arguments (", args.size(), ") to predicate ", name));
  }
  return p->fn(args);
}

}  // namespace mentat::query
