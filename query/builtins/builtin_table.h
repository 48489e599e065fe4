#ifndef MENTAT_QUERY_BUILTINS_BUILTIN_TABLE_H_
#define MENTAT_QUERY_BUILTINS_BUILTIN_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "mentat/storage/value.h"

namespace mentat::query::builtins {

// Resolved built-ins, for the executor: look a name up once when planning,
// check the arity with Accepts, then call `fn` per row with no name lookup.
// The public CallPredicate / CallFunction (functions.h) are these lookups
// plus a call.
//
// Names are accepted bare ("<", "starts-with?") and qualified the way
// Datomic accepts them ("clojure.core/<", "clojure.string/starts-with?").
// All entries are static and immutable: thread-safe.

inline constexpr uint8_t kVariadic = 255;

// A predicate gets arguments of an accepted arity; a type mismatch is false.
using PredicateFn = bool (*)(std::span<const storage::Value> args);

struct PredicateInfo {
  std::string_view name;  // the bare name
  uint8_t min_arity;
  uint8_t max_arity;  // kVariadic: no limit
  PredicateFn fn;

  bool Accepts(size_t arity) const {
    return arity >= min_arity && (max_arity == kVariadic || arity <= max_arity);
  }
};

// A function gets arguments of an accepted arity. nullopt: no result for
// these arguments (type mismatch, division by zero); OutOfRange: integer
// overflow, naming the function.
using FunctionResult = absl::StatusOr<std::optional<storage::Value>>;
using FunctionFn = FunctionResult (*)(std::span<const storage::Value> args);

struct FunctionInfo {
  std::string_view name;  // the bare name
  uint8_t min_arity;
  uint8_t max_arity;  // kVariadic: no limit
  FunctionFn fn;

  bool Accepts(size_t arity) const {
    return arity >= min_arity && (max_arity == kVariadic || arity <= max_arity);
  }
};

// nullptr when `name` is not a built-in predicate / function.
const PredicateInfo* FindPredicate(std::string_view name);
const FunctionInfo* FindFunction(std::string_view name);
// Every name FindPredicate / FindFunction knows (views into the tables).
std::vector<std::string_view> PredicateNames();
std::vector<std::string_view> FunctionNames();

// The implementations, by concern (arithmetic.cc, string_functions.cc).
FunctionResult Add(std::span<const storage::Value> args);
FunctionResult Subtract(std::span<const storage::Value> args);
FunctionResult Multiply(std::span<const storage::Value> args);
FunctionResult Divide(std::span<const storage::Value> args);
FunctionResult Quot(std::span<const storage::Value> args);
FunctionResult Rem(std::span<const storage::Value> args);
FunctionResult Mod(std::span<const storage::Value> args);
FunctionResult Inc(std::span<const storage::Value> args);
FunctionResult Dec(std::span<const storage::Value> args);
FunctionResult Abs(std::span<const storage::Value> args);
FunctionResult Max(std::span<const storage::Value> args);
FunctionResult Min(std::span<const storage::Value> args);
FunctionResult ToLongFn(std::span<const storage::Value> args);
FunctionResult ToDoubleFn(std::span<const storage::Value> args);
FunctionResult ToBigIntFn(std::span<const storage::Value> args);
FunctionResult ToBigDecFn(std::span<const storage::Value> args);
FunctionResult Compare(std::span<const storage::Value> args);

FunctionResult Str(std::span<const storage::Value> args);
FunctionResult Subs(std::span<const storage::Value> args);
FunctionResult Count(std::span<const storage::Value> args);
FunctionResult UpperCase(std::span<const storage::Value> args);
FunctionResult LowerCase(std::span<const storage::Value> args);
FunctionResult Trim(std::span<const storage::Value> args);
FunctionResult TrimLeft(std::span<const storage::Value> args);
FunctionResult TrimRight(std::span<const storage::Value> args);
FunctionResult Name(std::span<const storage::Value> args);
FunctionResult Namespace(std::span<const storage::Value> args);
FunctionResult Keyword(std::span<const storage::Value> args);
FunctionResult Identity(std::span<const storage::Value> args);

// Arithmetic on two numbers with Clojure's contagion, shared with the
// aggregates. `op` is one of + - * /; `name` goes into overflow messages.
FunctionResult Arithmetic(char op, std::string_view name,
                          const storage::Value& a, const storage::Value& b);

}  // namespace mentat::query::builtins

#endif  // MENTAT_QUERY_BUILTINS_BUILTIN_TABLE_H_
