#include "planner/program_builder.h"

#include <algorithm>
#include <functional>

#include "mentat/base/str_cat.h"

namespace mentat::query::planner {

namespace {
constexpr int kMaxInfoDepth = 4;
}  // namespace

ProgramBuilder::ProgramBuilder(const storage::Schema& schema,
                               const storage::Statistics& stats,
                               const std::vector<Rule>& rules,
                               const PlannerOptions& options)
    : schema_(schema), estimator_(schema, stats), options_(options) {
  for (const Rule& r : rules) {
    auto it = named_.find(r.name);
    int id;
    if (it == named_.end()) {
      id = static_cast<int>(rules_.size());
      RuleDef def;
      def.name = r.name;
      def.arity = static_cast<int>(r.vars.size());
      def.required.assign(r.vars.size(), false);
      rules_.push_back(std::move(def));
      named_.emplace(r.name, id);
    } else {
      id = it->second;
    }
    RuleDef& def = rules_[static_cast<size_t>(id)];
    // Definitions of another arity are a validation error; skip them here.
    if (static_cast<int>(r.vars.size()) != def.arity) continue;
    for (const std::string& req : r.required_vars) {
      auto pos = std::find(r.vars.begin(), r.vars.end(), req);
      if (pos != r.vars.end()) def.required[pos - r.vars.begin()] = true;
    }
    std::string text = StrCat("(", r.name);
    for (const std::string& v : r.vars) StrAppend(&text, " ", v);
    StrAppend(&text, ")");
    def.bodies.push_back({&r.body, r.vars, std::move(text)});
  }
}

int ProgramBuilder::FindRule(std::string_view name) const {
  auto it = named_.find(name);
  return it == named_.end() ? -1 : it->second;
}

int ProgramBuilder::AddRule(RuleDef rule) {
  rules_.push_back(std::move(rule));
  return static_cast<int>(rules_.size()) - 1;
}

absl::StatusOr<int> ProgramBuilder::Table(int rule,
                                          const std::vector<bool>& bound) {
  auto key = std::make_pair(rule, bound);
  auto it = table_ids_.find(key);
  if (it != table_ids_.end()) return it->second;
  const RuleDef& def = rules_[static_cast<size_t>(rule)];
  const int id = static_cast<int>(tables_.size());
  TablePlan table;
  table.name = def.name;
  table.arity = def.arity;
  table.bound = bound;
  tables_.push_back(std::move(table));
  table_rule_.push_back(rule);
  in_progress_.push_back(true);
  table_ids_.emplace(key, id);

  double est = 0;
  for (const RuleDef::Body& b : def.bodies) {
    ScopeRequest req;
    req.clauses = b.clauses;
    req.owner = StrCat("rule ", def.name);
    for (size_t i = 0; i < b.head.size(); ++i) {
      std::vector<std::string>& into =
          bound[i] ? req.entry_vars : req.extra_vars;
      if (std::find(req.entry_vars.begin(), req.entry_vars.end(), b.head[i]) ==
              req.entry_vars.end() &&
          std::find(req.extra_vars.begin(), req.extra_vars.end(), b.head[i]) ==
              req.extra_vars.end()) {
        into.push_back(b.head[i]);
      }
    }
    req.entry_const.assign(req.entry_vars.size(), false);
    absl::StatusOr<ScopePlan> scope = PlanScope(*this, req);
    if (!scope.ok()) return scope.status();
    RuleBody body;
    body.text = b.text;
    body.scope = *std::move(scope);
    std::vector<bool> bound_slots(body.scope.slots.size(), false);
    for (Slot s : body.scope.entry_slots) bound_slots[s] = true;
    for (const Step& step : body.scope.steps) {
      for (Slot s : step.binds) bound_slots[s] = true;
    }
    for (const std::string& var : b.head) {
      Slot slot = kNoSlot;
      for (size_t s = 0; s < body.scope.slots.size(); ++s) {
        if (body.scope.slots[s].name == var) slot = static_cast<Slot>(s);
      }
      if (slot == kNoSlot || !bound_slots[slot]) {
        return absl::InvalidArgumentError(
            StrCat(def.name.find('@') == std::string::npos ? "rule " : "",
                   def.name, ": ", var, " is not bound by ", b.text));
      }
      body.head_slots.push_back(slot);
    }
    for (size_t i = 0; i < body.scope.steps.size(); ++i) {
      const Step& step = body.scope.steps[i];
      if (step.kind == Step::Kind::kCall && !step.call.anti) {
        body.call_steps.push_back(static_cast<int>(i));
      }
    }
    est += body.scope.steps.empty() ? 1 : body.scope.steps.back().est_rows;
    tables_[static_cast<size_t>(id)].bodies.push_back(std::move(body));
  }
  tables_[static_cast<size_t>(id)].est_rows = std::clamp(est, 1.0, 1e9);
  in_progress_[static_cast<size_t>(id)] = false;
  return id;
}

void ProgramBuilder::Rollback(size_t mark) {
  if (mark >= tables_.size()) return;
  tables_.resize(mark);
  table_rule_.resize(mark);
  in_progress_.resize(mark);
  for (auto it = table_ids_.begin(); it != table_ids_.end();) {
    if (static_cast<size_t>(it->second) >= mark) {
      it = table_ids_.erase(it);
    } else {
      ++it;
    }
  }
}

void ProgramBuilder::HeadInfo(int rule, int pos, SlotInfo* info,
                              int depth) const {
  if (depth > kMaxInfoDepth) return;
  const RuleDef& def = rules_[static_cast<size_t>(rule)];
  for (const RuleDef::Body& b : def.bodies) {
    if (pos < static_cast<int>(b.head.size())) {
      CollectVarInfo(*this, *b.clauses, b.head[static_cast<size_t>(pos)], info,
                     depth + 1);
    }
  }
}

absl::Status ProgramBuilder::Finish() {
  const size_t n = tables_.size();
  std::vector<std::vector<int>> positive(n), any(n);
  for (size_t t = 0; t < n; ++t) {
    for (const RuleBody& body : tables_[t].bodies) {
      for (const Step& step : body.scope.steps) {
        if (step.kind != Step::Kind::kCall) continue;
        any[t].push_back(step.call.table);
        if (!step.call.anti) positive[t].push_back(step.call.table);
      }
    }
  }
  auto reaches = [&](const std::vector<std::vector<int>>& edges, size_t from,
                     size_t to) {
    std::vector<bool> seen(n, false);
    std::vector<size_t> stack(edges[from].begin(), edges[from].end());
    while (!stack.empty()) {
      size_t x = stack.back();
      stack.pop_back();
      if (x == to) return true;
      if (seen[x]) continue;
      seen[x] = true;
      for (int y : edges[x]) stack.push_back(static_cast<size_t>(y));
    }
    return false;
  };
  MarkLinear();
  for (size_t t = 0; t < n; ++t) {
    tables_[t].recursive = reaches(positive, t, t);
    for (const RuleBody& body : tables_[t].bodies) {
      for (const Step& step : body.scope.steps) {
        if (step.kind != Step::Kind::kCall || !step.call.anti) continue;
        if (reaches(any, static_cast<size_t>(step.call.table), t)) {
          return absl::InvalidArgumentError(
              StrCat("rule ", tables_[t].name, " calls itself through ",
                     step.text, ": recursion through not is not supported"));
        }
      }
    }
  }
  return absl::OkStatus();
}

void ProgramBuilder::MarkLinear() {
  const size_t n = tables_.size();
  auto is_linear_site = [&](size_t t, const RuleBody& body, size_t i) {
    const Step& step = body.scope.steps[i];
    if (step.kind != Step::Kind::kCall || step.call.anti ||
        step.call.table != static_cast<int>(t) ||
        i + 1 != body.scope.steps.size() || !step.filters.empty()) {
      return false;
    }
    const TablePlan& table = tables_[t];
    for (int p = 0; p < table.arity; ++p) {
      if (table.bound[static_cast<size_t>(p)]) continue;
      const PlanTerm& arg = step.call.args[static_cast<size_t>(p)];
      if (!arg.is_slot() || arg.bound || arg.check ||
          body.head_slots[static_cast<size_t>(p)] != arg.slot) {
        return false;
      }
    }
    return true;
  };
  // Candidates: tables with a right-linear self call.
  std::vector<bool> linear(n, false);
  for (size_t t = 0; t < n; ++t) {
    for (const RuleBody& body : tables_[t].bodies) {
      for (size_t i = 0; i < body.scope.steps.size(); ++i) {
        if (is_linear_site(t, body, i)) linear[t] = true;
      }
    }
  }
  // Any other positive call of the table would need its answers whole.
  for (size_t t = 0; t < n; ++t) {
    for (const RuleBody& body : tables_[t].bodies) {
      for (size_t i = 0; i < body.scope.steps.size(); ++i) {
        const Step& step = body.scope.steps[i];
        if (step.kind != Step::Kind::kCall || step.call.anti) continue;
        const size_t callee = static_cast<size_t>(step.call.table);
        // callee != t first: is_linear_site reads the body's head slots
        // as the callee's, so `body` must be one of the callee's bodies.
        if (callee != t || !is_linear_site(callee, body, i)) {
          linear[callee] = false;
        }
      }
    }
  }
  for (size_t t = 0; t < n; ++t) {
    TablePlan& table = tables_[t];
    table.linear = linear[t];
    if (!linear[t]) continue;
    for (RuleBody& body : table.bodies) {
      for (size_t i = 0; i < body.scope.steps.size(); ++i) {
        if (!is_linear_site(t, body, i)) continue;
        Step& step = body.scope.steps[i];
        step.call.linear = true;
        for (int p : table.key_positions()) {
          step.call.link_from.push_back(
              body.head_slots[static_cast<size_t>(p)]);
        }
        step.access += " (right-linear: links keys)";
        body.call_steps.erase(
            std::remove(body.call_steps.begin(), body.call_steps.end(),
                        static_cast<int>(i)),
            body.call_steps.end());
      }
    }
  }
}

void CollectVarInfo(const ProgramBuilder& program,
                    const std::vector<Clause>& clauses, const std::string& var,
                    SlotInfo* info, int depth) {
  const storage::Schema& schema = program.schema();
  for (const Clause& c : clauses) {
    switch (c.kind) {
      case Clause::Kind::kPattern: {
        const auto& terms = c.pattern.terms;
        const storage::Attribute* attr = nullptr;
        if (terms.size() > 1 && terms[1].kind == Term::Kind::kConstant) {
          const edn::EdnValue& a = terms[1].constant;
          if (a.is_keyword()) attr = schema.FindAttribute(a.text());
          if (a.is_int()) attr = schema.FindAttribute(a.as_int());
        }
        for (size_t i = 0; i < terms.size(); ++i) {
          if (!terms[i].is_var() || terms[i].name != var) continue;
          if (i == 0 || i == 3) info->entity = true;
          if (i == 1) info->attribute = true;
          if (i == 2 && attr != nullptr) {
            if (attr->is_ref()) {
              info->entity = true;
            } else if (!info->value_type.has_value()) {
              info->value_type = attr->type;
            }
          }
        }
        break;
      }
      case Clause::Kind::kFunction: {
        const FunctionClause& f = c.function;
        if (f.binding.kind != Binding::Kind::kScalar ||
            f.binding.vars.empty() || f.binding.vars[0] != var) {
          break;
        }
        if (f.fn == "tuple" || f.fn == "get-some" ||
            (f.fn == "ground" && !f.args.empty() &&
             f.args[0].kind == Term::Kind::kConstant &&
             f.args[0].constant.is_sequential())) {
          info->tuple = true;
        }
        break;
      }
      case Clause::Kind::kNot:
        if (c.not_clause != nullptr && depth < kMaxInfoDepth) {
          CollectVarInfo(program, c.not_clause->clauses, var, info, depth + 1);
        }
        break;
      case Clause::Kind::kOr:
        if (c.or_clause != nullptr && depth < kMaxInfoDepth) {
          for (const auto& branch : c.or_clause->branches) {
            CollectVarInfo(program, branch, var, info, depth + 1);
          }
        }
        break;
      case Clause::Kind::kRuleCall: {
        const int rule = program.FindRule(c.rule_call.name);
        if (rule < 0) break;
        for (size_t i = 0; i < c.rule_call.args.size(); ++i) {
          const Term& t = c.rule_call.args[i];
          if (t.is_var() && t.name == var) {
            program.HeadInfo(rule, static_cast<int>(i), info, depth + 1);
          }
        }
        break;
      }
      case Clause::Kind::kPredicate:
        break;
    }
  }
}

}  // namespace mentat::query::planner
