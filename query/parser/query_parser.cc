// ParseQuery and ParseRules (parser.h): splitting a query into its
// sections, and the sections other than :find and :where.

#include <algorithm>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mentat/base/excerpt.h"
#include "mentat/base/str_cat.h"
#include "mentat/edn/edn_reader.h"
#include "mentat/query/parser.h"
#include "parser/clause_parser.h"
#include "parser/find_parser.h"
#include "parser/parse_support.h"

namespace mentat::query {
namespace {

using edn::EdnValue;
using parser::ErrorAt;
using parser::IsSymbol;
using parser::IsVariable;
using parser::Show;

// The forms of one query section (`key` is null when it is absent).
struct Section {
  const EdnValue* key = nullptr;
  std::span<const EdnValue> items;
};

struct Sections {
  Section find, keys, strs, syms, with, in, where, order, limit, offset;

  Section* Find(std::string_view keyword) {
    if (keyword == "find") return &find;
    if (keyword == "where") return &where;
    if (keyword == "in") return &in;
    if (keyword == "with") return &with;
    if (keyword == "keys") return &keys;
    if (keyword == "strs") return &strs;
    if (keyword == "syms") return &syms;
    if (keyword == "order") return &order;
    if (keyword == "limit") return &limit;
    if (keyword == "offset") return &offset;
    return nullptr;
  }
};

[[nodiscard]] absl::Status UnknownKeyword(const EdnValue& key) {
  return ErrorAt(key, StrCat("unknown query keyword :", Excerpt(key.text()),
                             ": expected :find, :keys, :strs, :syms, :with, "
                             ":in, :where, :order, :limit or :offset"));
}

[[nodiscard]] absl::Status Claim(Section* section, const EdnValue& key,
                                 std::span<const EdnValue> items) {
  if (section->key != nullptr) {
    return ErrorAt(key,
                   StrCat("duplicate :", Excerpt(key.text()), " in query"));
  }
  section->key = &key;
  section->items = items;
  return absl::OkStatus();
}

// [:find ?a :in $ :where ...]: each keyword starts a section.
[[nodiscard]] absl::Status SplitVector(const EdnValue& form, Sections* out) {
  std::span<const EdnValue> items = form.items();
  if (items.empty()) return ErrorAt(form, "empty query []: missing :find");
  if (!items[0].is_keyword()) {
    return ErrorAt(items[0],
                   StrCat("a query starts with :find, got ", Show(items[0])));
  }
  size_t i = 0;
  while (i < items.size()) {
    const EdnValue& key = items[i];
    Section* section = out->Find(key.text());
    if (section == nullptr) return UnknownKeyword(key);
    size_t end = i + 1;
    while (end < items.size() && !items[end].is_keyword()) ++end;
    absl::Status s = Claim(section, key, items.subspan(i + 1, end - i - 1));
    if (!s.ok()) return s;
    i = end;
  }
  return absl::OkStatus();
}

bool IsOrderDirection(const EdnValue& v) {
  return v.is_list() && !v.items().empty() &&
         (IsSymbol(v.items()[0], "asc") || IsSymbol(v.items()[0], "desc"));
}

// {:find [?a] :in [$] :where [...]}: each value holds a section's forms.
[[nodiscard]] absl::Status SplitMap(const EdnValue& form, Sections* out) {
  const std::vector<EdnValue>& kv = form.items();
  for (size_t i = 0; i + 1 < kv.size(); i += 2) {
    const EdnValue& key = kv[i];
    const EdnValue& value = kv[i + 1];
    if (!key.is_keyword()) {
      return ErrorAt(key,
                     StrCat("query map keys are keywords, got ", Show(key)));
    }
    Section* section = out->Find(key.text());
    if (section == nullptr) return UnknownKeyword(key);
    const bool whole = section == &out->limit || section == &out->offset ||
                       (section == &out->order && IsOrderDirection(value));
    std::span<const EdnValue> items(&value, 1);
    if (!whole && value.is_sequential()) items = value.items();
    absl::Status s = Claim(section, key, items);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

[[nodiscard]] absl::Status ParseKeys(const Section& section,
                                     ParsedQuery::KeysKind kind,
                                     ParsedQuery* out) {
  if (section.key == nullptr) return absl::OkStatus();
  if (out->keys_kind != ParsedQuery::KeysKind::kNone) {
    return ErrorAt(*section.key,
                   "only one of :keys, :strs and :syms may be given");
  }
  out->keys_kind = kind;
  for (const EdnValue& k : section.items) {
    if (!k.is_symbol() && !k.is_string()) {
      return ErrorAt(k, StrCat(":", section.key->text(),
                               " takes names (symbols), got ", Show(k)));
    }
    out->keys.push_back(k.text());
  }
  if (out->keys.size() != out->find.elements.size()) {
    return ErrorAt(*section.key,
                   StrCat(":", section.key->text(), " has ", out->keys.size(),
                          " names but :find has ", out->find.elements.size(),
                          " elements"));
  }
  return absl::OkStatus();
}

[[nodiscard]] absl::Status ParseWith(const Section& section, ParsedQuery* out) {
  if (section.key == nullptr) return absl::OkStatus();
  if (section.items.empty()) {
    return ErrorAt(*section.key, ":with needs at least one variable");
  }
  for (const EdnValue& v : section.items) {
    if (!IsVariable(v)) {
      return ErrorAt(v, StrCat(":with takes variables, got ", Show(v)));
    }
    if (std::find(out->with.begin(), out->with.end(), v.text()) !=
        out->with.end()) {
      return ErrorAt(
          v, StrCat("duplicate variable ", Excerpt(v.text()), " in :with"));
    }
    out->with.push_back(v.text());
  }
  return absl::OkStatus();
}

[[nodiscard]] absl::Status ParseInputs(const Section& section,
                                       ParsedQuery* out) {
  if (section.key == nullptr) {
    InputSpec src;
    src.kind = InputSpec::Kind::kSource;
    src.name = "$";
    out->inputs.push_back(std::move(src));
    return absl::OkStatus();
  }
  if (section.items.empty()) {
    return ErrorAt(*section.key, ":in needs at least one input");
  }
  std::vector<std::string_view> seen;  // sources, % and variables
  out->inputs.resize(section.items.size());
  for (size_t i = 0; i < section.items.size(); ++i) {
    const EdnValue& v = section.items[i];
    InputSpec& in = out->inputs[i];
    in.pos = parser::PosOf(v);
    if (parser::IsSourceSymbol(v) || IsSymbol(v, "%")) {
      in.kind =
          v.text() == "%" ? InputSpec::Kind::kRules : InputSpec::Kind::kSource;
      in.name = v.text();
      if (std::find(seen.begin(), seen.end(), v.text()) != seen.end()) {
        return ErrorAt(v, StrCat("duplicate ", Excerpt(v.text()), " in :in"));
      }
      seen.push_back(v.text());
      continue;
    }
    if (!IsVariable(v) && !v.is_vector()) {
      return ErrorAt(v, StrCat("bad :in element ", Show(v),
                               ": expected $, $name, %, ?x, [?x ...], "
                               "[?a ?b] or [[?a ?b]]"));
    }
    Binding binding;
    absl::Status s = parser::ParseBinding(v, ":in", &binding);
    if (!s.ok()) return s;
    switch (binding.kind) {
      case Binding::Kind::kScalar:
        in.kind = InputSpec::Kind::kScalar;
        break;
      case Binding::Kind::kTuple:
        in.kind = InputSpec::Kind::kTuple;
        break;
      case Binding::Kind::kCollection:
        in.kind = InputSpec::Kind::kCollection;
        break;
      case Binding::Kind::kRelation:
        in.kind = InputSpec::Kind::kRelation;
        break;
    }
    in.vars = std::move(binding.vars);
    for (const std::string& var : in.vars) {
      if (var == "_") continue;
      if (std::find(seen.begin(), seen.end(), var) != seen.end()) {
        return ErrorAt(v, StrCat("duplicate variable ", var, " in :in"));
      }
      seen.push_back(var);
    }
  }
  return absl::OkStatus();
}

bool IsFindVariable(const ParsedQuery& q, std::string_view var) {
  for (const FindElement& e : q.find.elements) {
    if (e.kind == FindElement::Kind::kVariable && e.var == var) return true;
  }
  return false;
}

[[nodiscard]] absl::Status ParseOrder(const Section& section,
                                      ParsedQuery* out) {
  if (section.key == nullptr) return absl::OkStatus();
  std::vector<const EdnValue*> specs;
  for (const EdnValue& v : section.items) {
    if (v.is_vector()) {
      for (const EdnValue& inner : v.items()) specs.push_back(&inner);
    } else {
      specs.push_back(&v);
    }
  }
  if (specs.empty()) {
    return ErrorAt(*section.key, ":order needs at least one variable");
  }
  for (const EdnValue* v : specs) {
    OrderSpec spec;
    const EdnValue* var = v;
    if (IsOrderDirection(*v) && v->items().size() == 2) {
      spec.descending = IsSymbol(v->items()[0], "desc");
      var = &v->items()[1];
    }
    if (!IsVariable(*var)) {
      return ErrorAt(*v, StrCat("bad :order element ", Show(*v),
                                ": expected ?x, (asc ?x) or (desc ?x)"));
    }
    if (!IsFindVariable(*out, var->text())) {
      return ErrorAt(*var, StrCat(":order variable ", var->text(),
                                  " is not a variable of :find"));
    }
    spec.var = var->text();
    out->order.push_back(std::move(spec));
  }
  return absl::OkStatus();
}

[[nodiscard]] absl::Status ParseCount(const Section& section,
                                      std::optional<int64_t>* out) {
  if (section.key == nullptr) return absl::OkStatus();
  const std::string& name = section.key->text();
  if (section.items.size() != 1 || !section.items[0].is_int() ||
      section.items[0].as_int() < 0) {
    const EdnValue& at =
        section.items.empty() ? *section.key : section.items[0];
    return ErrorAt(at, StrCat(":", name, " takes a non-negative integer, got ",
                              section.items.empty() ? "nothing" : Show(at)));
  }
  *out = section.items[0].as_int();
  return absl::OkStatus();
}

// Without :where, every :find and :with variable must come from :in.
[[nodiscard]] absl::Status CheckBoundByInputs(const ParsedQuery& q,
                                              const Section& where,
                                              const EdnValue& form) {
  auto bound = [&](std::string_view var) {
    for (const InputSpec& in : q.inputs) {
      if (std::find(in.vars.begin(), in.vars.end(), var) != in.vars.end()) {
        return true;
      }
    }
    return false;
  };
  const char* what = where.key == nullptr ? "no :where" : "empty :where";
  for (const FindElement& e : q.find.elements) {
    const std::string& var = e.var;
    if (!bound(var)) {
      return ErrorAt(e.pos,
                     StrCat(what, ": ", var, " in :find is not bound by :in"));
    }
    for (const Term& t : e.aggregate_args) {
      if (t.is_var() && !bound(t.name)) {
        return ErrorAt(
            t.pos, StrCat(what, ": ", t.name, " in :find is not bound by :in"));
      }
    }
  }
  for (const std::string& var : q.with) {
    if (!bound(var)) {
      return ErrorAt(where.key != nullptr ? *where.key : form,
                     StrCat(what, ": ", var, " in :with is not bound by :in"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ParsedQuery> ParseQuery(const EdnValue& form) {
  Sections sections;
  absl::Status s;
  if (form.is_vector()) {
    s = SplitVector(form, &sections);
  } else if (form.is_map()) {
    s = SplitMap(form, &sections);
  } else {
    s = ErrorAt(form, StrCat("a query is a vector [:find ...] or a map "
                             "{:find [...]}, got ",
                             parser::KindWithArticle(form)));
  }
  if (!s.ok()) return s;
  if (sections.find.key == nullptr) {
    return ErrorAt(form, "query has no :find");
  }
  ParsedQuery q;
  s = parser::ParseFindSpec(*sections.find.key, sections.find.items, &q.find);
  if (!s.ok()) return s;
  s = ParseKeys(sections.keys, ParsedQuery::KeysKind::kKeys, &q);
  if (!s.ok()) return s;
  s = ParseKeys(sections.strs, ParsedQuery::KeysKind::kStrs, &q);
  if (!s.ok()) return s;
  s = ParseKeys(sections.syms, ParsedQuery::KeysKind::kSyms, &q);
  if (!s.ok()) return s;
  s = ParseWith(sections.with, &q);
  if (!s.ok()) return s;
  s = ParseInputs(sections.in, &q);
  if (!s.ok()) return s;
  s = parser::ParseClauses(sections.where.items, &q.where);
  if (!s.ok()) return s;
  if (q.where.empty()) {
    s = CheckBoundByInputs(q, sections.where, form);
    if (!s.ok()) return s;
  }
  s = ParseOrder(sections.order, &q);
  if (!s.ok()) return s;
  s = ParseCount(sections.limit, &q.limit);
  if (!s.ok()) return s;
  s = ParseCount(sections.offset, &q.offset);
  if (!s.ok()) return s;
  return q;
}

absl::StatusOr<ParsedQuery> ParseQuery(std::string_view text) {
  absl::StatusOr<EdnValue> form = edn::ParseEdn(text);
  if (!form.ok()) return form.status();
  return ParseQuery(*form);
}

absl::StatusOr<std::vector<Rule>> ParseRules(const EdnValue& rules) {
  if (!rules.is_sequential()) {
    return ErrorAt(rules, StrCat("rules are a vector of [(name ?var ...) "
                                 "clause ...], got ",
                                 parser::KindWithArticle(rules)));
  }
  std::vector<Rule> out(rules.items().size());
  for (size_t i = 0; i < out.size(); ++i) {
    absl::Status s = parser::ParseRule(rules.items()[i], &out[i]);
    if (!s.ok()) return s;
    for (size_t j = 0; j < i; ++j) {
      if (out[j].name == out[i].name &&
          out[j].vars.size() != out[i].vars.size()) {
        return ErrorAt(out[i].pos,
                       StrCat("rule ", out[i].name, " is defined with ",
                              out[j].vars.size(), " and with ",
                              out[i].vars.size(), " variables"));
      }
    }
  }
  return out;
}

absl::StatusOr<std::vector<Rule>> ParseRules(std::string_view text) {
  absl::StatusOr<EdnValue> form = edn::ParseEdn(text);
  if (!form.ok()) return form.status();
  return ParseRules(*form);
}

}  // namespace mentat::query
