#include "parser/find_parser.h"

#include <memory>
#include <string>
#include <utility>

#include "mentat/base/excerpt.h"
#include "mentat/base/str_cat.h"
#include "mentat/edn/edn_printer.h"
#include "mentat/query/pull_pattern.h"
#include "parser/parse_support.h"

namespace mentat::query::parser {
namespace {

using edn::EdnValue;

[[nodiscard]] absl::Status ParsePull(const EdnValue& form, FindElement* out) {
  const std::vector<EdnValue>& items = form.items();
  if (items.size() != 3 && items.size() != 4) {
    return ErrorAt(form, StrCat("pull takes an entity variable and a "
                                "pattern, as in (pull ?e [*]) or (pull $src "
                                "?e [*]), got ",
                                Show(form)));
  }
  size_t next = 1;
  if (items.size() == 4) {
    if (!IsSourceSymbol(items[1])) {
      return ErrorAt(items[1], StrCat("expected a source ($ or $name) in ",
                                      Show(form), ", got ", Show(items[1])));
    }
    out->pull_source = items[1].text();
    next = 2;
  }
  const EdnValue& entity = items[next];
  if (!IsVariable(entity)) {
    return ErrorAt(entity, StrCat("pull needs an entity variable, got ",
                                  Show(entity), " in ", Show(form)));
  }
  const EdnValue& pattern = items[next + 1];
  if (IsVariable(pattern)) {
    return ErrorAt(pattern, StrCat("a pull pattern given as an input (",
                                   Excerpt(pattern.text()),
                                   ") is not supported: write the pattern in "
                                   "the query"));
  }
  absl::StatusOr<PullPattern> parsed = ParsePullPattern(pattern);
  if (!parsed.ok()) return parsed.status();
  out->kind = FindElement::Kind::kPull;
  out->var = entity.text();
  out->pull = std::make_shared<const PullPattern>(*std::move(parsed));
  return absl::OkStatus();
}

[[nodiscard]] absl::Status ParseAggregate(const EdnValue& form,
                                          FindElement* out) {
  const std::vector<EdnValue>& items = form.items();
  if (items.size() < 2) {
    return ErrorAt(form, StrCat("aggregate ", Show(form),
                                " needs a variable, as in (count ?x)"));
  }
  out->kind = FindElement::Kind::kAggregate;
  out->aggregate = items[0].text();
  out->aggregate_args.resize(items.size() - 1);
  for (size_t i = 1; i < items.size(); ++i) {
    const EdnValue& v = items[i];
    Term& term = out->aggregate_args[i - 1];
    term.pos = PosOf(v);
    const bool last = i + 1 == items.size();
    if (IsVariable(v)) {
      term.kind = Term::Kind::kVariable;
      term.name = v.text();
      continue;
    }
    if (last) {
      return ErrorAt(v, StrCat("the last argument of aggregate ", Show(form),
                               " must be a variable, got ", Show(v)));
    }
    if (v.is_symbol() || v.is_list() || v.is_nil()) {
      return ErrorAt(v,
                     StrCat("argument ", Show(v), " of aggregate ", Show(form),
                            " must be a variable or a constant"));
    }
    term.kind = Term::Kind::kConstant;
    term.constant = v;
  }
  out->var = out->aggregate_args.back().name;
  return absl::OkStatus();
}

}  // namespace

[[nodiscard]] absl::Status ParseFindElement(const EdnValue& v,
                                            FindElement* out) {
  out->pos = PosOf(v);
  if (IsVariable(v)) {
    out->kind = FindElement::Kind::kVariable;
    out->var = v.text();
    out->text = v.text();
    return absl::OkStatus();
  }
  if (IsBlank(v)) return ErrorAt(v, "_ is not allowed in :find");
  if (IsSymbol(v, ".") || IsSymbol(v, "...")) {
    return ErrorAt(v, StrCat("misplaced ", Excerpt(v.text()),
                             " in :find: write :find ?x . for a scalar or "
                             ":find [?x ...] for a collection"));
  }
  if (v.is_list() && !v.items().empty() && v.items()[0].is_symbol() &&
      !IsVariable(v.items()[0]) && !IsSourceSymbol(v.items()[0])) {
    absl::Status s = v.items()[0].text() == "pull" ? ParsePull(v, out)
                                                   : ParseAggregate(v, out);
    if (!s.ok()) return s;
    out->text = edn::PrintEdn(v);
    return absl::OkStatus();
  }
  if (v.is_vector()) {
    return ErrorAt(v, StrCat("vector ", Show(v),
                             " in :find: a vector must be the only element, "
                             "as in :find [?a ...] or :find [?a ?b]"));
  }
  return ErrorAt(v, StrCat("a :find element must be a variable, an "
                           "aggregate or a pull expression, got ",
                           Show(v)));
}

[[nodiscard]] absl::Status ParseFindSpec(const EdnValue& key,
                                         std::span<const EdnValue> items,
                                         FindSpec* out) {
  if (items.empty()) return ErrorAt(key, ":find needs at least one element");
  std::span<const EdnValue> elements = items;
  if (items.size() == 2 && IsSymbol(items[1], ".")) {
    out->kind = FindSpec::Kind::kScalar;
    elements = items.first(1);
  } else if (items.size() == 1 && items[0].is_vector()) {
    const std::vector<EdnValue>& inner = items[0].items();
    if (inner.empty()) {
      return ErrorAt(items[0],
                     "empty vector [] in :find: write [?a ...] "
                     "or [?a ?b]");
    }
    if (inner.size() == 2 && IsSymbol(inner[1], "...")) {
      out->kind = FindSpec::Kind::kCollection;
      elements = std::span<const EdnValue>(inner).first(1);
    } else {
      out->kind = FindSpec::Kind::kTuple;
      elements = inner;
    }
  } else {
    out->kind = FindSpec::Kind::kRelation;
  }
  out->elements.resize(elements.size());
  for (size_t i = 0; i < elements.size(); ++i) {
    absl::Status s = ParseFindElement(elements[i], &out->elements[i]);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace mentat::query::parser
