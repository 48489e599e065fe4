#include "parser/var_analysis.h"

#include <algorithm>
#include <string>

namespace mentat::query::parser {
namespace {

void AddTermVars(const std::vector<Term>& terms, VarSet* out) {
  for (const Term& t : terms) {
    if (t.is_var()) out->Insert(t.name);
  }
}

void AddBindingVars(const Binding& b, VarSet* out) {
  for (const std::string& v : b.vars) {
    if (v != "_") out->Insert(v);
  }
}

// Does `var` occur anywhere in `clause`, nested clauses included?
bool Occurs(const Clause& clause, std::string_view var);

bool OccursIn(const std::vector<Clause>& clauses, std::string_view var) {
  for (const Clause& c : clauses) {
    if (Occurs(c, var)) return true;
  }
  return false;
}

bool TermsHave(const std::vector<Term>& terms, std::string_view var) {
  for (const Term& t : terms) {
    if (t.is_var() && t.name == var) return true;
  }
  return false;
}

bool Occurs(const Clause& clause, std::string_view var) {
  switch (clause.kind) {
    case Clause::Kind::kPattern:
      return TermsHave(clause.pattern.terms, var);
    case Clause::Kind::kPredicate:
      return TermsHave(clause.predicate.args, var);
    case Clause::Kind::kFunction:
      return TermsHave(clause.function.args, var) ||
             std::find(clause.function.binding.vars.begin(),
                       clause.function.binding.vars.end(),
                       var) != clause.function.binding.vars.end();
    case Clause::Kind::kRuleCall:
      return TermsHave(clause.rule_call.args, var);
    case Clause::Kind::kNot:
      return OccursIn(clause.not_clause->clauses, var);
    case Clause::Kind::kOr:
      for (const std::vector<Clause>& branch : clause.or_clause->branches) {
        if (OccursIn(branch, var)) return true;
      }
      return false;
  }
  return false;
}

}  // namespace

void VarSet::IntersectWith(const VarSet& other) {
  std::erase_if(vars_, [&](std::string_view v) { return !other.Contains(v); });
}

bool VarSet::SameAs(const VarSet& other) const {
  if (size() != other.size()) return false;
  for (std::string_view v : vars_) {
    if (!other.Contains(v)) return false;
  }
  return true;
}

std::string VarSet::ToString() const {
  std::string out;
  for (std::string_view v : vars_) {
    if (!out.empty()) out += ' ';
    out.append(v.data(), v.size());
  }
  return out.empty() ? "no variables" : out;
}

void CollectBound(const std::vector<Clause>& clauses, VarSet* out) {
  for (const Clause& c : clauses) CollectBound(c, out);
}

void CollectBound(const Clause& clause, VarSet* out) {
  switch (clause.kind) {
    case Clause::Kind::kPattern:
      AddTermVars(clause.pattern.terms, out);
      return;
    case Clause::Kind::kPredicate:
    case Clause::Kind::kNot:
      return;
    case Clause::Kind::kFunction:
      AddBindingVars(clause.function.binding, out);
      return;
    case Clause::Kind::kRuleCall:
      AddTermVars(clause.rule_call.args, out);
      return;
    case Clause::Kind::kOr: {
      const OrClause& o = *clause.or_clause;
      VarSet common;
      for (size_t i = 0; i < o.branches.size(); ++i) {
        VarSet branch;
        CollectBound(o.branches[i], &branch);
        if (i == 0) {
          common = std::move(branch);
        } else {
          common.IntersectWith(branch);
        }
      }
      for (std::string_view v : common.vars()) {
        if (!o.is_join || std::find(o.join_vars.begin(), o.join_vars.end(),
                                    v) != o.join_vars.end()) {
          out->Insert(v);
        }
      }
      return;
    }
  }
}

void CollectFree(const std::vector<Clause>& clauses, VarSet* out) {
  for (const Clause& c : clauses) CollectFree(c, out);
}

void CollectFree(const Clause& clause, VarSet* out) {
  switch (clause.kind) {
    case Clause::Kind::kPattern:
      AddTermVars(clause.pattern.terms, out);
      return;
    case Clause::Kind::kPredicate:
      AddTermVars(clause.predicate.args, out);
      return;
    case Clause::Kind::kFunction:
      AddTermVars(clause.function.args, out);
      AddBindingVars(clause.function.binding, out);
      return;
    case Clause::Kind::kRuleCall:
      AddTermVars(clause.rule_call.args, out);
      return;
    case Clause::Kind::kNot:
      if (clause.not_clause->is_join) {
        for (const std::string& v : clause.not_clause->join_vars) {
          out->Insert(v);
        }
      } else {
        CollectFree(clause.not_clause->clauses, out);
      }
      return;
    case Clause::Kind::kOr:
      if (clause.or_clause->is_join) {
        for (const std::string& v : clause.or_clause->join_vars) {
          out->Insert(v);
        }
      } else {
        for (const auto& branch : clause.or_clause->branches) {
          CollectFree(branch, out);
        }
      }
      return;
  }
}

bool OccursInsideNot(const std::vector<Clause>& clauses, std::string_view var) {
  for (const Clause& c : clauses) {
    if (c.kind == Clause::Kind::kNot) {
      if (OccursIn(c.not_clause->clauses, var)) return true;
    } else if (c.kind == Clause::Kind::kOr) {
      for (const auto& branch : c.or_clause->branches) {
        if (OccursInsideNot(branch, var)) return true;
      }
    }
  }
  return false;
}

}  // namespace mentat::query::parser
