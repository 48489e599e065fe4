#include "planner/query_planner.h"

#include <algorithm>

#include "mentat/base/str_cat.h"
#include "planner/clause_specs.h"
#include "planner/program_builder.h"

namespace mentat::query::planner {
namespace {

Slot FindSlot(const ScopePlan& scope, const std::string& name) {
  for (size_t i = 0; i < scope.slots.size(); ++i) {
    if (scope.slots[i].name == name) return static_cast<Slot>(i);
  }
  return kNoSlot;
}

std::vector<bool> BoundSlots(const ScopePlan& scope) {
  std::vector<bool> bound(scope.slots.size(), false);
  for (Slot s : scope.entry_slots) bound[s] = true;
  for (const Step& step : scope.steps) {
    for (Slot s : step.binds) bound[s] = true;
  }
  return bound;
}

[[nodiscard]] absl::StatusOr<Slot> BoundSlot(const ScopePlan& scope,
                                             const std::vector<bool>& bound,
                                             const std::string& var,
                                             const Pos& pos,
                                             std::string_view where) {
  const Slot s = FindSlot(scope, var);
  if (s == kNoSlot || !bound[s]) {
    return absl::InvalidArgumentError(
        StrCat(Where(pos), var, " in ", where,
               " is not bound by any clause or input"));
  }
  return s;
}

// [:find ?v (count ?e) :where [?e :a ?v]] and the like.
StatsShortcut FindShortcut(const ParsedQuery& q, const QueryPlan& plan) {
  StatsShortcut none;
  if (q.where.size() != 1 || !q.with.empty() || !plan.inputs.empty() ||
      !plan.tables.empty()) {
    return none;
  }
  for (const InputSpec& in : q.inputs) {
    if (in.kind != InputSpec::Kind::kSource) return none;
  }
  const Clause& c = q.where[0];
  if (c.kind != Clause::Kind::kPattern || c.pattern.terms.size() < 2 ||
      c.pattern.terms.size() > 3) {
    return none;
  }
  const auto& terms = c.pattern.terms;
  if (!terms[0].is_var() || plan.where.steps.size() != 1 ||
      plan.where.steps[0].kind != Step::Kind::kPattern) {
    return none;
  }
  const PatternSpec& p = plan.where.steps[0].pattern;
  if (p.attr == nullptr) return none;
  const std::string& e = terms[0].name;
  const std::string v =
      terms.size() == 3 && terms[2].is_var() ? terms[2].name : "";
  if (terms.size() == 3 && v.empty() && terms[2].kind != Term::Kind::kBlank) {
    return none;
  }
  if (!v.empty() && v == e) return none;
  auto is_count = [](const FindElement& f, const std::string& var) {
    return f.kind == FindElement::Kind::kAggregate &&
           (f.aggregate == "count" || f.aggregate == "count-distinct") &&
           f.aggregate_args.size() == 1 && f.aggregate_args[0].is_var() &&
           f.aggregate_args[0].name == var;
  };
  const auto& find = q.find.elements;
  StatsShortcut s;
  s.attr = p.attr->id;
  if (find.size() == 2 && !v.empty()) {
    for (int i = 0; i < 2; ++i) {
      const FindElement& group = find[static_cast<size_t>(1 - i)];
      if (is_count(find[static_cast<size_t>(i)], e) &&
          group.kind == FindElement::Kind::kVariable && group.var == v) {
        s.kind = StatsShortcut::Kind::kCountByValue;
        s.count_first = i == 0;
        return s;
      }
    }
    return none;
  }
  if (find.size() == 1) {
    if (is_count(find[0], e) && !p.attr->many()) {
      s.kind = StatsShortcut::Kind::kCountAll;
      return s;
    }
    if (!v.empty() && is_count(find[0], v)) {
      s.kind = StatsShortcut::Kind::kCountValues;
      return s;
    }
  }
  return none;
}

}  // namespace

bool ProjectionMayDuplicate(const ScopePlan& scope,
                            const std::vector<Slot>& projected) {
  const int width = scope.width();
  int next_id = width;
  std::vector<std::pair<std::vector<int>, std::vector<int>>> fds;
  std::vector<int> all;
  for (Slot s : scope.entry_slots) all.push_back(s);
  auto id_of = [&](const PlanTerm& t, std::vector<int>* fresh) -> int {
    if (t.is_slot()) {
      if (!t.bound && !t.check) fresh->push_back(t.slot);
      return t.slot;
    }
    if (t.is_absent()) {
      fresh->push_back(next_id);
      return next_id++;
    }
    return -1;  // a constant
  };
  auto ids = [](std::initializer_list<int> xs) {
    std::vector<int> out;
    for (int x : xs) {
      if (x >= 0) out.push_back(x);
    }
    return out;
  };
  std::vector<const PatternSpec*> patterns;
  for (const Step& step : scope.steps) {
    patterns.clear();
    if (step.kind == Step::Kind::kPattern) patterns.push_back(&step.pattern);
    if (step.kind == Step::Kind::kFetch) {
      for (const PatternSpec& p : step.fetch) patterns.push_back(&p);
    }
    for (const PatternSpec* pp : patterns) {
      const PatternSpec& p = *pp;
      std::vector<int> fresh;
      const int e = id_of(p.e, &fresh);
      const int a = id_of(p.a, &fresh);
      const int v = id_of(p.v, &fresh);
      // tx and added follow from the datom outside of history.
      std::vector<int> derived;
      if (p.tx.is_slot() && !p.tx.bound && !p.tx.check) {
        derived.push_back(p.tx.slot);
      }
      if (p.added.is_slot() && !p.added.bound && !p.added.check) {
        derived.push_back(p.added.slot);
      }
      for (int x : fresh) all.push_back(x);
      for (int x : derived) all.push_back(x);
      if (!derived.empty()) fds.push_back({ids({e, a, v}), derived});
      if (p.attr != nullptr) {
        if (!p.attr->many() && v >= 0) fds.push_back({ids({e}), {v}});
        if (p.attr->unique != storage::Unique::kNone && e >= 0) {
          fds.push_back({ids({v}), {e}});
        }
      }
    }
    if (!patterns.empty()) {
      continue;
    } else if (step.kind == Step::Kind::kFunction) {
      std::vector<int> outs;
      for (const PlanTerm& o : step.function.outputs) {
        if (o.is_slot() && !o.bound && !o.check) outs.push_back(o.slot);
      }
      for (int x : outs) all.push_back(x);
      const auto kind = step.function.binding;
      if (kind == Binding::Kind::kScalar || kind == Binding::Kind::kTuple) {
        std::vector<int> lhs;
        for (Slot s : ArgSlots(step.function.args)) lhs.push_back(s);
        fds.push_back({lhs, outs});
      }
    } else {
      for (Slot s : step.binds) all.push_back(s);
    }
  }
  std::vector<bool> known(static_cast<size_t>(next_id), false);
  for (Slot s : projected) {
    if (s >= 0) known[static_cast<size_t>(s)] = true;
  }
  for (int s = 0; s < width; ++s) {
    if (scope.const_slots[static_cast<size_t>(s)]) {
      known[static_cast<size_t>(s)] = true;
    }
  }
  bool changed = true;
  while (changed) {
    changed = false;
    for (const auto& [lhs, rhs] : fds) {
      bool holds = true;
      for (int x : lhs) holds &= known[static_cast<size_t>(x)];
      if (!holds) continue;
      for (int x : rhs) {
        if (!known[static_cast<size_t>(x)]) {
          known[static_cast<size_t>(x)] = true;
          changed = true;
        }
      }
    }
  }
  for (int x : all) {
    if (!known[static_cast<size_t>(x)]) return true;
  }
  return false;
}

absl::StatusOr<std::unique_ptr<QueryPlan>> PlanQuery(
    const ParsedQuery& q, const std::vector<Rule>& rules,
    const std::shared_ptr<const storage::Schema>& schema,
    const storage::Statistics& stats, const PlannerOptions& options) {
  auto plan = std::make_unique<QueryPlan>();
  plan->schema = schema;
  ProgramBuilder program(*schema, stats, rules, options);

  ScopeRequest req;
  req.clauses = &q.where;
  req.owner = "the query";
  int sources = 0;
  for (const InputSpec& in : q.inputs) {
    switch (in.kind) {
      case InputSpec::Kind::kSource:
        if (in.name != "$" || ++sources > 1) {
          return absl::InvalidArgumentError(
              StrCat(Where(in.pos), "unsupported source ", in.name,
                     ": a query reads one database, named $"));
        }
        continue;
      case InputSpec::Kind::kRules:
        continue;
      default:
        break;
    }
    InputPlan input;
    input.kind = in.kind;
    const bool is_const = in.kind == InputSpec::Kind::kScalar ||
                          in.kind == InputSpec::Kind::kTuple;
    if (!is_const) req.entry_rows *= 10;
    for (const std::string& v : in.vars) {
      if (v == "_") continue;
      if (std::find(req.entry_vars.begin(), req.entry_vars.end(), v) !=
          req.entry_vars.end()) {
        return absl::InvalidArgumentError(
            StrCat(Where(in.pos), v, " is bound by two inputs"));
      }
      req.entry_vars.push_back(v);
      req.entry_const.push_back(is_const);
    }
    plan->inputs.push_back(std::move(input));
  }
  absl::StatusOr<ScopePlan> where = PlanScope(program, req);
  if (!where.ok()) return where.status();
  plan->where = *std::move(where);
  absl::Status s = program.Finish();
  if (!s.ok()) return s;
  plan->tables = std::move(program.tables());
  plan->used_counts = program.estimator().used();

  // Input slots, in order.
  size_t k = 0;
  for (const InputSpec& in : q.inputs) {
    if (in.kind == InputSpec::Kind::kSource ||
        in.kind == InputSpec::Kind::kRules) {
      continue;
    }
    InputPlan& input = plan->inputs[k++];
    std::string text;
    for (const std::string& v : in.vars) {
      input.slots.push_back(v == "_" ? kNoSlot : FindSlot(plan->where, v));
      StrAppend(&text, text.empty() ? "" : " ", v);
    }
    switch (in.kind) {
      case InputSpec::Kind::kTuple:
        input.text = StrCat("[", text, "]");
        break;
      case InputSpec::Kind::kCollection:
        input.text = StrCat("[", text, " ...]");
        break;
      case InputSpec::Kind::kRelation:
        input.text = StrCat("[[", text, "]]");
        break;
      default:
        input.text = text;
    }
  }

  const std::vector<bool> bound = BoundSlots(plan->where);
  plan->find_kind = q.find.kind;
  std::vector<Slot> projected;
  for (const FindElement& el : q.find.elements) {
    FindPlan f;
    f.kind = el.kind;
    f.text = el.text;
    switch (el.kind) {
      case FindElement::Kind::kVariable: {
        absl::StatusOr<Slot> slot =
            BoundSlot(plan->where, bound, el.var, el.pos, ":find");
        if (!slot.ok()) return slot.status();
        f.slot = *slot;
        break;
      }
      case FindElement::Kind::kAggregate: {
        // The parser and ValidateQuery checked the name, the arity, the
        // last argument (a variable) and the count of (sample n ?x) and
        // the like (a non-negative integer constant).
        if (el.aggregate_args.size() == 2) {
          f.aggregate_n = el.aggregate_args[0].constant.as_int();
        }
        absl::StatusOr<Slot> slot = BoundSlot(
            plan->where, bound, el.aggregate_args.back().name, el.pos, ":find");
        if (!slot.ok()) return slot.status();
        f.slot = *slot;
        f.aggregate = el.aggregate;
        plan->has_aggregates = true;
        break;
      }
      case FindElement::Kind::kPull: {
        // ValidateQuery checked the pattern, and that its source is
        // declared in :in, which admits only $ (above).
        absl::StatusOr<Slot> slot =
            BoundSlot(plan->where, bound, el.var, el.pos, ":find");
        if (!slot.ok()) return slot.status();
        f.slot = *slot;
        f.pull = el.pull;
        break;
      }
    }
    projected.push_back(f.slot);
    plan->columns.push_back(f.text);
    plan->find.push_back(std::move(f));
  }
  for (const std::string& w : q.with) {
    absl::StatusOr<Slot> slot =
        BoundSlot(plan->where, bound, w, Pos{}, ":with");
    if (!slot.ok()) return slot.status();
    plan->with.push_back(*slot);
    projected.push_back(*slot);
  }
  plan->dedupe = ProjectionMayDuplicate(plan->where, projected);

  // The parser checked that :order names variables of :find, that :limit
  // and :offset are not negative, and that :keys names every element.
  for (const OrderSpec& o : q.order) {
    int column = -1;
    for (size_t i = 0; i < plan->find.size() && column < 0; ++i) {
      const FindElement& el = q.find.elements[i];
      if (el.kind != FindElement::Kind::kAggregate && el.var == o.var) {
        column = static_cast<int>(i);
      }
    }
    plan->order.push_back({column, o.descending});
  }
  plan->limit = q.limit;
  plan->offset = q.offset.value_or(0);
  plan->keys_kind = q.keys_kind;
  plan->keys = q.keys;
  plan->shortcut = FindShortcut(q, *plan);
  return plan;
}

}  // namespace mentat::query::planner
