#ifndef MENTAT_QUERY_AST_H_
#define MENTAT_QUERY_AST_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mentat/edn/edn_value.h"
#include "mentat/query/pull_pattern.h"

namespace mentat::query {

// The parsed form of a Datalog query (Datomic's dialect with Mentat's
// :order/:limit/:offset), before validation and planning. Positions are
// 1-based line/column in the query text, for error messages.

struct Pos {
  uint32_t line = 0;
  uint32_t column = 0;
};

// A term in a clause or a function call.
struct Term {
  enum class Kind : uint8_t {
    kVariable,  // ?x           (name: "?x")
    kConstant,  // 42, "s", :kw, #inst ..., [:user/email "x"] lookup refs
    kBlank,     // _
    kSource,    // $ or $name   (name: "$", "$hist")
  };
  Kind kind = Kind::kBlank;
  std::string name;        // kVariable, kSource
  edn::EdnValue constant;  // kConstant
  Pos pos;

  bool is_var() const { return kind == Kind::kVariable; }
};

// How a function expression binds its result.
struct Binding {
  enum class Kind : uint8_t {
    kScalar,      // ?x
    kTuple,       // [?a ?b]       (_ allowed)
    kCollection,  // [?x ...]
    kRelation,    // [[?a ?b]]     (_ allowed)
  };
  Kind kind = Kind::kScalar;
  std::vector<std::string> vars;  // "_" for an ignored position
  Pos pos;
};

struct Clause;

// [$src? e a v tx? added?]: 1 to 5 terms.
struct PatternClause {
  std::string source = "$";
  std::vector<Term> terms;
};

// [(pred arg ...)]
struct PredicateClause {
  std::string fn;  // "<", "starts-with?", "missing?", ...
  std::vector<Term> args;
};

// [(fn arg ...) binding]
struct FunctionClause {
  std::string fn;  // "+", "str", "ground", "get-else", "tuple", ...
  std::vector<Term> args;
  Binding binding;
};

// (rule-name arg ...) or ($src rule-name arg ...)
struct RuleCallClause {
  std::string source = "$";
  std::string name;
  std::vector<Term> args;
};

// (not clause ...) / (not-join [?a ...] clause ...)
struct NotClause {
  std::string source = "$";
  bool is_join = false;
  std::vector<std::string> join_vars;  // not-join only
  std::vector<Clause> clauses;
};

// (or branch ...) / (or-join [?a [?req] ...] branch ...). Each branch is
// one clause or an (and clause ...) group, stored as a list of clauses.
struct OrClause {
  std::string source = "$";
  bool is_join = false;
  std::vector<std::string> join_vars;      // or-join: all join vars
  std::vector<std::string> required_vars;  // or-join: the [?req] ones
  std::vector<std::vector<Clause>> branches;
};

struct Clause {
  enum class Kind : uint8_t {
    kPattern,
    kPredicate,
    kFunction,
    kRuleCall,
    kNot,
    kOr
  };
  Kind kind = Kind::kPattern;
  PatternClause pattern;
  PredicateClause predicate;
  FunctionClause function;
  RuleCallClause rule_call;
  std::shared_ptr<NotClause> not_clause;  // shared: clauses nest
  std::shared_ptr<OrClause> or_clause;
  Pos pos;
  std::string text;  // the clause as printed EDN, for messages and explain
};

// One rule definition: [(name ?a [?req] ?b) clause ...]. A rule name with
// several definitions is their union.
struct Rule {
  std::string name;
  std::vector<std::string> required_vars;  // the [?req] bound vars
  std::vector<std::string> vars;           // all head vars, in order
  std::vector<Clause> body;
  Pos pos;
};

// One element of :find.
struct FindElement {
  enum class Kind : uint8_t { kVariable, kAggregate, kPull };
  Kind kind = Kind::kVariable;
  std::string var;  // kVariable; kPull: the entity var
  // kAggregate: (count ?x), (sum ?x), (count-distinct ?x), (sample 5 ?x),
  // (min 3 ?x), custom names kept as written.
  std::string aggregate;
  std::vector<Term> aggregate_args;  // the last one is the variable
  // kPull: (pull ?e pattern) or (pull $src ?e pattern)
  std::string pull_source = "$";
  std::shared_ptr<const PullPattern> pull;
  Pos pos;
  std::string text;  // column name: "?x", "(count ?i)", "(pull ?e [*])"
};

struct FindSpec {
  enum class Kind : uint8_t {
    kRelation,    // :find ?a ?b
    kCollection,  // :find [?a ...]
    kTuple,       // :find [?a ?b]
    kScalar,      // :find ?a .
  };
  Kind kind = Kind::kRelation;
  std::vector<FindElement> elements;
};

// One element of :in.
struct InputSpec {
  enum class Kind : uint8_t {
    kSource,      // $ or $name
    kRules,       // %
    kScalar,      // ?x
    kTuple,       // [?a ?b]
    kCollection,  // [?x ...]
    kRelation,    // [[?a ?b]]
  };
  Kind kind = Kind::kScalar;
  std::string name;               // kSource: "$"/"$hist"
  std::vector<std::string> vars;  // binding vars ("_" allowed)
  Pos pos;
};

struct OrderSpec {
  std::string var;
  bool descending = false;
};

struct ParsedQuery {
  FindSpec find;
  // :keys/:strs/:syms: return each row as a map with these keys.
  enum class KeysKind : uint8_t { kNone, kKeys, kStrs, kSyms };
  KeysKind keys_kind = KeysKind::kNone;
  std::vector<std::string> keys;
  std::vector<std::string> with;
  std::vector<InputSpec> inputs;  // defaults to [$] when :in is absent
  std::vector<Clause> where;
  std::vector<OrderSpec> order;
  std::optional<int64_t> limit;
  std::optional<int64_t> offset;
};

}  // namespace mentat::query

#endif  // MENTAT_QUERY_AST_H_
