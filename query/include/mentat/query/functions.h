#ifndef MENTAT_QUERY_FUNCTIONS_H_
#define MENTAT_QUERY_FUNCTIONS_H_

#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "mentat/edn/edn_value.h"
#include "mentat/storage/value.h"

namespace mentat::query {

// The pure built-ins of the query language: predicates and functions over
// values that need no database. The functions the executor implements
// itself, because they read the database or make tuples (get-else,
// get-some, missing?, ground, tx-ids, tuple, untuple), are not here;
// tx-data and fulltext pass validation but planning rejects them as not
// supported.
//
// Comparison across types is "no match", not an error, as in Datomic:
// (< 1 "a") is false. Numbers compare across long/double/bigint/bigdec by
// numeric value; refs compare as longs.

// True if `name` is a built-in predicate and `arity` arguments are valid
// for it (= != not= < <= > >= starts-with? ends-with? includes? zero? pos?
// neg? even? odd? nil? some? true? false? ...).
bool IsBuiltinPredicate(std::string_view name, size_t arity);

// True if `name` is a pure built-in function taking `arity` arguments
// (+ - * / quot rem mod inc dec max min str subs count upper-case
// lower-case identity ...).
bool IsBuiltinFunction(std::string_view name, size_t arity);

// Every name of the built-in predicates, or of the functions, bare and
// qualified (clojure.core/<), in no particular order: for the "did you
// mean" of an unknown name.
std::vector<std::string_view> BuiltinPredicateNames();
std::vector<std::string_view> BuiltinFunctionNames();

// Evaluates a predicate. InvalidArgument only for a wrong name or arity;
// a type mismatch is false.
[[nodiscard]] absl::StatusOr<bool> CallPredicate(
    std::string_view name, std::span<const storage::Value> args);

// Evaluates a function. Returns nullopt when the arguments make no result
// (type mismatch, division by zero: the row is dropped, as a failed
// binding), InvalidArgument for a wrong name or arity, and OutOfRange for
// an integer overflow (+ - * inc dec abs quot, named in the message), a
// number out of long's range (long) or too large to compute with.
[[nodiscard]] absl::StatusOr<std::optional<storage::Value>> CallFunction(
    std::string_view name, std::span<const storage::Value> args);

// An aggregate over the values of one find variable within a group.
class Aggregate {
 public:
  virtual ~Aggregate() = default;
  // Adds one value (with :with semantics decided by the caller: it passes
  // a bag or a set as the query asks).
  virtual void Add(const storage::Value& v) = 0;
  // The result: a number, a value, or a vector (distinct, sample, min n,
  // max n). Called once.
  virtual edn::EdnValue Result() = 0;
};

// True if `name` with `arity` arguments (counting the variable) is a
// built-in aggregate: count count-distinct sum avg min max median variance
// stddev distinct rand, and (sample n ?x) (min n ?x) (max n ?x) (rand n ?x).
bool IsAggregate(std::string_view name, size_t arity);

// Makes an aggregate; `n` is the leading constant of (sample n ?x) and
// friends. InvalidArgument for unknown names or bad n.
[[nodiscard]] absl::StatusOr<std::unique_ptr<Aggregate>> MakeAggregate(
    std::string_view name, std::optional<int64_t> n);

// Aggregates whose input is always the distinct values regardless of :with
// (count-distinct, distinct, sample): the caller may dedupe before Add.
bool AggregateWantsDistinct(std::string_view name);

}  // namespace mentat::query

#endif  // MENTAT_QUERY_FUNCTIONS_H_
