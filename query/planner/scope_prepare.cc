// ScopeBuilder::Prepare: each clause of the scope as a spec (pattern,
// predicate, function, rule call or `not`) with the slots it needs bound
// before it can be placed.

#include "mentat/base/str_cat.h"
#include "planner/edn_to_value.h"
#include "planner/scope_builder.h"

namespace mentat::query::planner {

using storage::Value;

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

}  // namespace mentat::query::planner
