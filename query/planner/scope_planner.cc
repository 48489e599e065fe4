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
#include "planner/scope_builder.h"

namespace mentat::query::planner {

using storage::Value;

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

absl::StatusOr<ScopePlan> PlanScope(ProgramBuilder& program,
                                    const ScopeRequest& request) {
  ScopeBuilder builder(program, request);
  return builder.Build();
}

}  // namespace mentat::query::planner
