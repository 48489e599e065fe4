#ifndef MENTAT_QUERY_PARSER_VAR_ANALYSIS_H_
#define MENTAT_QUERY_PARSER_VAR_ANALYSIS_H_

// Which variables clauses use and bind, for ValidateQuery. Datomic's rules:
// data patterns, function bindings and rule calls bind their variables;
// predicates bind nothing; not/not-join bind nothing outward; or binds the
// variables every branch binds; or-join binds only its join variables.

#include <algorithm>
#include <string_view>
#include <vector>

#include "mentat/query/ast.h"

namespace mentat::query::parser {

// A small set of variable names; queries have few, so a vector is fastest.
// Holds views into the AST, which must outlive it.
class VarSet {
 public:
  bool Contains(std::string_view v) const {
    return std::find(vars_.begin(), vars_.end(), v) != vars_.end();
  }
  void Insert(std::string_view v) {
    if (!Contains(v)) vars_.push_back(v);
  }
  void InsertAll(const VarSet& other) {
    for (std::string_view v : other.vars_) Insert(v);
  }
  // Keeps only the variables also in `other`.
  void IntersectWith(const VarSet& other);
  bool SameAs(const VarSet& other) const;
  size_t size() const { return vars_.size(); }
  const std::vector<std::string_view>& vars() const { return vars_; }
  // "?a ?b" in insertion order, for messages.
  std::string ToString() const;

 private:
  std::vector<std::string_view> vars_;
};

// Adds the variables that `clauses` (a conjunction) bind for the clauses
// around them.
void CollectBound(const std::vector<Clause>& clauses, VarSet* out);
void CollectBound(const Clause& clause, VarSet* out);

// Adds the free variables of a clause: every variable in it, except those
// local to a nested not-join or or-join (only its join variables count).
void CollectFree(const std::vector<Clause>& clauses, VarSet* out);
void CollectFree(const Clause& clause, VarSet* out);

// True if `var` occurs anywhere inside a not or not-join within `clauses`.
bool OccursInsideNot(const std::vector<Clause>& clauses, std::string_view var);

}  // namespace mentat::query::parser

#endif  // MENTAT_QUERY_PARSER_VAR_ANALYSIS_H_
