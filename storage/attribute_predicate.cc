// The predicates :db.attr/preds may name (attribute_predicate.h). Their
// meanings follow the query engine's built-ins of the same names
// (query/builtins/predicates.cc), which storage cannot call; the query
// tests check that the two agree.

#include "mentat/storage/attribute_predicate.h"

#include <cmath>

namespace mentat::storage {
namespace {

struct Entry {
  AttributePredicate p;
  std::string_view name;
  std::string_view ns;  // the namespace Datomic qualifies it with
};

constexpr Entry kPredicates[] = {
    {AttributePredicate::kZero, "zero?", "clojure.core"},
    {AttributePredicate::kPos, "pos?", "clojure.core"},
    {AttributePredicate::kNeg, "neg?", "clojure.core"},
    {AttributePredicate::kEven, "even?", "clojure.core"},
    {AttributePredicate::kOdd, "odd?", "clojure.core"},
    {AttributePredicate::kTrue, "true?", "clojure.core"},
    {AttributePredicate::kFalse, "false?", "clojure.core"},
    {AttributePredicate::kBlank, "blank?", "clojure.string"},
};

bool IsNumber(ValueType t) {
  return t == ValueType::kLong || t == ValueType::kDouble ||
         t == ValueType::kBigInt || t == ValueType::kBigDec;
}

// -1, 0 or 1; nullopt for NaN and non-numbers.
std::optional<int> Sign(const Value& v) {
  switch (v.type()) {
    case ValueType::kLong:
      return v.as_long() < 0 ? -1 : (v.as_long() > 0 ? 1 : 0);
    case ValueType::kDouble: {
      const double d = v.as_double();
      if (std::isnan(d)) return std::nullopt;
      return d < 0 ? -1 : (d > 0 ? 1 : 0);
    }
    case ValueType::kBigInt:
    case ValueType::kBigDec: {
      // Canonical decimal text: an optional '-', digits, '.' and digits.
      bool zero = true;
      for (char c : v.text()) zero = zero && (c < '1' || c > '9');
      if (zero) return 0;
      return !v.text().empty() && v.text()[0] == '-' ? -1 : 1;
    }
    default:
      return std::nullopt;
  }
}

// 1 odd, 0 even, -1 not an integer.
int Parity(const Value& v) {
  if (v.type() == ValueType::kLong) {
    return static_cast<int>(static_cast<uint64_t>(v.as_long()) & 1);
  }
  if (v.type() == ValueType::kBigInt && !v.text().empty()) {
    const char last = v.text().back();
    if (last >= '0' && last <= '9') return (last - '0') & 1;
  }
  return -1;
}

bool IsBlank(const Value& v) {
  if (v.type() != ValueType::kString) return false;
  for (char c : v.text()) {
    const bool space =
        c == ' ' || (c >= '\t' && c <= '\r') || (c >= '\x1C' && c <= '\x1F');
    if (!space) return false;
  }
  return true;
}

}  // namespace

std::optional<AttributePredicate> FindAttributePredicate(
    std::string_view name) {
  for (const Entry& e : kPredicates) {
    if (name == e.name) return e.p;
    if (name.size() == e.ns.size() + 1 + e.name.size() &&
        name.starts_with(e.ns) && name[e.ns.size()] == '/' &&
        name.ends_with(e.name)) {
      return e.p;
    }
  }
  return std::nullopt;
}

std::string_view AttributePredicateName(AttributePredicate p) {
  for (const Entry& e : kPredicates) {
    if (e.p == p) return e.name;
  }
  return "?";
}

std::string AttributePredicateNames() {
  std::string names;
  for (const Entry& e : kPredicates) {
    if (!names.empty()) names += ", ";
    names += e.name;
  }
  return names;
}

bool AttributePredicateTakes(AttributePredicate p, ValueType type) {
  switch (p) {
    case AttributePredicate::kZero:
    case AttributePredicate::kPos:
    case AttributePredicate::kNeg:
      return IsNumber(type);
    case AttributePredicate::kEven:
    case AttributePredicate::kOdd:
      return type == ValueType::kLong || type == ValueType::kBigInt;
    case AttributePredicate::kTrue:
    case AttributePredicate::kFalse:
      return type == ValueType::kBoolean;
    case AttributePredicate::kBlank:
      return type == ValueType::kString;
  }
  return false;
}

bool AttributePredicateHolds(AttributePredicate p, const Value& v) {
  switch (p) {
    case AttributePredicate::kZero:
      return Sign(v) == 0;
    case AttributePredicate::kPos:
      return Sign(v) == 1;
    case AttributePredicate::kNeg:
      return Sign(v) == -1;
    case AttributePredicate::kEven:
      return Parity(v) == 0;
    case AttributePredicate::kOdd:
      return Parity(v) == 1;
    case AttributePredicate::kTrue:
      return v.type() == ValueType::kBoolean && v.as_bool();
    case AttributePredicate::kFalse:
      return v.type() == ValueType::kBoolean && !v.as_bool();
    case AttributePredicate::kBlank:
      return IsBlank(v);
  }
  return false;
}

}  // namespace mentat::storage
