// PlanScope: orders the clauses of one scope greedily by estimated
// cardinality and picks an access path for each pattern.

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/container/flat_hash_map.h"
#include "mentat/base/str_cat.h"
#include "planner/access_path.h"
#include "planner/clause_specs.h"
#include "planner/edn_to_value.h"
#include "planner/entity_fetch.h"
#include "planner/program_builder.h"

namespace mentat::query::planner {
namespace {

using storage::Value;

class ScopeBuilder {
 public:
  ScopeBuilder(ProgramBuilder& program, const ScopeRequest& request)
      : program_(program), request_(request) {}

  [[nodiscard]] absl::StatusOr<ScopePlan> Build();

 private:
  enum class Kind { kPattern, kPredicate, kFunction, kCall, kNot };
  struct Pending {
    const Clause* clause = nullptr;
    Kind kind = Kind::kPattern;
    bool placed = false;
    std::vector<Slot> needs;  // must be bound before placing
    PatternSpec pattern;      // kPattern
    bool never = false;
    PredicateSpec predicate;  // kPredicate
    FunctionSpec function;    // kFunction
    int rule = -1;            // kCall, kNot
    std::vector<PlanTerm> args;
    bool range_used = false;  // kPredicate: narrowed a scan already
  };
  struct Choice {
    int index = -1;
    bool connected = false;
    double est = 0;
    double cost = 0;
    Access access;
    bool hash_join = false;
    bool entity_order = false;  // AEVT a+e, walked forward (InEntityOrder)
    int table = -1;
  };

  Slot SlotOf(const std::string& name);
  [[nodiscard]] absl::Status Prepare();
  [[nodiscard]] absl::Status PrepareClause(const Clause& c);
  [[nodiscard]] absl::Status CallConstant(const Clause& c,
                                          const edn::EdnValue& constant,
                                          int rule, int pos, PlanTerm* out);
  bool Known(const PlanTerm& t, bool const_only) const;
  bool Ready(const Pending& p) const;
  RangeCandidate FindRange(const Pending& p, bool const_only);
  std::optional<Choice> Evaluate(int index, absl::Status* why);
  void PlaceReady();
  void PlacePattern(const Choice& c);
  void PlaceCall(const Choice& c);
  void MarkBound(const std::vector<Slot>& slots, Step* step);
  PlanTerm Bind(PlanTerm t, std::vector<Slot>* seen);
  [[nodiscard]] absl::Status Unplaced();
  double FilterSelectivity(const Pending& p) const;
  // Makes `c` an in-order walk of the attribute's AEVT datoms when the
  // rows hold the pattern's entity in ascending order and that costs
  // less than its nested-loop or hash join.
  void InEntityOrder(const Pending& p, Choice* c, const Access* indep);
  // Keeps ordered_ true to the rows after `step` (placed as `c`).
  void TrackOrder(const Step& step, const Choice* c);

  ProgramBuilder& program_;
  const ScopeRequest& request_;
  ScopePlan plan_;
  absl::flat_hash_map<std::string, Slot> slots_;
  std::vector<bool> bound_;
  std::vector<Pending> pending_;
  double rows_ = 1;
  // A slot whose entity ids the rows hold in ascending order: the
  // entities of a first step's scan of AVET a+v (one value) or AEVT a,
  // while the steps after it keep their rows' order.
  Slot ordered_ = kNoSlot;
  bool placed_scan_ = false;  // a step other than a filter was placed
  absl::Status error_;
};

Slot ScopeBuilder::SlotOf(const std::string& name) {
  auto it = slots_.find(name);
  if (it != slots_.end()) return it->second;
  const Slot s = static_cast<Slot>(plan_.slots.size());
  SlotInfo info;
  info.name = name;
  plan_.slots.push_back(std::move(info));
  plan_.const_slots.push_back(false);
  bound_.push_back(false);
  slots_.emplace(name, s);
  return s;
}

bool ScopeBuilder::Known(const PlanTerm& t, bool const_only) const {
  switch (t.kind) {
    case PlanTerm::Kind::kConst:
    case PlanTerm::Kind::kLookup:
      return true;
    case PlanTerm::Kind::kSlot:
      return bound_[t.slot] &&
             (!const_only || plan_.const_slots[static_cast<size_t>(t.slot)]);
    case PlanTerm::Kind::kAbsent:
      return false;
  }
  return false;
}

bool ScopeBuilder::Ready(const Pending& p) const {
  for (Slot s : p.needs) {
    if (!bound_[s]) return false;
  }
  return true;
}

absl::Status ScopeBuilder::CallConstant(const Clause& c,
                                        const edn::EdnValue& constant, int rule,
                                        int pos, PlanTerm* out) {
  // The rule's bodies tell what kind of value the position holds.
  SlotInfo info;
  program_.HeadInfo(rule, pos, &info, 0);
  const storage::Schema& schema = program_.schema();
  if (info.entity) {
    absl::StatusOr<EntityConst> e = EdnToEntity(constant, schema);
    if (!e.ok()) return ClauseError(c, Msg(e.status()));
    switch (e->kind) {
      case EntityConst::Kind::kId:
        out->kind = PlanTerm::Kind::kConst;
        out->value = Value::Ref(e->id);
        break;
      case EntityConst::Kind::kNone:
        // No entity has the ident: an id no entity has.
        out->kind = PlanTerm::Kind::kConst;
        out->value = Value::Ref(-1);
        break;
      case EntityConst::Kind::kLookup:
        out->kind = PlanTerm::Kind::kLookup;
        out->lookup_attr = e->lookup_attr;
        out->value = e->lookup_value;
        break;
    }
    return absl::OkStatus();
  }
  absl::StatusOr<Value> v = EdnToValue(constant);
  if (!v.ok()) return ClauseError(c, Msg(v.status()));
  if (info.value_type.has_value()) CoerceValue(*info.value_type, &*v);
  out->kind = PlanTerm::Kind::kConst;
  out->value = *std::move(v);
  return absl::OkStatus();
}

absl::Status ScopeBuilder::PrepareClause(const Clause& c) {
  Pending p;
  p.clause = &c;
  SlotLookup slot = [this](const std::string& n) { return SlotOf(n); };
  const storage::Schema& schema = program_.schema();
  switch (c.kind) {
    case Clause::Kind::kPattern: {
      p.kind = Kind::kPattern;
      absl::Status s = MakePattern(c, schema, slot, &p.pattern, &p.never);
      if (!s.ok()) return s;
      break;
    }
    case Clause::Kind::kPredicate: {
      p.kind = Kind::kPredicate;
      absl::Status s = MakePredicate(c, schema, slot, &p.predicate);
      if (!s.ok()) return s;
      p.needs = ArgSlots(p.predicate.args);
      break;
    }
    case Clause::Kind::kFunction: {
      p.kind = Kind::kFunction;
      absl::Status s = MakeFunction(c, schema, slot, &p.function);
      if (!s.ok()) return s;
      p.needs = ArgSlots(p.function.args);
      break;
    }
    case Clause::Kind::kRuleCall: {
      p.kind = Kind::kCall;
      const RuleCallClause& call = c.rule_call;
      if (call.source != "$") {
        return ClauseError(c, "only the default source $ is supported");
      }
      // ValidateQuery checked the rule exists and takes these arguments
      // (a required one bound or constant, never _); the parser, that none
      // is a source.
      p.rule = program_.FindRule(call.name);
      const RuleDef& rule = program_.rule(p.rule);
      for (size_t i = 0; i < call.args.size(); ++i) {
        const Term& t = call.args[i];
        PlanTerm arg;
        if (t.is_var()) {
          arg.kind = PlanTerm::Kind::kSlot;
          arg.slot = SlotOf(t.name);
          if (rule.required[i]) p.needs.push_back(arg.slot);
        } else if (t.kind == Term::Kind::kConstant) {
          absl::Status s =
              CallConstant(c, t.constant, p.rule, static_cast<int>(i), &arg);
          if (!s.ok()) return s;
        }
        p.args.push_back(std::move(arg));
      }
      break;
    }
    case Clause::Kind::kOr:
    case Clause::Kind::kNot: {
      const bool is_not = c.kind == Clause::Kind::kNot;
      if (is_not ? c.not_clause == nullptr : c.or_clause == nullptr) {
        return ClauseError(c, "malformed clause");
      }
      const std::string& source =
          is_not ? c.not_clause->source : c.or_clause->source;
      if (source != "$") {
        return ClauseError(c, "only the default source $ is supported");
      }
      RuleDef rule;
      rule.name =
          StrCat(is_not ? "not" : "or", "@", c.pos.line, ":", c.pos.column);
      std::vector<std::string> head;
      std::vector<std::string> inner;
      if (is_not) {
        AllVars(c.not_clause->clauses, &inner);
        if (c.not_clause->is_join) {
          head = c.not_clause->join_vars;
        } else {
          // Join on the variables the rest of the scope knows.
          for (const std::string& v : inner) {
            if (slots_.contains(v)) head.push_back(v);
          }
        }
        rule.bodies.push_back({&c.not_clause->clauses, head, c.text});
      } else {
        if (c.or_clause->is_join) {
          head = c.or_clause->join_vars;
        } else {
          for (const auto& branch : c.or_clause->branches) {
            AllVars(branch, &head);
          }
        }
        for (const auto& branch : c.or_clause->branches) {
          rule.bodies.push_back({&branch, head, c.text});
        }
      }
      rule.arity = static_cast<int>(head.size());
      rule.required.assign(head.size(), is_not);
      if (!is_not) {
        for (const std::string& r : c.or_clause->required_vars) {
          auto it = std::find(head.begin(), head.end(), r);
          if (it != head.end()) rule.required[it - head.begin()] = true;
        }
      }
      p.kind = is_not ? Kind::kNot : Kind::kCall;
      for (size_t i = 0; i < head.size(); ++i) {
        PlanTerm arg;
        arg.kind = PlanTerm::Kind::kSlot;
        arg.slot = SlotOf(head[i]);
        if (rule.required[i]) p.needs.push_back(arg.slot);
        p.args.push_back(arg);
      }
      p.rule = program_.AddRule(std::move(rule));
      break;
    }
  }
  pending_.push_back(std::move(p));
  return absl::OkStatus();
}

absl::Status ScopeBuilder::Prepare() {
  for (size_t i = 0; i < request_.entry_vars.size(); ++i) {
    const Slot s = SlotOf(request_.entry_vars[i]);
    bound_[s] = true;
    plan_.const_slots[s] =
        i < request_.entry_const.size() && request_.entry_const[i];
    plan_.entry_slots.push_back(s);
  }
  for (const std::string& v : request_.extra_vars) SlotOf(v);
  // Slots for the variables the clauses share with this scope first, so
  // that the vars of `not` bodies can be told apart from local ones.
  for (const Clause& c : *request_.clauses) {
    if (c.kind == Clause::Kind::kNot) {
      if (c.not_clause != nullptr && c.not_clause->is_join) {
        for (const std::string& v : c.not_clause->join_vars) SlotOf(v);
      }
      continue;
    }
    if (c.kind == Clause::Kind::kOr && c.or_clause != nullptr &&
        c.or_clause->is_join) {
      for (const std::string& v : c.or_clause->join_vars) SlotOf(v);
      continue;
    }
    std::vector<std::string> vars;
    AllVars(c, &vars);
    for (const std::string& v : vars) SlotOf(v);
  }
  for (const Clause& c : *request_.clauses) {
    absl::Status s = PrepareClause(c);
    if (!s.ok()) return s;
  }
  for (SlotInfo& info : plan_.slots) {
    CollectVarInfo(program_, *request_.clauses, info.name, &info, 0);
  }
  return absl::OkStatus();
}

RangeCandidate ScopeBuilder::FindRange(const Pending& p, bool const_only) {
  RangeCandidate r;
  const PatternSpec& pat = p.pattern;
  if (!pat.v.is_slot() || bound_[pat.v.slot] || pat.attr == nullptr ||
      !RangeableType(pat.attr->type)) {
    return r;
  }
  for (size_t i = 0; i < pending_.size(); ++i) {
    const Pending& q = pending_[i];
    if (q.placed || q.kind != Kind::kPredicate ||
        q.predicate.kind != PredicateSpec::Kind::kBuiltin ||
        q.predicate.args.size() != 2) {
      continue;
    }
    int op = ComparisonOp(q.clause->predicate.fn);
    if (op == 0) continue;
    const PlanTerm& a = q.predicate.args[0];
    const PlanTerm& b = q.predicate.args[1];
    const PlanTerm* other = nullptr;
    if (a.is_slot() && a.slot == pat.v.slot) {
      other = &b;
    } else if (b.is_slot() && b.slot == pat.v.slot) {
      other = &a;
      op = op <= 2 ? op + 2 : op - 2;  // (< X ?v) is (> ?v X)
    } else {
      continue;
    }
    if (!Known(*other, const_only)) continue;
    const bool lower = op >= 3;
    RangeBound bound;
    bound.term = *other;
    bound.term.bound = other->is_slot();
    bound.inclusive = op == 2 || op == 4;
    std::optional<RangeBound>& slot = lower ? r.lower : r.upper;
    if (slot.has_value()) continue;
    slot = std::move(bound);
    r.predicates.push_back(static_cast<int>(i));
  }
  return r;
}

double ScopeBuilder::FilterSelectivity(const Pending& p) const {
  if (p.range_used) return 1;
  if (p.kind == Kind::kNot) return 0.7;
  if (p.predicate.kind != PredicateSpec::Kind::kBuiltin) return 0.5;
  return ComparisonOp(p.clause->predicate.fn) != 0 ? kRangeGuess
                                                   : kPredicateGuess;
}

std::optional<ScopeBuilder::Choice> ScopeBuilder::Evaluate(int index,
                                                           absl::Status* why) {
  Pending& p = pending_[static_cast<size_t>(index)];
  Choice c;
  c.index = index;
  if (p.kind == Kind::kPattern) {
    if (p.never) {
      c.connected = true;
      c.est = 0;
      c.access.usable = true;
      c.access.description = "matches nothing";
      return c;
    }
    auto known = [&](const PlanTerm& t) { return Known(t, false); };
    RangeCandidate range = FindRange(p, false);
    c.access = ChooseAccess(p.pattern, known, range, program_.estimator());
    if (!c.access.usable) return std::nullopt;
    for (const PlanTerm* t :
         {&p.pattern.e, &p.pattern.a, &p.pattern.v, &p.pattern.tx}) {
      if (t->is_slot() && bound_[t->slot] && !plan_.const_slots[t->slot]) {
        c.connected = true;
      }
    }
    c.connected = c.connected || rows_ <= 1;
    double out = c.access.per_row;
    // Predicates this pattern makes ready, apart from the range ones.
    std::vector<Slot> after;
    for (const PlanTerm* t : {&p.pattern.e, &p.pattern.a, &p.pattern.v,
                              &p.pattern.tx, &p.pattern.added}) {
      if (t->is_slot()) after.push_back(t->slot);
    }
    for (size_t i = 0; i < pending_.size(); ++i) {
      const Pending& q = pending_[i];
      if (q.placed || q.kind != Kind::kPredicate) continue;
      if (std::find(c.access.range.predicates.begin(),
                    c.access.range.predicates.end(),
                    static_cast<int>(i)) != c.access.range.predicates.end()) {
        continue;
      }
      bool ready = true, uses = false;
      for (Slot s : q.needs) {
        const bool here =
            std::find(after.begin(), after.end(), s) != after.end();
        uses |= here && !bound_[s];
        ready &= bound_[s] || here;
      }
      if (ready && uses) out *= FilterSelectivity(q);
    }
    c.est = rows_ * out;
    c.cost = rows_ * (kSeekCost + c.access.per_row);
    const Access by_row = c.access;
    if (rows_ > 1) {
      auto const_known = [&](const PlanTerm& t) { return Known(t, true); };
      RangeCandidate crange = FindRange(p, true);
      Access indep =
          ChooseAccess(p.pattern, const_known, crange, program_.estimator());
      if (indep.usable) {
        const double hash_cost = indep.per_row + rows_;
        if (hash_cost < c.cost) {
          c.cost = hash_cost;
          c.hash_join = true;
          c.access = std::move(indep);
        }
      }
    }
    if (ordered_ != kNoSlot) {
      Choice walk = c;
      walk.access = by_row;
      walk.hash_join = false;
      InEntityOrder(p, &walk, c.hash_join ? &c.access : nullptr);
      if (walk.entity_order) c = std::move(walk);
    }
    return c;
  }
  // Calls of rules and `or`.
  if (!Ready(p)) return std::nullopt;
  const RuleDef& rule = program_.rule(p.rule);
  std::vector<bool> bound;
  for (const PlanTerm& a : p.args) {
    bound.push_back(Known(a, false));
    if (a.is_slot() && bound_[a.slot] && !plan_.const_slots[a.slot]) {
      c.connected = true;
    }
  }
  c.connected = c.connected || rows_ <= 1;
  const size_t mark = program_.tables().size();
  absl::StatusOr<int> table = program_.Table(p.rule, bound);
  if (!table.ok()) {
    program_.Rollback(mark);
    if (why->ok()) *why = table.status();
    return std::nullopt;
  }
  c.table = *table;
  const double per = program_.tables()[static_cast<size_t>(*table)].est_rows;
  c.est = rows_ * per;
  c.cost = rows_ * (kSeekCost + per);
  (void)rule;
  return c;
}

void ScopeBuilder::InEntityOrder(const Pending& p, Choice* c,
                                 const Access* indep) {
  const PatternSpec& pat = p.pattern;
  const storage::Attribute* attr = pat.attr;
  // The entity is the ordered slot, the attribute a constant, and the
  // value not known (a known one is a seek of e+a+v in EAVT).
  if (attr == nullptr || !pat.e.is_slot() || pat.e.slot != ordered_ ||
      !bound_[ordered_] || Known(pat.v, false) ||
      c->access.index != storage::IndexOrder::kEavt ||
      c->access.prefix_len != 2) {
    return;
  }
  const bool always = program_.options().always_entity_order;
  if (!always && rows_ < kOrderedMinRows) return;
  Estimator& est = program_.estimator();
  // Datoms of the attribute between one row's entity and the next, when
  // the rows spread over its entities: a walk steps over them with Next
  // where a nested loop seeks. Sparse rows leave that to the nested loop,
  // whose EAVT seeks have the entity caches and bloom filters.
  const double gap = est.Datoms(attr->id) / rows_;
  if (!always && gap > kOrderedMaxGap) return;
  const double per = est.PerEntity(*attr);
  // Ties go to the walk: where it seeks as often as the nested loop, its
  // seeks land beside the last, in blocks it reads once.
  const double walk = rows_ * (std::min(gap, kSeekCost) + per);
  double other = rows_ * (kSeekCost + per);
  if (indep != nullptr) {
    // A hashed datom costs about three read in order (the table's memory
    // and its cache misses), a probe about two; and no row passes the join
    // before the whole build side is read.
    other = kHashBuildCost * indep->per_row + kHashProbeCost * rows_;
  }
  if (!always && walk > other) return;
  c->entity_order = true;
  c->cost = walk;
  c->access.index = storage::IndexOrder::kAevt;
  c->access.prefix_len = 2;
  c->access.per_row = per;
  // Range predicates bound the values read per entity, as for column
  // probes: a quick no before the filters (which stay) decide.
  c->access.range =
      RangeableType(attr->type) ? FindRange(p, false) : RangeCandidate();
  c->access.description = "AEVT a+e in entity order";
}

void ScopeBuilder::TrackOrder(const Step& step, const Choice* c) {
  const bool first = !placed_scan_;
  placed_scan_ = true;
  if (step.kind != Step::Kind::kPattern || c == nullptr) {
    ordered_ = kNoSlot;  // functions and calls: their order is their own
    return;
  }
  const PatternSpec& s = step.pattern;
  if (first) {
    // One value of AVET, or AEVT by attribute alone, holds its entities in
    // ascending order (history: a datom's assertion, then its retraction).
    const bool fresh_entity = s.e.is_slot() && !s.e.bound && !s.e.check;
    const bool scan =
        (s.index == storage::IndexOrder::kAvet && s.prefix_len == 2) ||
        (s.index == storage::IndexOrder::kAevt && s.prefix_len == 1 &&
         !s.lower.has_value() && !s.upper.has_value());
    ordered_ = fresh_entity && scan && request_.entry_rows <= 1 && !c->hash_join
                   ? s.e.slot
                   : kNoSlot;
    return;
  }
  if (ordered_ == kNoSlot) return;
  // A hash join's probes and a nested loop that seeks the same prefix for
  // every row emit in the rows' order; sorted probes reorder a batch by
  // their prefix, which keeps the order when the prefix starts with the
  // ordered entity.
  const bool by_entity =
      s.e.is_slot() && s.e.slot == ordered_ &&
      (c->entity_order || (s.index == storage::IndexOrder::kEavt &&
                           s.prefix_len >= 1 && !c->hash_join));
  if (!(c->hash_join || by_entity || !c->connected)) ordered_ = kNoSlot;
}

PlanTerm ScopeBuilder::Bind(PlanTerm t, std::vector<Slot>* seen) {
  if (!t.is_slot()) return t;
  t.bound = bound_[t.slot];
  if (!t.bound) {
    if (std::find(seen->begin(), seen->end(), t.slot) != seen->end()) {
      t.check = true;
    } else {
      seen->push_back(t.slot);
    }
  }
  return t;
}

void ScopeBuilder::MarkBound(const std::vector<Slot>& slots, Step* step) {
  for (Slot s : slots) {
    if (!bound_[s]) {
      bound_[s] = true;
      step->binds.push_back(s);
    }
  }
}

void ScopeBuilder::PlacePattern(const Choice& c) {
  Pending& p = pending_[static_cast<size_t>(c.index)];
  p.placed = true;
  Step step;
  step.kind = Step::Kind::kPattern;
  step.text = p.clause->text;
  step.never = p.never;
  std::vector<Slot> seen;
  PatternSpec& s = step.pattern;
  s = p.pattern;
  s.e = Bind(p.pattern.e, &seen);
  s.a = Bind(p.pattern.a, &seen);
  s.v = Bind(p.pattern.v, &seen);
  s.tx = Bind(p.pattern.tx, &seen);
  s.added = Bind(p.pattern.added, &seen);
  s.index = c.access.index;
  s.prefix_len = c.access.prefix_len;
  s.lower = c.access.range.lower;
  s.upper = c.access.range.upper;
  s.hash_join = c.hash_join;
  s.entity_order = c.entity_order;
  step.access = c.access.description;
  if (c.hash_join) {
    std::string on;
    for (const PlanTerm* t : {&s.e, &s.a, &s.v, &s.tx}) {
      if (t->is_slot() && t->bound && !plan_.const_slots[t->slot]) {
        StrAppend(&on, on.empty() ? "" : " ", plan_.slots[t->slot].name);
      }
    }
    step.access = StrCat("hash join on [", on, "] with ", step.access);
  }
  for (int i : c.access.range.predicates) {
    pending_[static_cast<size_t>(i)].range_used = true;
  }
  MarkBound(seen, &step);
  rows_ = c.est;
  step.est_rows = rows_;
  TrackOrder(step, &c);
  plan_.steps.push_back(std::move(step));
}

void ScopeBuilder::PlaceCall(const Choice& c) {
  Pending& p = pending_[static_cast<size_t>(c.index)];
  p.placed = true;
  Step step;
  step.kind = Step::Kind::kCall;
  step.text = p.clause->text;
  step.call.table = c.table;
  std::vector<Slot> seen;
  for (const PlanTerm& a : p.args) step.call.args.push_back(Bind(a, &seen));
  const TablePlan& t = program_.tables()[static_cast<size_t>(c.table)];
  step.access = StrCat("rule ", t.name, " (", t.bodies.size(),
                       t.bodies.size() == 1 ? " body" : " bodies", ")");
  MarkBound(seen, &step);
  rows_ = c.est;
  step.est_rows = rows_;
  TrackOrder(step, nullptr);
  plan_.steps.push_back(std::move(step));
}

void ScopeBuilder::PlaceReady() {
  bool changed = true;
  while (changed) {
    changed = false;
    for (Pending& p : pending_) {
      if (p.placed || p.kind != Kind::kPredicate || !Ready(p)) continue;
      if (plan_.steps.empty()) {
        Step filter;
        filter.kind = Step::Kind::kFilter;
        filter.text = "entry";
        filter.access = "filter the inputs";
        plan_.steps.push_back(std::move(filter));
      }
      Step& last = plan_.steps.back();
      PredicateSpec spec = p.predicate;
      for (PlanTerm& a : spec.args) a.bound = a.is_slot();
      last.filters.push_back(std::move(spec));
      rows_ *= FilterSelectivity(p);
      last.est_rows = rows_;
      p.placed = true;
    }
    for (Pending& p : pending_) {
      if (p.placed || !Ready(p)) continue;
      if (p.kind == Kind::kFunction) {
        p.placed = true;
        Step step;
        step.kind = Step::Kind::kFunction;
        step.text = p.clause->text;
        step.function = p.function;
        for (PlanTerm& a : step.function.args) a.bound = a.is_slot();
        std::vector<Slot> seen;
        for (PlanTerm& o : step.function.outputs) o = Bind(o, &seen);
        step.access = "function";
        MarkBound(seen, &step);
        if (p.function.binding == Binding::Kind::kCollection ||
            p.function.binding == Binding::Kind::kRelation) {
          const double n =
              p.function.kind == FunctionSpec::Kind::kGround
                  ? static_cast<double>(p.function.ground_values.size()) /
                        std::max(1, p.function.ground_width)
                  : 10.0;
          rows_ *= std::max(1.0, n);
        }
        step.est_rows = rows_;
        TrackOrder(step, nullptr);
        plan_.steps.push_back(std::move(step));
        changed = true;
        break;
      }
      if (p.kind == Kind::kNot) {
        std::vector<bool> bound(p.args.size(), true);
        absl::StatusOr<int> table = program_.Table(p.rule, bound);
        if (!table.ok()) {
          error_ = table.status();
          p.placed = true;
          return;
        }
        p.placed = true;
        Step step;
        step.kind = Step::Kind::kCall;
        step.text = p.clause->text;
        step.call.table = *table;
        step.call.anti = true;
        for (PlanTerm a : p.args) {
          a.bound = true;
          step.call.args.push_back(a);
        }
        step.access = "anti join";
        rows_ *= FilterSelectivity(p);
        step.est_rows = rows_;
        TrackOrder(step, nullptr);
        plan_.steps.push_back(std::move(step));
        changed = true;
        break;
      }
    }
  }
}

absl::Status ScopeBuilder::Unplaced() {
  for (const Pending& p : pending_) {
    if (p.placed) continue;
    std::string unbound;
    for (Slot s : p.needs) {
      if (!bound_[s]) {
        StrAppend(&unbound, unbound.empty() ? "" : " ", plan_.slots[s].name);
      }
    }
    switch (p.kind) {
      case Kind::kPattern:
        return ClauseError(*p.clause,
                           "insufficient binding: the pattern has no bound "
                           "entity, attribute or value to look it up by, so "
                           "it would scan the whole database; bind one of "
                           "its variables first");
      case Kind::kPredicate:
      case Kind::kFunction:
        return ClauseError(*p.clause,
                           StrCat("insufficient binding: ", unbound,
                                  " must be bound by another clause first"));
      case Kind::kNot:
        return ClauseError(*p.clause,
                           StrCat("insufficient binding: the join variables ",
                                  unbound, " must be bound before not"));
      case Kind::kCall:
        return ClauseError(*p.clause,
                           StrCat("insufficient binding: ", unbound,
                                  " must be bound before this call"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<ScopePlan> ScopeBuilder::Build() {
  absl::Status s = Prepare();
  if (!s.ok()) return s;
  rows_ = request_.entry_rows;
  PlaceReady();
  if (!error_.ok()) return error_;
  while (true) {
    std::optional<Choice> best;
    absl::Status why;
    for (size_t i = 0; i < pending_.size(); ++i) {
      const Pending& p = pending_[i];
      if (p.placed || (p.kind != Kind::kPattern && p.kind != Kind::kCall)) {
        continue;
      }
      std::optional<Choice> c = Evaluate(static_cast<int>(i), &why);
      if (!c.has_value()) continue;
      if (!best.has_value() ||
          std::make_tuple(!c->connected, c->est, c->cost) <
              std::make_tuple(!best->connected, best->est, best->cost)) {
        best = std::move(c);
      }
    }
    if (!best.has_value()) {
      if (!why.ok()) {
        bool any_call = false;
        for (const Pending& p : pending_) {
          any_call |= !p.placed && p.kind == Kind::kCall;
        }
        if (any_call) return why;
      }
      break;
    }
    if (pending_[static_cast<size_t>(best->index)].kind == Kind::kPattern) {
      PlacePattern(*best);
    } else {
      PlaceCall(*best);
    }
    PlaceReady();
    if (!error_.ok()) return error_;
  }
  s = Unplaced();
  if (!s.ok()) return s;
  FuseEntityLookups(&plan_);
  return std::move(plan_);
}

}  // namespace

absl::StatusOr<ScopePlan> PlanScope(ProgramBuilder& program,
                                    const ScopeRequest& request) {
  ScopeBuilder builder(program, request);
  return builder.Build();
}

}  // namespace mentat::query::planner
