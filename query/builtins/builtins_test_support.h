#ifndef MENTAT_QUERY_BUILTINS_BUILTINS_TEST_SUPPORT_H_
#define MENTAT_QUERY_BUILTINS_BUILTINS_TEST_SUPPORT_H_

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "mentat/query/functions.h"
#include "mentat/storage/value.h"

namespace mentat::query::builtins::testing {

using storage::Value;

inline Value L(int64_t v) { return Value::Long(v); }
inline Value D(double v) { return Value::Double(v); }
inline Value S(std::string_view v) { return Value::String(v); }
inline Value K(std::string_view v) { return Value::Keyword(v); }
inline Value N(std::string_view digits) { return Value::BigInt(digits); }
inline Value M(std::string_view digits) { return Value::BigDec(digits); }
inline Value B(bool v) { return Value::Boolean(v); }
inline Value R(int64_t e) { return Value::Ref(e); }
inline Value I(int64_t micros) { return Value::Instant(micros); }

inline constexpr int64_t kMaxLong = std::numeric_limits<int64_t>::max();
inline constexpr int64_t kMinLong = std::numeric_limits<int64_t>::min();
inline const double kNaN = std::numeric_limits<double>::quiet_NaN();
inline const double kInf = std::numeric_limits<double>::infinity();

// The predicate's answer; "error: <message>" tests go through PredStatus.
inline bool Pred(std::string_view name, std::initializer_list<Value> args) {
  std::vector<Value> v(args);
  absl::StatusOr<bool> r = CallPredicate(name, v);
  return r.ok() && *r;
}

[[nodiscard]] inline absl::Status PredStatus(
    std::string_view name, std::initializer_list<Value> args) {
  std::vector<Value> v(args);
  return CallPredicate(name, v).status();
}

// A function's result as text: DebugString of the value, "nil" for no
// result, "error(<code>): <message>" for an error.
inline std::string Fn(std::string_view name,
                      std::initializer_list<Value> args) {
  std::vector<Value> v(args);
  absl::StatusOr<std::optional<Value>> r = CallFunction(name, v);
  if (!r.ok()) {
    return "error(" + absl::StatusCodeToString(r.status().code()) +
           "): " + std::string(r.status().message());
  }
  if (!r->has_value()) return "nil";
  return (*r)->DebugString();
}

}  // namespace mentat::query::builtins::testing

#endif  // MENTAT_QUERY_BUILTINS_BUILTINS_TEST_SUPPORT_H_
