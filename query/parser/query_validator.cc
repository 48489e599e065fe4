// ValidateQuery (parser.h): variable binding, sources, rules, and (through
// schema_checks.cc) attributes, value types and function names.

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "mentat/base/str_cat.h"
#include "mentat/query/parser.h"
#include "mentat/query/pull.h"
#include "parser/parse_support.h"
#include "parser/schema_checks.h"
#include "parser/var_analysis.h"

namespace mentat::query {
namespace {

using parser::ErrorAt;
using parser::VarSet;
using storage::Schema;

class Validator {
 public:
  Validator(const ParsedQuery& q, const Schema& schema,
            const std::vector<Rule>& rules)
      : q_(q), schema_(schema), rules_(rules) {
    for (const InputSpec& in : q.inputs) {
      if (in.kind == InputSpec::Kind::kSource) sources_.Insert(in.name);
      if (in.kind == InputSpec::Kind::kRules) has_rules_input_ = true;
      for (const std::string& v : in.vars) {
        if (v != "_") inputs_.Insert(v);
      }
    }
  }

  [[nodiscard]] absl::Status Run() {
    VarSet scope = inputs_;
    parser::CollectBound(q_.where, &scope);
    absl::Status s = CheckFind(scope);
    if (!s.ok()) return s;
    s = CheckClauses(q_.where, inputs_);
    if (!s.ok()) return s;
    return CheckCalledRules();
  }

 private:
  [[nodiscard]] absl::Status UnboundFindVar(std::string_view var, Pos pos,
                                            std::string_view where) {
    if (parser::OccursInsideNot(q_.where, var)) {
      return ErrorAt(pos, StrCat("variable ", var, " in ", where,
                                 " is only used inside not, which does not "
                                 "bind it"));
    }
    return ErrorAt(pos, StrCat("unbound variable ", var, " in ", where,
                               ": no :in input or :where clause binds it"));
  }

  [[nodiscard]] absl::Status CheckFind(const VarSet& scope) {
    for (const FindElement& e : q_.find.elements) {
      if (e.kind == FindElement::Kind::kAggregate) {
        absl::Status s = parser::CheckAggregate(e);
        if (!s.ok()) return s;
        for (const Term& t : e.aggregate_args) {
          if (t.is_var() && !scope.Contains(t.name)) {
            return UnboundFindVar(t.name, t.pos, ":find");
          }
        }
        // The count of (sample n ?x) and the like is a constant (the plan
        // takes it as a number); an unbound ?n is named above first.
        if (e.aggregate_args.size() == 2 &&
            e.aggregate_args[0].kind != Term::Kind::kConstant) {
          return ErrorAt(e.pos, StrCat("the count in ", e.text,
                                       " must be a non-negative integer"));
        }
        continue;
      }
      if (!scope.Contains(e.var)) return UnboundFindVar(e.var, e.pos, ":find");
      if (e.kind == FindElement::Kind::kPull) {
        absl::Status s = CheckSource(e.pull_source, e.pos, e.text);
        if (!s.ok()) return s;
        s = ValidatePullPattern(*e.pull, schema_);
        if (!s.ok()) return s;
      }
    }
    for (const std::string& var : q_.with) {
      if (!scope.Contains(var)) return UnboundFindVar(var, Pos{}, ":with");
    }
    return absl::OkStatus();
  }

  [[nodiscard]] absl::Status CheckSource(std::string_view source, Pos pos,
                                         std::string_view text) {
    if (in_rule_body_ || sources_.Contains(source)) return absl::OkStatus();
    return ErrorAt(
        pos, StrCat("source ", source, " is not declared in :in, in ", text));
  }

  // `outer`: variables bound around the conjunction `clauses`.
  [[nodiscard]] absl::Status CheckClauses(const std::vector<Clause>& clauses,
                                          const VarSet& outer) {
    VarSet scope = outer;
    parser::CollectBound(clauses, &scope);
    const std::vector<Clause>* saved_siblings = siblings_;
    const VarSet* saved_outer = siblings_outer_;
    siblings_ = &clauses;
    siblings_outer_ = &outer;
    absl::Status s;
    for (const Clause& c : clauses) {
      s = CheckClause(c, scope);
      if (!s.ok()) break;
    }
    siblings_ = saved_siblings;
    siblings_outer_ = saved_outer;
    return s;
  }

  // The variables bound around `c` by everything but `c` itself: what a
  // required variable of `c` must come from.
  VarSet BoundAround(const Clause& c) const {
    VarSet out = *siblings_outer_;
    for (const Clause& other : *siblings_) {
      if (&other != &c) parser::CollectBound(other, &out);
    }
    return out;
  }

  [[nodiscard]] absl::Status CheckClause(const Clause& c, const VarSet& scope) {
    switch (c.kind) {
      case Clause::Kind::kPattern: {
        absl::Status s = CheckSource(c.pattern.source, c.pos, c.text);
        if (!s.ok()) return s;
        return parser::CheckPatternConstants(c, schema_);
      }
      case Clause::Kind::kPredicate:
        return CheckCall(c, c.predicate.args, scope);
      case Clause::Kind::kFunction:
        return CheckCall(c, c.function.args, scope);
      case Clause::Kind::kRuleCall:
        return CheckRuleCall(c);
      case Clause::Kind::kNot:
        return CheckNot(c, scope);
      case Clause::Kind::kOr:
        return CheckOr(c, scope);
    }
    return absl::OkStatus();
  }

  [[nodiscard]] absl::Status CheckCall(const Clause& c,
                                       const std::vector<Term>& args,
                                       const VarSet& scope) {
    absl::Status s = parser::CheckCall(c, schema_);
    if (!s.ok()) return s;
    for (const Term& t : args) {
      if (t.kind == Term::Kind::kSource) {
        s = CheckSource(t.name, t.pos, c.text);
        if (!s.ok()) return s;
      }
      if (t.is_var() && !scope.Contains(t.name)) {
        return ErrorAt(t.pos,
                       StrCat("unbound variable ", t.name, " in ", c.text,
                              ": a function's arguments must be "
                              "bound by other clauses"));
      }
    }
    return absl::OkStatus();
  }

  [[nodiscard]] absl::Status CheckRuleCall(const Clause& c) {
    const RuleCallClause& call = c.rule_call;
    absl::Status s = CheckSource(call.source, c.pos, c.text);
    if (!s.ok()) return s;
    const Rule* def = nullptr;
    for (const Rule& r : rules_) {
      if (r.name == call.name) {
        def = &r;
        break;
      }
    }
    if (def == nullptr) {
      if (parser::IsKnownFunctionName(call.name)) {
        return ErrorAt(c.pos, StrCat(c.text, " calls the function ", call.name,
                                     ": write function calls in a vector, "
                                     "as [",
                                     c.text, "]"));
      }
      return ErrorAt(c.pos,
                     StrCat("unknown rule ", call.name, " in ", c.text,
                            rules_.empty() ? ": no rules were given" : ""));
    }
    if (!in_rule_body_ && !has_rules_input_) {
      return ErrorAt(c.pos, StrCat("rule call ", c.text,
                                   " needs % in :in to receive the rules"));
    }
    if (call.args.size() != def->vars.size()) {
      return ErrorAt(
          c.pos, StrCat("rule ", call.name, " takes ", def->vars.size(),
                        " arguments, got ", call.args.size(), " in ", c.text));
    }
    const VarSet around =
        def->required_vars.empty() ? VarSet() : BoundAround(c);
    for (size_t i = 0; i < def->vars.size(); ++i) {
      const Term& arg = call.args[i];
      const bool required =
          std::find(def->required_vars.begin(), def->required_vars.end(),
                    def->vars[i]) != def->required_vars.end();
      if (!required || arg.kind == Term::Kind::kConstant) continue;
      if (!arg.is_var() || !around.Contains(arg.name)) {
        return ErrorAt(arg.pos,
                       StrCat("rule ", call.name, " requires its argument ",
                              i + 1, " to be bound, got ",
                              arg.is_var() ? arg.name : "_", " in ", c.text));
      }
    }
    bool queued = false;
    for (std::string_view name : called_rules_) queued |= name == call.name;
    if (!queued) called_rules_.push_back(call.name);
    return absl::OkStatus();
  }

  [[nodiscard]] absl::Status CheckNot(const Clause& c, const VarSet& scope) {
    const NotClause& n = *c.not_clause;
    absl::Status s = CheckSource(n.source, c.pos, c.text);
    if (!s.ok()) return s;
    if (!n.is_join) {
      VarSet free;
      parser::CollectFree(n.clauses, &free);
      for (std::string_view v : free.vars()) {
        if (!scope.Contains(v)) {
          return ErrorAt(c.pos, StrCat("variable ", v, " in ", c.text,
                                       " is not bound outside it: not binds "
                                       "nothing; use not-join to keep ",
                                       v, " local"));
        }
      }
      return CheckClauses(n.clauses, scope);
    }
    VarSet join;
    VarSet free;
    parser::CollectFree(n.clauses, &free);
    for (const std::string& v : n.join_vars) {
      if (!scope.Contains(v)) {
        return ErrorAt(c.pos, StrCat("not-join variable ", v,
                                     " is not bound outside it, in ", c.text));
      }
      if (!free.Contains(v)) {
        return ErrorAt(c.pos,
                       StrCat("not-join variable ", v,
                              " does not occur in its clauses, in ", c.text));
      }
      join.Insert(v);
    }
    return CheckClauses(n.clauses, join);
  }

  [[nodiscard]] absl::Status CheckOr(const Clause& c, const VarSet& scope) {
    const OrClause& o = *c.or_clause;
    absl::Status s = CheckSource(o.source, c.pos, c.text);
    if (!s.ok()) return s;
    std::vector<VarSet> free(o.branches.size());
    for (size_t i = 0; i < o.branches.size(); ++i) {
      parser::CollectFree(o.branches[i], &free[i]);
    }
    if (!o.is_join) {
      for (size_t i = 1; i < free.size(); ++i) {
        if (!free[i].SameAs(free[0])) {
          return ErrorAt(
              c.pos, StrCat("all branches of or must use the same "
                            "variables (or use or-join): branch 1 "
                            "uses ",
                            free[0].ToString(), ", branch ", i + 1, " uses ",
                            free[i].ToString(), ", in ", c.text));
        }
      }
      for (const std::vector<Clause>& branch : o.branches) {
        s = CheckClauses(branch, scope);
        if (!s.ok()) return s;
      }
      return absl::OkStatus();
    }
    VarSet join;
    const VarSet around = o.required_vars.empty() ? VarSet() : BoundAround(c);
    for (const std::string& v : o.required_vars) {
      if (!around.Contains(v)) {
        return ErrorAt(c.pos, StrCat("or-join required variable ", v,
                                     " is not bound outside it, in ", c.text));
      }
    }
    for (const std::string& v : o.join_vars) {
      for (size_t i = 0; i < free.size(); ++i) {
        if (!free[i].Contains(v)) {
          return ErrorAt(c.pos, StrCat("or-join variable ", v,
                                       " does not occur in branch ", i + 1,
                                       " of ", c.text));
        }
      }
      if (scope.Contains(v)) join.Insert(v);
    }
    for (const std::vector<Clause>& branch : o.branches) {
      s = CheckClauses(branch, join);
      if (!s.ok()) return s;
    }
    return absl::OkStatus();
  }

  // The bodies of every rule the query reaches, each name once.
  [[nodiscard]] absl::Status CheckCalledRules() {
    in_rule_body_ = true;
    for (size_t i = 0; i < called_rules_.size(); ++i) {
      const std::string_view name = called_rules_[i];
      for (const Rule& r : rules_) {
        if (r.name != name) continue;
        VarSet head;
        for (const std::string& v : r.vars) head.Insert(v);
        VarSet free;
        parser::CollectFree(r.body, &free);
        for (const std::string& v : r.vars) {
          if (!free.Contains(v)) {
            return ErrorAt(r.pos, StrCat("variable ", v, " of rule ", r.name,
                                         " does not occur in its body"));
          }
        }
        // called_rules_ may grow here; indexes stay valid.
        absl::Status s = CheckClauses(r.body, head);
        if (!s.ok()) return s;
      }
    }
    return absl::OkStatus();
  }

  const ParsedQuery& q_;
  const Schema& schema_;
  const std::vector<Rule>& rules_;
  VarSet sources_;
  VarSet inputs_;
  bool has_rules_input_ = false;
  bool in_rule_body_ = false;
  std::vector<std::string_view> called_rules_;
  // The conjunction being checked, and what is bound around it.
  const std::vector<Clause>* siblings_ = nullptr;
  const VarSet* siblings_outer_ = nullptr;
};

}  // namespace

absl::Status ValidateQuery(const ParsedQuery& query,
                           const storage::Schema& schema,
                           const std::vector<Rule>& rules) {
  return Validator(query, schema, rules).Run();
}

}  // namespace mentat::query
