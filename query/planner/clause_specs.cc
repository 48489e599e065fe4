#include "planner/clause_specs.h"

#include <algorithm>

#include "builtins/builtin_table.h"
#include "execution/tuple_codec.h"
#include "mentat/base/str_cat.h"
#include "planner/edn_to_value.h"

namespace mentat::query::planner {
namespace {

using edn::EdnValue;
using storage::Value;

void AddVar(const std::string& name, std::vector<std::string>* out) {
  if (name.empty() || name == "_") return;
  if (std::find(out->begin(), out->end(), name) == out->end()) {
    out->push_back(name);
  }
}

void TermVars(const std::vector<Term>& terms, std::vector<std::string>* out) {
  for (const Term& t : terms) {
    if (t.is_var()) AddVar(t.name, out);
  }
}

PlanTerm SlotTerm(Slot s) {
  PlanTerm t;
  t.kind = PlanTerm::Kind::kSlot;
  t.slot = s;
  return t;
}

PlanTerm ConstTerm(Value v) {
  PlanTerm t;
  t.kind = PlanTerm::Kind::kConst;
  t.value = std::move(v);
  return t;
}

// An entity constant (e, tx, lookup refs).
[[nodiscard]] absl::Status EntityTerm(const Clause& clause, const Term& term,
                                      const storage::Schema& schema,
                                      PlanTerm* out, bool* never) {
  absl::StatusOr<EntityConst> e = EdnToEntity(term.constant, schema);
  if (!e.ok()) return ClauseError(clause, Msg(e.status()));
  switch (e->kind) {
    case EntityConst::Kind::kId:
      *out = ConstTerm(Value::Ref(e->id));
      break;
    case EntityConst::Kind::kNone:
      *never = true;
      break;
    case EntityConst::Kind::kLookup:
      out->kind = PlanTerm::Kind::kLookup;
      out->lookup_attr = e->lookup_attr;
      out->value = e->lookup_value;
      break;
  }
  return absl::OkStatus();
}

// A constant argument of a predicate or function.
[[nodiscard]] absl::Status ArgTerm(const Clause& clause, const Term& term,
                                   const SlotLookup& slot, PlanTerm* out) {
  switch (term.kind) {
    case Term::Kind::kVariable:
      *out = SlotTerm(slot(term.name));
      return absl::OkStatus();
    case Term::Kind::kConstant: {
      absl::StatusOr<Value> v = EdnToValue(term.constant);
      if (!v.ok()) return ClauseError(clause, Msg(v.status()));
      *out = ConstTerm(*std::move(v));
      return absl::OkStatus();
    }
    case Term::Kind::kSource:
      return ClauseError(clause, StrCat("a source (", term.name,
                                        ") cannot be an argument here"));
    case Term::Kind::kBlank:
      return ClauseError(clause, "_ cannot be an argument");
  }
  return absl::OkStatus();
}

// An attribute constant (by ident or id).
[[nodiscard]] absl::StatusOr<const storage::Attribute*> AttrConst(
    const Clause& clause, const Term& term, const storage::Schema& schema) {
  if (term.kind != Term::Kind::kConstant) {
    return ClauseError(clause, "the attribute must be a constant here");
  }
  const EdnValue& c = term.constant;
  const storage::Attribute* attr = nullptr;
  if (c.is_keyword()) {
    attr = schema.FindAttribute(c.text());
  } else if (c.is_int()) {
    attr = schema.FindAttribute(c.as_int());
  } else {
    return ClauseError(clause,
                       StrCat("expected an attribute, got ", EdnForMessage(c)));
  }
  if (attr == nullptr) {
    return ClauseError(clause, StrCat("unknown attribute ", EdnForMessage(c)));
  }
  return attr;
}

[[nodiscard]] absl::Status ExpectSource(const Clause& clause,
                                        const Term& term) {
  if (term.kind != Term::Kind::kSource || term.name != "$") {
    return ClauseError(clause, "the first argument must be the source $");
  }
  return absl::OkStatus();
}

[[nodiscard]] absl::Status GroundValues(const Clause& clause, const EdnValue& c,
                                        FunctionSpec* out) {
  auto convert = [&](const EdnValue& v) -> absl::Status {
    absl::StatusOr<Value> value = EdnToValue(v);
    if (!value.ok()) return ClauseError(clause, Msg(value.status()));
    out->ground_values.push_back(*std::move(value));
    return absl::OkStatus();
  };
  const size_t width = out->outputs.size();
  switch (out->binding) {
    case Binding::Kind::kScalar: {
      if (!c.is_sequential()) return convert(c);
      // A vector bound to one variable is a tuple.
      FunctionSpec elements;
      elements.binding = Binding::Kind::kCollection;
      absl::Status s = GroundValues(clause, c, &elements);
      if (!s.ok()) return s;
      out->ground_values.push_back(execution::EncodeTuple(
          elements.ground_values.data(), elements.ground_values.size()));
      return absl::OkStatus();
    }
    case Binding::Kind::kTuple:
      if (!c.is_sequential() || c.items().size() != width) {
        return ClauseError(clause, StrCat("ground for a tuple binding needs "
                                          "a vector of ",
                                          width, " values"));
      }
      for (const EdnValue& v : c.items()) {
        absl::Status s = convert(v);
        if (!s.ok()) return s;
      }
      return absl::OkStatus();
    case Binding::Kind::kCollection:
      if (!c.is_sequential() && !c.is_set()) {
        return ClauseError(clause,
                           "ground for a collection binding needs a vector");
      }
      for (const EdnValue& v : c.items()) {
        absl::Status s = convert(v);
        if (!s.ok()) return s;
      }
      return absl::OkStatus();
    case Binding::Kind::kRelation:
      if (!c.is_sequential() && !c.is_set()) {
        return ClauseError(clause,
                           "ground for a relation binding needs a vector of "
                           "vectors");
      }
      out->ground_width = static_cast<int>(width);
      for (const EdnValue& row : c.items()) {
        if (!row.is_sequential() || row.items().size() != width) {
          return ClauseError(clause,
                             StrCat("ground for a relation binding needs "
                                    "rows of ",
                                    width, " values"));
        }
        for (const EdnValue& v : row.items()) {
          absl::Status s = convert(v);
          if (!s.ok()) return s;
        }
      }
      return absl::OkStatus();
  }
  return absl::OkStatus();
}

}  // namespace

std::string Where(const Pos& pos) {
  if (pos.line == 0) return "";
  return StrCat("line ", pos.line, ", column ", pos.column, ": ");
}

absl::Status ClauseError(const Clause& clause, std::string_view message) {
  return absl::InvalidArgumentError(
      StrCat(Where(clause.pos), message, " in ", clause.text));
}

int ComparisonOp(std::string_view fn) {
  // The builtins answer to their clojure.core/ names too (ValidateQuery
  // lets them through); no other namespace reaches the planner.
  constexpr std::string_view kCore = "clojure.core/";
  if (fn.starts_with(kCore)) fn.remove_prefix(kCore.size());
  if (fn == "<") return 1;
  if (fn == "<=") return 2;
  if (fn == ">") return 3;
  if (fn == ">=") return 4;
  return 0;
}

void AllVars(const Clause& c, std::vector<std::string>* out) {
  switch (c.kind) {
    case Clause::Kind::kPattern:
      TermVars(c.pattern.terms, out);
      break;
    case Clause::Kind::kPredicate:
      TermVars(c.predicate.args, out);
      break;
    case Clause::Kind::kFunction:
      TermVars(c.function.args, out);
      for (const std::string& v : c.function.binding.vars) AddVar(v, out);
      break;
    case Clause::Kind::kRuleCall:
      TermVars(c.rule_call.args, out);
      break;
    case Clause::Kind::kNot:
      if (c.not_clause == nullptr) break;
      for (const std::string& v : c.not_clause->join_vars) AddVar(v, out);
      AllVars(c.not_clause->clauses, out);
      break;
    case Clause::Kind::kOr:
      if (c.or_clause == nullptr) break;
      for (const std::string& v : c.or_clause->join_vars) AddVar(v, out);
      for (const auto& branch : c.or_clause->branches) AllVars(branch, out);
      break;
  }
}

void AllVars(const std::vector<Clause>& clauses,
             std::vector<std::string>* out) {
  for (const Clause& c : clauses) AllVars(c, out);
}

std::vector<Slot> ArgSlots(const std::vector<PlanTerm>& args) {
  std::vector<Slot> out;
  for (const PlanTerm& t : args) {
    if (t.is_slot() && std::find(out.begin(), out.end(), t.slot) == out.end()) {
      out.push_back(t.slot);
    }
  }
  return out;
}

absl::Status MakePattern(const Clause& clause, const storage::Schema& schema,
                         const SlotLookup& slot, PatternSpec* out,
                         bool* never) {
  const PatternClause& p = clause.pattern;
  if (p.source != "$") {
    return ClauseError(clause, StrCat("unknown source ", p.source,
                                      ": only the default source $ is "
                                      "supported"));
  }
  PlanTerm* positions[5] = {&out->e, &out->a, &out->v, &out->tx, &out->added};
  // The attribute first: the value's type depends on it.
  for (size_t i : {size_t{1}, size_t{0}, size_t{2}, size_t{3}, size_t{4}}) {
    if (i >= p.terms.size()) continue;
    const Term& term = p.terms[i];
    PlanTerm* t = positions[i];
    switch (term.kind) {
      case Term::Kind::kBlank:
        continue;
      case Term::Kind::kSource:
        return ClauseError(clause, "a source can only start a pattern");
      case Term::Kind::kVariable:
        *t = SlotTerm(slot(term.name));
        continue;
      case Term::Kind::kConstant:
        break;
    }
    switch (i) {
      case 0:
      case 3: {
        absl::Status s = EntityTerm(clause, term, schema, t, never);
        if (!s.ok()) return s;
        break;
      }
      case 1: {
        absl::StatusOr<const storage::Attribute*> attr =
            AttrConst(clause, term, schema);
        if (!attr.ok()) return attr.status();
        out->attr = *attr;
        *t = ConstTerm(Value::Ref((*attr)->id));
        break;
      }
      case 2: {
        if (out->attr != nullptr) {
          Value v;
          absl::StatusOr<EntityConst> e =
              EdnToAttrValue(term.constant, *out->attr, schema, &v);
          if (!e.ok()) return ClauseError(clause, Msg(e.status()));
          if (e->kind == EntityConst::Kind::kNone) {
            *never = true;
          } else if (e->kind == EntityConst::Kind::kLookup) {
            t->kind = PlanTerm::Kind::kLookup;
            t->lookup_attr = e->lookup_attr;
            t->value = e->lookup_value;
          } else {
            *t = ConstTerm(std::move(v));
          }
        } else if (term.constant.is_sequential()) {
          absl::Status s = EntityTerm(clause, term, schema, t, never);
          if (!s.ok()) return s;
        } else {
          absl::StatusOr<Value> v = EdnToValue(term.constant);
          if (!v.ok()) return ClauseError(clause, Msg(v.status()));
          *t = ConstTerm(*std::move(v));
        }
        break;
      }
      case 4:
        *t = ConstTerm(Value::Boolean(term.constant.as_bool()));
        break;
    }
  }
  return absl::OkStatus();
}

absl::Status MakePredicate(const Clause& clause, const storage::Schema& schema,
                           const SlotLookup& slot, PredicateSpec* out) {
  const PredicateClause& p = clause.predicate;
  out->text = clause.text;
  if (p.fn == "missing?") {
    absl::Status s = ExpectSource(clause, p.args[0]);
    if (!s.ok()) return s;
    out->kind = PredicateSpec::Kind::kMissing;
    PlanTerm e;
    if (p.args[1].is_var()) {
      e = SlotTerm(slot(p.args[1].name));
    } else {
      bool never = false;
      s = EntityTerm(clause, p.args[1], schema, &e, &never);
      if (!s.ok()) return s;
      if (never) e = ConstTerm(Value::Ref(-1));
    }
    absl::StatusOr<const storage::Attribute*> attr =
        AttrConst(clause, p.args[2], schema);
    if (!attr.ok()) return attr.status();
    out->args = {e, ConstTerm(Value::Ref((*attr)->id))};
    return absl::OkStatus();
  }
  out->builtin = builtins::FindPredicate(p.fn);
  for (const Term& t : p.args) {
    PlanTerm arg;
    absl::Status s = ArgTerm(clause, t, slot, &arg);
    if (!s.ok()) return s;
    out->args.push_back(std::move(arg));
  }
  return absl::OkStatus();
}

absl::Status MakeFunction(const Clause& clause, const storage::Schema& schema,
                          const SlotLookup& slot, FunctionSpec* out) {
  const FunctionClause& f = clause.function;
  out->text = clause.text;
  out->binding = f.binding.kind;
  for (const std::string& v : f.binding.vars) {
    out->outputs.push_back(v == "_" ? PlanTerm{} : SlotTerm(slot(v)));
  }
  const std::string_view fn = f.fn;
  const size_t n = f.args.size();
  auto args_from = [&](size_t first) -> absl::Status {
    for (size_t i = first; i < n; ++i) {
      PlanTerm arg;
      absl::Status s = ArgTerm(clause, f.args[i], slot, &arg);
      if (!s.ok()) return s;
      out->args.push_back(std::move(arg));
    }
    return absl::OkStatus();
  };
  if (fn == "fulltext") {
    // $ :attr search: the postings of `$`, a constant :db/fulltext
    // attribute, a search string (constant or bound).
    absl::Status s = ExpectSource(clause, f.args[0]);
    if (!s.ok()) return s;
    absl::StatusOr<const storage::Attribute*> attr =
        AttrConst(clause, f.args[1], schema);
    if (!attr.ok()) return attr.status();
    if (!(*attr)->fulltext) {
      return ClauseError(clause, StrCat("attribute :", (*attr)->ident,
                                        " is not :db/fulltext"));
    }
    out->kind = FunctionSpec::Kind::kFulltext;
    out->args.push_back(ConstTerm(Value::Ref((*attr)->id)));
    return args_from(2);
  }
  if (fn == "ground") {
    if (f.args[0].kind != Term::Kind::kConstant) {
      return ClauseError(clause, "ground takes one constant");
    }
    out->kind = FunctionSpec::Kind::kGround;
    return GroundValues(clause, f.args[0].constant, out);
  }
  if (fn == "get-else" || fn == "get-some") {
    const bool else_fn = fn == "get-else";
    absl::Status s = ExpectSource(clause, f.args[0]);
    if (!s.ok()) return s;
    out->kind =
        else_fn ? FunctionSpec::Kind::kGetElse : FunctionSpec::Kind::kGetSome;
    PlanTerm e;
    if (f.args[1].is_var()) {
      e = SlotTerm(slot(f.args[1].name));
    } else {
      bool never = false;
      s = EntityTerm(clause, f.args[1], schema, &e, &never);
      if (!s.ok()) return s;
      if (never) e = ConstTerm(Value::Ref(-1));
    }
    out->args.push_back(e);
    const size_t last_attr = else_fn ? 2 : n - 1;
    for (size_t i = 2; i <= last_attr; ++i) {
      absl::StatusOr<const storage::Attribute*> attr =
          AttrConst(clause, f.args[i], schema);
      if (!attr.ok()) return attr.status();
      out->args.push_back(ConstTerm(Value::Ref((*attr)->id)));
    }
    if (else_fn) {
      PlanTerm def;
      s = ArgTerm(clause, f.args[3], slot, &def);
      if (!s.ok()) return s;
      out->args.push_back(std::move(def));
    }
    return absl::OkStatus();
  }
  if (fn == "tuple") {
    out->kind = FunctionSpec::Kind::kTuple;
    return args_from(0);
  }
  if (fn == "untuple") {
    out->kind = FunctionSpec::Kind::kUntuple;
    return args_from(0);
  }
  if (fn == "tx-ids" || fn == "tx-data") {
    // `$` names the log: the log of the queried database (query/README.md,
    // "The log"). Any other source is refused rather than silently read as
    // `$`'s log.
    absl::Status s = ExpectSource(clause, f.args[0]);
    if (!s.ok()) return s;
  }
  if (fn == "tx-data") {
    out->kind = FunctionSpec::Kind::kTxData;
    return args_from(1);
  }
  if (fn == "tx-ids") {
    out->kind = FunctionSpec::Kind::kTxIds;
    for (size_t i = 1; i < 3; ++i) {
      const Term& t = f.args[i];
      PlanTerm arg;
      if (t.kind == Term::Kind::kConstant && t.constant.is_nil()) {
        arg.kind = PlanTerm::Kind::kAbsent;
      } else {
        absl::Status s = ArgTerm(clause, t, slot, &arg);
        if (!s.ok()) return s;
      }
      out->args.push_back(std::move(arg));
    }
    return absl::OkStatus();
  }
  out->builtin = builtins::FindFunction(f.fn);
  out->kind = FunctionSpec::Kind::kBuiltin;
  return args_from(0);
}

}  // namespace mentat::query::planner
