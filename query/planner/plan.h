#ifndef MENTAT_QUERY_PLANNER_PLAN_H_
#define MENTAT_QUERY_PLANNER_PLAN_H_

// The planned form of a query: what the executor runs. Built once by
// PlanQuery (query_planner.h), immutable afterwards, shared by every
// execution of a prepared query.
//
// A query is a set of scopes. Each scope is a clause list with its own
// variable slots: the query's :where, and the body of every rule (named
// rules and the anonymous ones the planner makes of `or`, `or-join`, `not`
// and `not-join`). A scope's plan is a list of steps, run as a pipeline of
// batches. Rules are evaluated by tables: one per (rule, which head
// positions the call binds), evaluated with demand (magic sets) and
// semi-naive rounds.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mentat/edn/edn_value.h"
#include "mentat/query/ast.h"
#include "mentat/query/pull_pattern.h"
#include "mentat/storage/keys.h"
#include "mentat/storage/schema.h"
#include "mentat/storage/value.h"

namespace mentat::query::builtins {
struct PredicateInfo;
struct FunctionInfo;
}  // namespace mentat::query::builtins

namespace mentat::query::planner {

using Slot = int32_t;
inline constexpr Slot kNoSlot = -1;

// What the planner knows about a variable of a scope.
struct SlotInfo {
  std::string name;
  // Used where an entity id goes (e, tx, the v of a ref attribute, a rule
  // argument bound to one): integer inputs become refs, keywords idents,
  // [:attr v] lookup refs.
  bool entity = false;
  // Used in an attribute position: keywords are attribute idents.
  bool attribute = false;
  // The value type of the attribute it is the v of, if known.
  std::optional<storage::ValueType> value_type;
  // Holds a tuple made in the query (by `tuple`, or a vector given to
  // `ground`): a kTuple value (tuple_codec.h), as stored tuples are.
  bool tuple = false;
};

// One position of a clause: nothing, a constant, a lookup ref resolved
// when the execution starts, or a variable slot.
struct PlanTerm {
  enum class Kind : uint8_t { kAbsent, kConst, kLookup, kSlot };
  Kind kind = Kind::kAbsent;
  Slot slot = kNoSlot;
  // kSlot: bound by an earlier step (the value is read), else this step
  // binds it.
  bool bound = false;
  // kSlot, not bound: an earlier position of the same clause binds the
  // same variable, so this one only compares.
  bool check = false;
  storage::Value value;               // kConst; kLookup: the unique value
  storage::EntityId lookup_attr = 0;  // kLookup

  bool is_slot() const { return kind == Kind::kSlot; }
  bool is_absent() const { return kind == Kind::kAbsent; }
  // Known before the step runs (constant, lookup ref or bound slot).
  bool known() const {
    return kind == Kind::kConst || kind == Kind::kLookup ||
           (kind == Kind::kSlot && bound);
  }
};

// A bound of a range scan on the v of an AVET scan.
struct RangeBound {
  PlanTerm term;  // kConst, kLookup or a bound slot
  bool inclusive = false;
};

// [e a v tx added] with the access path chosen for it.
struct PatternSpec {
  PlanTerm e, a, v, tx, added;
  // Set when a is a constant.
  const storage::Attribute* attr = nullptr;
  storage::IndexOrder index = storage::IndexOrder::kEavt;
  // How many leading components of `index` the seek prefix holds (0-3).
  int prefix_len = 0;
  std::optional<RangeBound> lower, upper;
  // Hash join: scan once with the parts of the prefix that do not depend
  // on the row (constants, lookup refs, slots in `const_slots` of the
  // scope), hash on `join_slots`, and probe with each row.
  bool hash_join = false;
  // The rows hold e (a bound slot) in ascending order and the step reads
  // AEVT a+e: one cursor walks the attribute forward from row to row
  // (DatomCursor::SeekForward) instead of seeking each entity; a merge
  // join, streaming, with no build side.
  bool entity_order = false;
};

// A predicate clause, or a filter the planner attached to a step.
struct PredicateSpec {
  enum class Kind : uint8_t { kBuiltin, kMissing };
  Kind kind = Kind::kBuiltin;
  const builtins::PredicateInfo* builtin = nullptr;
  std::vector<PlanTerm> args;  // kMissing: e, a
  std::string text;
};

// A function clause with its binding.
struct FunctionSpec {
  enum class Kind : uint8_t {
    kBuiltin,
    kGround,    // args[0] unused: `ground_values`
    kGetElse,   // $ e a default
    kGetSome,   // $ e a1 a2 ... -> [a v]
    kTuple,     // args -> tuple
    kUntuple,   // tuple -> elements
    kTxIds,     // t1 t2 (kAbsent: open) -> tx ids, from the log
    kTxData,    // tx -> [e a v tx added] rows, from the log
    kFulltext,  // attribute search -> [e v tx score] rows, from the postings
  };
  Kind kind = Kind::kBuiltin;
  const builtins::FunctionInfo* builtin = nullptr;
  std::vector<PlanTerm> args;
  // kGround: the constant as values. Scalar binding: one value; tuple and
  // collection bindings: the elements; relation: rows of width
  // `ground_width`.
  std::vector<storage::Value> ground_values;
  int ground_width = 1;
  Binding::Kind binding = Binding::Kind::kScalar;
  // One per bound position of the binding; kAbsent for `_`.
  std::vector<PlanTerm> outputs;
  std::string text;
};

// A call of a rule table: a named rule, or an anonymous rule made of an
// or/not clause.
struct CallSpec {
  int table = -1;
  std::vector<PlanTerm> args;  // one per head position
  // Not: keep the rows whose bound arguments have no answer.
  bool anti = false;
  // A right-linear self call, last in its body, passing the free head
  // variables through: instead of copying the called key's answers into
  // the caller's, it records that the caller's key (the head slots at the
  // bound positions, `link_from`) has all the answers of the called key.
  bool linear = false;
  std::vector<Slot> link_from;
};

struct Step {
  // kFetch: several patterns [?e :attr ?v] of cardinality-one attributes
  // on the same bound entity, read with one EAVT seek and Next (`fetch`).
  enum class Kind : uint8_t { kPattern, kFilter, kFunction, kCall, kFetch };
  Kind kind = Kind::kPattern;
  PatternSpec pattern;
  std::vector<PatternSpec> fetch;  // kFetch, in attribute id order
  FunctionSpec function;
  CallSpec call;
  // Predicates whose last variable this step binds; applied to every row
  // it produces.
  std::vector<PredicateSpec> filters;
  std::string text;         // the clause, for explain and messages
  std::string access;       // "AVET a+v", "hash join on ?i", ...
  std::vector<Slot> binds;  // slots this step binds
  double est_rows = 0;      // estimated rows after the step
  // The clause can never match (an unknown ident as a constant).
  bool never = false;
};

struct ScopePlan {
  std::vector<SlotInfo> slots;
  // Slots bound on entry (inputs, or the bound head positions of a rule).
  std::vector<Slot> entry_slots;
  // Slots whose value is the same in every row of an execution (scalar
  // and tuple inputs): parts of a seek prefix that need no row.
  std::vector<bool> const_slots;
  std::vector<Step> steps;

  int width() const { return static_cast<int>(slots.size()); }
};

// Choices the planner leaves to its caller.
struct PlannerOptions {
  // Walk an attribute in entity order (PatternSpec::entity_order) wherever
  // the rows' order allows it, whatever the counts say: for tests, which
  // check its answers on data too small to choose it.
  bool always_entity_order = false;
};

// One definition of a rule, planned for a table's binding pattern.
struct RuleBody {
  ScopePlan scope;
  // The slot of each head position in `scope`.
  std::vector<Slot> head_slots;
  // Steps of `scope.steps` that call a table of the same fixpoint
  // (positive calls), in order.
  std::vector<int> call_steps;
  std::string text;
};

// A rule evaluated for one binding pattern of its head.
struct TablePlan {
  std::string name;  // "ancestor", or "or@3:5" for anonymous ones
  int arity = 0;
  std::vector<bool> bound;  // per head position: bound by the caller
  std::vector<RuleBody> bodies;
  bool recursive = false;  // reaches itself through positive calls
  // Its recursion is right-linear (see CallSpec::linear): the answers of a
  // key are the base answers of every key linked from it, which callers
  // collect when they look it up. Only top-level calls and `not` call
  // such a table.
  bool linear = false;
  double est_rows = 10;  // answers per demand tuple
  std::vector<int> key_positions() const {
    std::vector<int> out;
    for (int i = 0; i < arity; ++i) {
      if (bound[static_cast<size_t>(i)]) out.push_back(i);
    }
    return out;
  }
};

// One element of :in after the sources and rules.
struct InputPlan {
  InputSpec::Kind kind = InputSpec::Kind::kScalar;
  std::vector<Slot> slots;  // kNoSlot for `_`
  std::string text;         // "?email", "[?x ...]"
};

// One :find element.
struct FindPlan {
  FindElement::Kind kind = FindElement::Kind::kVariable;
  Slot slot = kNoSlot;  // the variable, the aggregated one, the pulled one
  std::string aggregate;
  std::optional<int64_t> aggregate_n;  // (min 3 ?x)
  std::shared_ptr<const PullPattern> pull;
  std::string text;
};

// `[:find ?v (count ?e) :where [?e :a ?v]]` and friends, answered from
// the statistics when the basis is current.
struct StatsShortcut {
  enum class Kind : uint8_t { kNone, kCountByValue, kCountAll, kCountValues };
  Kind kind = Kind::kNone;
  storage::EntityId attr = 0;
  bool count_first = false;  // kCountByValue: (count ?e) is column 0
};

struct QueryPlan {
  std::shared_ptr<const storage::Schema> schema;
  // Datom counts of the attributes the estimates used, to re-plan when
  // they move a lot.
  std::vector<std::pair<storage::EntityId, int64_t>> used_counts;

  std::vector<InputPlan> inputs;
  ScopePlan where;
  // The rule tables steps call, and any the planner weighed for a call it
  // did not pick (ProgramBuilder::Rollback): those are never run.
  std::vector<TablePlan> tables;

  FindSpec::Kind find_kind = FindSpec::Kind::kRelation;
  std::vector<FindPlan> find;
  std::vector<std::string> columns;
  std::vector<Slot> with;
  ParsedQuery::KeysKind keys_kind = ParsedQuery::KeysKind::kNone;
  std::vector<std::string> keys;
  // Rows need a hash set to drop duplicates (the projection drops a
  // variable the others do not determine).
  bool dedupe = true;
  bool has_aggregates = false;
  struct Order {
    int column = 0;
    bool descending = false;
  };
  std::vector<Order> order;
  std::optional<int64_t> limit;
  int64_t offset = 0;
  StatsShortcut shortcut;
};

}  // namespace mentat::query::planner

#endif  // MENTAT_QUERY_PLANNER_PLAN_H_
