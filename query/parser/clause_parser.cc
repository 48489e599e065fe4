#include "parser/clause_parser.h"

#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "mentat/base/excerpt.h"
#include "mentat/base/str_cat.h"
#include "mentat/edn/edn_printer.h"
#include "parser/parse_support.h"

namespace mentat::query::parser {
namespace {

using edn::EdnValue;

bool Contains(const std::vector<std::string>& vars, std::string_view v) {
  return std::find(vars.begin(), vars.end(), v) != vars.end();
}

// A symbol that may name a function or a rule.
bool IsPlainName(const EdnValue& v) {
  return v.is_symbol() && !IsVariable(v) && !IsBlank(v) && !IsSourceSymbol(v);
}

// Appends the variables of the vector `vec` to *vars (and, when nested
// vectors are allowed, the vars of one nested level to *required too).
// `seen` collects every variable of the enclosing form to find repeats.
[[nodiscard]] absl::Status ParseVarVector(const EdnValue& vec,
                                          std::string_view what,
                                          const EdnValue& clause,
                                          std::vector<std::string>* vars,
                                          std::vector<std::string>* required,
                                          std::vector<std::string>* seen) {
  for (const EdnValue& v : vec.items()) {
    if (v.is_vector() && required != nullptr) {
      if (v.items().empty()) {
        return ErrorAt(v, StrCat("empty required-variable vector in ", what,
                                 " of ", Show(clause)));
      }
      const size_t before = vars->size();
      absl::Status s = ParseVarVector(v, what, clause, vars, nullptr, seen);
      if (!s.ok()) return s;
      required->insert(required->end(), vars->begin() + before, vars->end());
      continue;
    }
    if (!IsVariable(v)) {
      return ErrorAt(v, StrCat(what, " of ", Show(clause),
                               " must be variables, got ", Show(v)));
    }
    if (Contains(*seen, v.text())) {
      return ErrorAt(v, StrCat("duplicate variable ", Excerpt(v.text()), " in ",
                               what, " of ", Show(clause)));
    }
    seen->push_back(v.text());
    vars->push_back(v.text());
  }
  return absl::OkStatus();
}

// Puts the implicit `$` in front of the arguments of the functions that
// Mentat also accepted without it.
void AddImplicitSource(std::string_view fn, Pos pos, std::vector<Term>* args) {
  if (fn != "get-else" && fn != "get-some" && fn != "missing?") return;
  if (!args->empty() && (*args)[0].kind == Term::Kind::kSource) return;
  Term src;
  src.kind = Term::Kind::kSource;
  src.name = "$";
  src.pos = pos;
  args->insert(args->begin(), std::move(src));
}

[[nodiscard]] absl::Status ParseExpression(const EdnValue& form, Clause* out) {
  const std::vector<EdnValue>& items = form.items();
  const EdnValue& call = items[0];
  if (items.size() > 2) {
    return ErrorAt(
        form, StrCat("expression clause ", Show(form), " has ", items.size(),
                     " forms: write [(f arg ...)] for a predicate "
                     "or [(f arg ...) binding] for a function"));
  }
  if (call.items().empty()) {
    return ErrorAt(call, StrCat("empty call () in ", Show(form)));
  }
  const EdnValue& fn = call.items()[0];
  if (!IsPlainName(fn)) {
    return ErrorAt(fn, StrCat("a function name must be a symbol, got ",
                              Show(fn), " in ", Show(form)));
  }
  std::vector<Term> args(call.items().size() - 1);
  for (size_t i = 1; i < call.items().size(); ++i) {
    absl::Status s =
        ParseTerm(call.items()[i], TermPlace::kFunctionArg, form, &args[i - 1]);
    if (!s.ok()) return s;
  }
  AddImplicitSource(fn.text(), PosOf(call), &args);
  if (items.size() == 1) {
    out->kind = Clause::Kind::kPredicate;
    out->predicate.fn = fn.text();
    out->predicate.args = std::move(args);
    return absl::OkStatus();
  }
  out->kind = Clause::Kind::kFunction;
  out->function.fn = fn.text();
  out->function.args = std::move(args);
  return ParseBinding(items[1], StrCat("the binding of ", Show(call)),
                      &out->function.binding);
}

[[nodiscard]] absl::Status ParsePattern(const EdnValue& form, Clause* out) {
  const std::vector<EdnValue>& items = form.items();
  out->kind = Clause::Kind::kPattern;
  size_t first = 0;
  if (IsSourceSymbol(items[0])) {
    out->pattern.source = items[0].text();
    first = 1;
  }
  const size_t n = items.size() - first;
  if (n == 0 || n > 5) {
    return ErrorAt(form, StrCat("data pattern ", Show(form), " has ", n,
                                " terms; it takes 1 to 5 [e a v tx added] "
                                "after an optional source"));
  }
  out->pattern.terms.resize(n);
  for (size_t i = 0; i < n; ++i) {
    absl::Status s = ParseTerm(items[first + i], TermPlace::kPattern, form,
                               &out->pattern.terms[i]);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

[[nodiscard]] absl::Status ParseNot(const EdnValue& form, size_t head,
                                    std::string source, bool is_join,
                                    Clause* out) {
  const std::vector<EdnValue>& items = form.items();
  auto clause = std::make_shared<NotClause>();
  clause->source = std::move(source);
  clause->is_join = is_join;
  size_t next = head + 1;
  if (is_join) {
    if (next >= items.size() || !items[next].is_vector() ||
        items[next].items().empty()) {
      return ErrorAt(next < items.size() ? items[next] : form,
                     StrCat("not-join needs a non-empty vector of join "
                            "variables, as in (not-join [?a] clause ...), in ",
                            Show(form)));
    }
    std::vector<std::string> seen;
    absl::Status s = ParseVarVector(items[next], "the join variables", form,
                                    &clause->join_vars, nullptr, &seen);
    if (!s.ok()) return s;
    ++next;
  }
  if (next >= items.size()) {
    return ErrorAt(form, StrCat(Show(form), " needs at least one clause"));
  }
  absl::Status s = ParseClauses(std::span<const EdnValue>(items).subspan(next),
                                &clause->clauses);
  if (!s.ok()) return s;
  out->kind = Clause::Kind::kNot;
  out->not_clause = std::move(clause);
  return absl::OkStatus();
}

[[nodiscard]] absl::Status ParseOr(const EdnValue& form, size_t head,
                                   std::string source, bool is_join,
                                   Clause* out) {
  const std::vector<EdnValue>& items = form.items();
  auto clause = std::make_shared<OrClause>();
  clause->source = std::move(source);
  clause->is_join = is_join;
  size_t next = head + 1;
  if (is_join) {
    if (next >= items.size() || !items[next].is_vector() ||
        items[next].items().empty()) {
      return ErrorAt(next < items.size() ? items[next] : form,
                     StrCat("or-join needs a non-empty vector of join "
                            "variables, as in (or-join [?a [?req]] branch "
                            "...), in ",
                            Show(form)));
    }
    std::vector<std::string> seen;
    absl::Status s =
        ParseVarVector(items[next], "the join variables", form,
                       &clause->join_vars, &clause->required_vars, &seen);
    if (!s.ok()) return s;
    ++next;
  }
  if (next >= items.size()) {
    return ErrorAt(form, StrCat(Show(form), " needs at least one branch"));
  }
  clause->branches.resize(items.size() - next);
  for (size_t i = next; i < items.size(); ++i) {
    const EdnValue& branch = items[i];
    std::vector<Clause>* dest = &clause->branches[i - next];
    if (branch.is_list() && !branch.items().empty() &&
        IsSymbol(branch.items()[0], "and")) {
      if (branch.items().size() < 2) {
        return ErrorAt(branch, "(and) needs at least one clause");
      }
      absl::Status s = ParseClauses(
          std::span<const EdnValue>(branch.items()).subspan(1), dest);
      if (!s.ok()) return s;
      continue;
    }
    dest->resize(1);
    absl::Status s = ParseClause(branch, &dest->front());
    if (!s.ok()) return s;
  }
  out->kind = Clause::Kind::kOr;
  out->or_clause = std::move(clause);
  return absl::OkStatus();
}

[[nodiscard]] absl::Status ParseListClause(const EdnValue& form, Clause* out) {
  const std::vector<EdnValue>& items = form.items();
  if (items.empty()) return ErrorAt(form, "empty clause ()");
  size_t head = 0;
  std::string source = "$";
  if (IsSourceSymbol(items[0])) {
    source = items[0].text();
    head = 1;
  }
  if (head >= items.size() || !IsPlainName(items[head])) {
    const EdnValue& at = head < items.size() ? items[head] : form;
    return ErrorAt(at, StrCat("a list clause starts with not, not-join, or, "
                              "or-join or a rule name, got ",
                              head < items.size() ? Show(at) : "nothing",
                              " in ", Show(form)));
  }
  const std::string& name = items[head].text();
  if (name == "not") return ParseNot(form, head, std::move(source), false, out);
  if (name == "not-join") {
    return ParseNot(form, head, std::move(source), true, out);
  }
  if (name == "or") return ParseOr(form, head, std::move(source), false, out);
  if (name == "or-join") {
    return ParseOr(form, head, std::move(source), true, out);
  }
  if (name == "and") {
    return ErrorAt(form, StrCat(Show(form),
                                ": (and ...) is only allowed as a branch of "
                                "or / or-join"));
  }
  out->kind = Clause::Kind::kRuleCall;
  out->rule_call.source = std::move(source);
  out->rule_call.name = name;
  out->rule_call.args.resize(items.size() - head - 1);
  for (size_t i = head + 1; i < items.size(); ++i) {
    absl::Status s = ParseTerm(items[i], TermPlace::kRuleArg, form,
                               &out->rule_call.args[i - head - 1]);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace

bool IsSpecialForm(std::string_view name) {
  return name == "not" || name == "not-join" || name == "or" ||
         name == "or-join" || name == "and";
}

[[nodiscard]] absl::Status ParseClause(const EdnValue& form, Clause* out) {
  out->pos = PosOf(form);
  out->text = edn::PrintEdnAbbreviated(form, kClauseTextBytes);
  if (form.is_vector()) {
    if (form.items().empty()) {
      return ErrorAt(form,
                     "empty clause []: a data pattern takes 1 to 5 terms");
    }
    if (form.items()[0].is_list()) return ParseExpression(form, out);
    return ParsePattern(form, out);
  }
  if (form.is_list()) return ParseListClause(form, out);
  return ErrorAt(form, StrCat("a clause must be a vector or a list, got ",
                              KindWithArticle(form), " ", Show(form)));
}

[[nodiscard]] absl::Status ParseClauses(std::span<const EdnValue> forms,
                                        std::vector<Clause>* out) {
  const size_t base = out->size();
  out->resize(base + forms.size());
  for (size_t i = 0; i < forms.size(); ++i) {
    absl::Status s = ParseClause(forms[i], &(*out)[base + i]);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

[[nodiscard]] absl::Status ParseBinding(const EdnValue& form,
                                        std::string_view what, Binding* out) {
  out->pos = PosOf(form);
  out->vars.clear();
  auto bad = [&]() {
    return ErrorAt(form, StrCat("bad binding form ", Show(form), " in ", what,
                                ": expected ?x, [?a ?b], [?x ...] or "
                                "[[?a ?b]]"));
  };
  if (IsVariable(form)) {
    out->kind = Binding::Kind::kScalar;
    out->vars.push_back(form.text());
    return absl::OkStatus();
  }
  if (!form.is_vector() || form.items().empty()) return bad();
  const std::vector<EdnValue>* vars = &form.items();
  if (vars->size() == 2 && IsSymbol((*vars)[1], "...")) {
    if (!IsVariable((*vars)[0])) return bad();
    out->kind = Binding::Kind::kCollection;
    out->vars.push_back((*vars)[0].text());
    return absl::OkStatus();
  }
  out->kind = Binding::Kind::kTuple;
  if (vars->size() == 1 && (*vars)[0].is_vector()) {
    out->kind = Binding::Kind::kRelation;
    vars = &(*vars)[0].items();
    if (vars->empty()) return bad();
  }
  for (const EdnValue& v : *vars) {
    if (IsBlank(v)) {
      out->vars.push_back("_");
      continue;
    }
    if (!IsVariable(v)) return bad();
    if (Contains(out->vars, v.text())) {
      return ErrorAt(
          v, StrCat("duplicate variable ", Excerpt(v.text()), " in ", what));
    }
    out->vars.push_back(v.text());
  }
  return absl::OkStatus();
}

[[nodiscard]] absl::Status ParseRule(const EdnValue& form, Rule* out) {
  out->pos = PosOf(form);
  if (!form.is_vector() || form.items().size() < 2 ||
      !form.items()[0].is_list()) {
    return ErrorAt(form, StrCat("a rule is [(name ?var ...) clause ...], "
                                "got ",
                                Show(form)));
  }
  const EdnValue& head = form.items()[0];
  if (head.items().empty() || !IsPlainName(head.items()[0]) ||
      IsSpecialForm(head.items()[0].text())) {
    return ErrorAt(head, StrCat("a rule head starts with the rule's name, "
                                "got ",
                                Show(head)));
  }
  out->name = head.items()[0].text();
  std::vector<std::string> seen;
  for (size_t i = 1; i < head.items().size(); ++i) {
    const EdnValue& v = head.items()[i];
    if (v.is_vector()) {
      if (v.items().empty()) {
        return ErrorAt(v, StrCat("empty required-variable vector in the head "
                                 "of rule ",
                                 out->name));
      }
      const size_t before = out->vars.size();
      absl::Status s =
          ParseVarVector(v, "the head", head, &out->vars, nullptr, &seen);
      if (!s.ok()) return s;
      out->required_vars.insert(out->required_vars.end(),
                                out->vars.begin() + before, out->vars.end());
      continue;
    }
    if (!IsVariable(v)) {
      return ErrorAt(v, StrCat("the head of rule ", out->name,
                               " takes variables, got ", Show(v)));
    }
    if (Contains(seen, v.text())) {
      return ErrorAt(v, StrCat("duplicate variable ", Excerpt(v.text()),
                               " in the head of rule ", out->name));
    }
    seen.push_back(v.text());
    out->vars.push_back(v.text());
  }
  return ParseClauses(std::span<const EdnValue>(form.items()).subspan(1),
                      &out->body);
}

}  // namespace mentat::query::parser
