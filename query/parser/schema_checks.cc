#include "parser/schema_checks.h"

#include <cstdint>
#include <string>

#include "mentat/base/closest_name.h"
#include "mentat/base/excerpt.h"
#include "mentat/base/str_cat.h"
#include "mentat/edn/edn_value.h"
#include "mentat/query/functions.h"
#include "mentat/storage/value.h"
#include "parser/parse_support.h"

namespace mentat::query::parser {
namespace {

using edn::EdnValue;
using storage::Attribute;
using storage::Schema;
using storage::ValueType;

constexpr uint8_t kAnyArity = 255;

// Functions the executor implements because they read the database (or
// build tuples); they are not in functions.h's tables.
struct DbFunction {
  std::string_view name;
  uint8_t min_arity;
  uint8_t max_arity;
  bool predicate;     // used as [(f ...)], not bound
  bool needs_source;  // the first argument is $ or $name
};

constexpr DbFunction kDbFunctions[] = {
    {"ground", 1, 1, false, false},          {"get-else", 4, 4, false, true},
    {"get-some", 3, kAnyArity, false, true}, {"missing?", 3, 3, true, true},
    {"tuple", 1, kAnyArity, false, false},   {"untuple", 1, 1, false, false},
    {"tx-ids", 3, 3, false, true},           {"tx-data", 2, 2, false, true},
    {"fulltext", 3, 3, false, true},         {"identity", 1, 1, false, false},
};

const DbFunction* FindDbFunction(std::string_view name) {
  for (const DbFunction& f : kDbFunctions) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

// Arities up to which a name is probed to tell "wrong arity" from "unknown".
constexpr size_t kMaxProbedArity = 16;

bool IsPredicateName(std::string_view name) {
  for (size_t n = 0; n <= kMaxProbedArity; ++n) {
    if (IsBuiltinPredicate(name, n)) return true;
  }
  return false;
}

// "; did you mean X?" for a name that is no predicate or function, when
// one is near, else "".
std::string NearestCallable(std::string_view name) {
  ClosestName closest(name);
  for (std::string_view n : BuiltinPredicateNames()) closest.Offer(n);
  for (std::string_view n : BuiltinFunctionNames()) closest.Offer(n);
  for (const DbFunction& f : kDbFunctions) closest.Offer(f.name);
  if (closest.best().empty()) return "";
  return StrCat("; did you mean ", closest.best(), "?");
}

bool IsFunctionName(std::string_view name) {
  for (size_t n = 0; n <= kMaxProbedArity; ++n) {
    if (IsBuiltinFunction(name, n)) return true;
  }
  return false;
}

std::string ClauseText(const Clause& c) { return c.text; }

std::string TermText(const Term& t) {
  switch (t.kind) {
    case Term::Kind::kConstant:
      return Show(t.constant);
    case Term::Kind::kBlank:
      return "_";
    default:
      return t.name;
  }
}

// The attribute named by a keyword or id constant, or an error.
[[nodiscard]] absl::Status ResolveAttribute(const EdnValue& v, Pos pos,
                                            const Clause& c,
                                            const Schema& schema,
                                            const Attribute** out) {
  *out = nullptr;
  if (v.is_keyword()) {
    *out = schema.FindAttribute(v.text());
    if (*out == nullptr) {
      // A typo of an attribute gets the nearest one.
      ClosestName closest(v.text());
      for (const auto& [id, attr] : schema.attributes()) {
        closest.Offer(attr.ident);
      }
      return ErrorAt(
          pos, StrCat("unknown attribute :", Excerpt(v.text()), " in ",
                      ClauseText(c),
                      closest.best().empty()
                          ? std::string()
                          : StrCat("; did you mean :", closest.best(), "?")));
    }
    return absl::OkStatus();
  }
  if (v.is_int()) {
    *out = schema.FindAttribute(v.as_int());
    if (*out == nullptr) {
      return ErrorAt(pos, StrCat("no attribute has id ", v.as_int(), ", in ",
                                 ClauseText(c)));
    }
    return absl::OkStatus();
  }
  return ErrorAt(
      pos, StrCat("expected an attribute (a keyword or an id), "
                  "got ",
                  KindWithArticle(v), " ", Show(v), " in ", ClauseText(c)));
}

[[nodiscard]] absl::Status CheckValue(const EdnValue& v, Pos pos,
                                      const Attribute& attr, const Clause& c,
                                      const Schema& schema);

// [:unique/attr value]
[[nodiscard]] absl::Status CheckLookupRef(const EdnValue& v, Pos pos,
                                          const Clause& c,
                                          const Schema& schema) {
  if (v.items().size() != 2) {
    return ErrorAt(pos, StrCat("a lookup ref is [:unique/attr value], got ",
                               Show(v), " in ", ClauseText(c)));
  }
  const Attribute* attr = nullptr;
  absl::Status s = ResolveAttribute(v.items()[0], pos, c, schema, &attr);
  if (!s.ok()) return s;
  if (attr->unique == storage::Unique::kNone) {
    return ErrorAt(pos,
                   StrCat("lookup ref ", Show(v),
                          " needs a unique "
                          "attribute; :",
                          attr->ident, " is not unique, in ", ClauseText(c)));
  }
  return CheckValue(v.items()[1], pos, *attr, c, schema);
}

bool Fits(const EdnValue& v, ValueType type) {
  switch (type) {
    case ValueType::kRef:
      return v.is_int() || v.is_keyword();  // ids and idents
    case ValueType::kLong:
      return v.is_int();
    case ValueType::kDouble:
      return v.is_float() || v.is_int();
    case ValueType::kBigInt:
      return v.is_bigint() || v.is_int();
    case ValueType::kBigDec:
      return v.is_bigdec() || v.is_int();
    case ValueType::kBoolean:
      return v.is_bool();
    case ValueType::kInstant:
      return v.is_inst();
    case ValueType::kUuid:
      return v.is_uuid();
    case ValueType::kKeyword:
      return v.is_keyword();
    case ValueType::kString:
    case ValueType::kBytes:
      return v.is_string();
    case ValueType::kUri:
      return v.is_tagged() && v.text() == "uri";
    case ValueType::kSymbol:
      return v.is_symbol();
  }
  return false;
}

[[nodiscard]] absl::Status CheckValue(const EdnValue& v, Pos pos,
                                      const Attribute& attr, const Clause& c,
                                      const Schema& schema) {
  if (attr.is_ref() && v.is_vector()) {
    return CheckLookupRef(v, pos, c, schema);
  }
  if (Fits(v, attr.type)) return absl::OkStatus();
  return ErrorAt(
      pos, StrCat("value ", Show(v), " (", KindWithArticle(v),
                  ") does not fit attribute :", attr.ident, " of type ",
                  storage::ValueTypeIdent(attr.type), ", in ", ClauseText(c)));
}

[[nodiscard]] absl::Status CheckEntity(const Term& t, const Clause& c,
                                       const Schema& schema) {
  const EdnValue& v = t.constant;
  if (v.is_int() || v.is_keyword()) return absl::OkStatus();
  if (v.is_vector()) return CheckLookupRef(v, t.pos, c, schema);
  return ErrorAt(
      t.pos, StrCat("an entity is a variable, an id, an ident or "
                    "a lookup ref, got ",
                    KindWithArticle(v), " ", Show(v), " in ", ClauseText(c)));
}

// An attribute argument of a database function (get-else, missing?, ...).
[[nodiscard]] absl::Status CheckAttributeArg(const Term& t, const Clause& c,
                                             const Schema& schema,
                                             const Attribute** out) {
  *out = nullptr;
  if (t.kind != Term::Kind::kConstant) {
    if (t.is_var()) return absl::OkStatus();  // resolved when run
    return ErrorAt(t.pos, StrCat("expected an attribute, got ", TermText(t),
                                 " in ", ClauseText(c)));
  }
  return ResolveAttribute(t.constant, t.pos, c, schema, out);
}

[[nodiscard]] absl::Status CheckDbCall(const DbFunction& f, const Clause& c,
                                       const std::vector<Term>& args,
                                       const Binding* binding,
                                       const Schema& schema) {
  if (f.needs_source && args[0].kind != Term::Kind::kSource) {
    return ErrorAt(args[0].pos, StrCat(f.name,
                                       " takes a source ($) as its "
                                       "first argument, in ",
                                       ClauseText(c)));
  }
  for (size_t i = f.needs_source ? 1 : 0; i < args.size(); ++i) {
    if (args[i].kind == Term::Kind::kSource) {
      return ErrorAt(args[i].pos, StrCat("unexpected source ", args[i].name,
                                         " in ", ClauseText(c)));
    }
  }
  const Attribute* attr = nullptr;
  if (f.name == "get-else" || f.name == "missing?") {
    absl::Status s = CheckAttributeArg(args[2], c, schema, &attr);
    if (!s.ok()) return s;
    if (f.name == "get-else") {
      if (attr != nullptr && attr->many()) {
        return ErrorAt(
            args[2].pos,
            StrCat("get-else needs a cardinality-one attribute; :", attr->ident,
                   " is cardinality many, in ", ClauseText(c)));
      }
      if (args[3].kind == Term::Kind::kConstant && args[3].constant.is_nil()) {
        return ErrorAt(args[3].pos, StrCat("the default of get-else cannot "
                                           "be nil, in ",
                                           ClauseText(c)));
      }
    }
  } else if (f.name == "get-some") {
    for (size_t i = 2; i < args.size(); ++i) {
      absl::Status s = CheckAttributeArg(args[i], c, schema, &attr);
      if (!s.ok()) return s;
    }
  } else if (f.name == "tx-ids" || f.name == "tx-data") {
    // A constant bound must be a tx id or t (an integer), an instant
    // (tx-ids only) or nil (tx-ids only: an open end). Variables are
    // checked when the query runs.
    const bool ids = f.name == "tx-ids";
    for (size_t i = 1; i < args.size(); ++i) {
      if (args[i].kind != Term::Kind::kConstant) continue;
      const EdnValue& v = args[i].constant;
      if ((v.is_int() && v.as_int() >= 0) ||
          (ids && (v.is_inst() || v.is_nil())))
        continue;
      return ErrorAt(
          args[i].pos,
          StrCat(f.name, "'s argument ", i + 1, " must be ",
                 ids ? "a t, a tx id, an instant or nil" : "a t or a tx id",
                 "; got ", KindWithArticle(v), " ", Show(v), " in ",
                 ClauseText(c)));
    }
    if (ids && args[1].kind == Term::Kind::kConstant &&
        args[2].kind == Term::Kind::kConstant && args[1].constant.is_int() &&
        args[2].constant.is_int() &&
        args[1].constant.as_int() > args[2].constant.as_int()) {
      return ErrorAt(
          args[1].pos,
          StrCat("tx-ids's start ", Show(args[1].constant),
                 " is after its end ", Show(args[2].constant),
                 " (the range is [start, end)), in ", ClauseText(c)));
    }
  } else if (f.name == "fulltext") {
    absl::Status s = CheckAttributeArg(args[1], c, schema, &attr);
    if (!s.ok()) return s;
    if (attr != nullptr && !attr->fulltext) {
      return ErrorAt(args[1].pos,
                     StrCat("attribute :", attr->ident,
                            " is not :db/fulltext, in ", ClauseText(c)));
    }
  }
  if (binding == nullptr) return absl::OkStatus();
  const bool want_relation = f.name == "fulltext" || f.name == "tx-data";
  if (want_relation && binding->kind != Binding::Kind::kRelation) {
    return ErrorAt(binding->pos, StrCat(f.name,
                                        " returns a relation: bind "
                                        "it as [[?a ?b ...]], in ",
                                        ClauseText(c)));
  }
  if (f.name == "tx-data" && binding->kind == Binding::Kind::kRelation &&
      binding->vars.size() > 5) {
    return ErrorAt(binding->pos,
                   StrCat("tx-data binds at most 5 columns [[?e ?a ?v ?tx "
                          "?added]], got ",
                          binding->vars.size(), ", in ", ClauseText(c)));
  }
  if (f.name == "fulltext" && binding->kind == Binding::Kind::kRelation &&
      binding->vars.size() > 4) {
    return ErrorAt(binding->pos,
                   StrCat("fulltext binds at most 4 columns [[?e ?v ?tx "
                          "?score]], got ",
                          binding->vars.size(), ", in ", ClauseText(c)));
  }
  if (f.name == "tx-ids" && binding->kind != Binding::Kind::kCollection) {
    return ErrorAt(binding->pos, StrCat("tx-ids returns a collection: bind "
                                        "it as [?tx ...], in ",
                                        ClauseText(c)));
  }
  if (f.name == "untuple" && binding->kind != Binding::Kind::kTuple) {
    return ErrorAt(binding->pos, StrCat("untuple binds a tuple [?a ?b ...], "
                                        "in ",
                                        ClauseText(c)));
  }
  return absl::OkStatus();
}

}  // namespace

bool IsKnownFunctionName(std::string_view name) {
  return FindDbFunction(name) != nullptr || IsPredicateName(name) ||
         IsFunctionName(name);
}

[[nodiscard]] absl::Status CheckPatternConstants(const Clause& c,
                                                 const Schema& schema) {
  const std::vector<Term>& t = c.pattern.terms;
  if (t[0].kind == Term::Kind::kConstant) {
    absl::Status s = CheckEntity(t[0], c, schema);
    if (!s.ok()) return s;
  }
  const Attribute* attr = nullptr;
  if (t.size() > 1 && t[1].kind == Term::Kind::kConstant) {
    const EdnValue& a = t[1].constant;
    const bool reverse = a.is_keyword() && !a.name().empty() &&
                         a.name()[0] == '_' &&
                         schema.FindAttribute(a.text()) == nullptr;
    if (!reverse) {
      absl::Status s = ResolveAttribute(a, t[1].pos, c, schema, &attr);
      if (!s.ok()) return s;
    }
  }
  if (t.size() > 2 && t[2].kind == Term::Kind::kConstant && attr != nullptr) {
    absl::Status s = CheckValue(t[2].constant, t[2].pos, *attr, c, schema);
    if (!s.ok()) return s;
  }
  if (t.size() > 3 && t[3].kind == Term::Kind::kConstant &&
      !t[3].constant.is_int()) {
    return ErrorAt(t[3].pos,
                   StrCat("the tx position takes a variable or a "
                          "transaction id, got ",
                          Show(t[3].constant), " in ", ClauseText(c)));
  }
  if (t.size() > 4 && t[4].kind == Term::Kind::kConstant &&
      !t[4].constant.is_bool()) {
    return ErrorAt(t[4].pos,
                   StrCat("the added position takes a variable, "
                          "true or false, got ",
                          Show(t[4].constant), " in ", ClauseText(c)));
  }
  return absl::OkStatus();
}

[[nodiscard]] absl::Status CheckCall(const Clause& c, const Schema& schema) {
  const bool is_predicate = c.kind == Clause::Kind::kPredicate;
  const std::string& name = is_predicate ? c.predicate.fn : c.function.fn;
  const std::vector<Term>& args =
      is_predicate ? c.predicate.args : c.function.args;
  const Binding* binding = is_predicate ? nullptr : &c.function.binding;
  const size_t n = args.size();

  if (const DbFunction* f = FindDbFunction(name)) {
    if (f->predicate != is_predicate) {
      return ErrorAt(
          c.pos, f->predicate ? StrCat(name,
                                       " is a predicate: write it "
                                       "without a binding, as [(",
                                       name, " ...)], in ", ClauseText(c))
                              : StrCat(name,
                                       " is a function: bind its "
                                       "result, as [(",
                                       name, " ...) ?x], in ", ClauseText(c)));
    }
    if (n < f->min_arity || (f->max_arity != kAnyArity && n > f->max_arity)) {
      return ErrorAt(c.pos, StrCat("wrong number of arguments (", n, ") to ",
                                   name, " in ", ClauseText(c)));
    }
    return CheckDbCall(*f, c, args, binding, schema);
  }
  // A source is an error in a known built-in's call; an unknown name is
  // the first thing to say (a misspelt get-else takes $ too).
  if (IsPredicateName(name) || IsFunctionName(name)) {
    for (const Term& t : args) {
      if (t.kind == Term::Kind::kSource) {
        return ErrorAt(
            t.pos, StrCat("unexpected source ", t.name, " in ", ClauseText(c)));
      }
    }
  }
  if (is_predicate) {
    if (IsBuiltinPredicate(name, n)) return absl::OkStatus();
    if (IsPredicateName(name)) {
      return ErrorAt(c.pos,
                     StrCat("wrong number of arguments (", n, ") to predicate ",
                            name, " in ", ClauseText(c)));
    }
    if (IsFunctionName(name)) {
      return ErrorAt(c.pos, StrCat(name,
                                   " is a function, not a predicate: "
                                   "bind its result, as [(",
                                   name, " ...) ?x], in ", ClauseText(c)));
    }
    return ErrorAt(c.pos, StrCat("unknown predicate ", name, " in ",
                                 ClauseText(c), NearestCallable(name)));
  }
  if (IsBuiltinFunction(name, n)) return absl::OkStatus();
  if (IsFunctionName(name)) {
    return ErrorAt(
        c.pos, StrCat("wrong number of arguments (", n, ") to function ", name,
                      " in ", ClauseText(c)));
  }
  if (IsPredicateName(name)) {
    return ErrorAt(c.pos, StrCat(name,
                                 " is a predicate, not a function: "
                                 "write it without a binding, as [(",
                                 name, " ...)], in ", ClauseText(c)));
  }
  return ErrorAt(c.pos, StrCat("unknown function ", name, " in ", ClauseText(c),
                               NearestCallable(name)));
}

[[nodiscard]] absl::Status CheckAggregate(const FindElement& e) {
  const size_t n = e.aggregate_args.size();
  if (IsAggregate(e.aggregate, n)) {
    // (sample n ?x), (min n ?x): MakeAggregate takes n as an integer.
    const Term& count = e.aggregate_args[0];
    if (n == 2 && count.kind == Term::Kind::kConstant &&
        (!count.constant.is_int() || count.constant.as_int() < 0)) {
      return ErrorAt(count.pos, StrCat("the count of ", e.text,
                                       " takes a non-negative integer, got ",
                                       Show(count.constant)));
    }
    return absl::OkStatus();
  }
  for (size_t k = 1; k <= 4; ++k) {
    if (IsAggregate(e.aggregate, k)) {
      return ErrorAt(e.pos,
                     StrCat("wrong number of arguments (", n, ") to aggregate ",
                            e.aggregate, " in ", e.text));
    }
  }
  return ErrorAt(e.pos,
                 StrCat("unknown aggregate ", e.aggregate, " in ", e.text));
}

}  // namespace mentat::query::parser
