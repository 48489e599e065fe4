#include "mentat/query/pull_pattern.h"

#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "mentat/base/str_cat.h"
#include "mentat/edn/edn_printer.h"
#include "mentat/edn/edn_reader.h"

namespace mentat::query {
namespace {

using edn::EdnKind;
using edn::EdnValue;

[[nodiscard]] absl::Status ErrorAt(const EdnValue& at,
                                   std::string_view message) {
  return edn::EdnError({at.line(), at.column()}, message);
}

// A short rendering of a user's form for messages.
std::string Show(const EdnValue& v) { return edn::PrintEdnAbbreviated(v, 60); }

// "a map", "an integer": the kind of a form, for messages.
std::string KindWithArticle(const EdnValue& v) {
  std::string_view name = edn::EdnKindName(v.kind());
  const bool vowel = !name.empty() && std::string_view("aeiou").find(name[0]) !=
                                          std::string_view::npos;
  return StrCat(vowel ? "an " : "a ", name);
}

bool IsWildcard(const EdnValue& v) {
  return (v.is_symbol() && v.text() == "*") ||
         (v.is_string() && v.text() == "*");
}

// Which options a spec has been given, to reject repeats.
struct SeenOptions {
  bool as = false;
  bool limit = false;
  bool default_value = false;
};

class PatternParser {
 public:
  [[nodiscard]] absl::StatusOr<PullPattern> Pattern(const EdnValue& v) {
    if (!v.is_vector()) {
      return ErrorAt(v, StrCat("a pull pattern must be a vector, got ",
                               KindWithArticle(v), " ", Show(v)));
    }
    if (v.items().empty()) {
      return ErrorAt(v, "a pull pattern needs at least one element");
    }
    PullPattern out;
    for (const EdnValue& element : v.items()) {
      absl::Status s = Element(element, &out);
      if (!s.ok()) return s;
    }
    return out;
  }

 private:
  [[nodiscard]] absl::Status Element(const EdnValue& el, PullPattern* out) {
    if (IsWildcard(el)) {
      out->wildcard = true;
      return absl::OkStatus();
    }
    if (el.is_map()) return MapSpec(el, out);
    absl::StatusOr<PullAttrSpec> spec = AttrSpec(el);
    if (!spec.ok()) return spec.status();
    out->attrs.push_back(*std::move(spec));
    return absl::OkStatus();
  }

  // An attribute with or without options: `:a`, `[:a :limit 5]`,
  // `(:a :limit 5)`, `(limit :a 5)`, `(default :a 0)`.
  [[nodiscard]] absl::StatusOr<PullAttrSpec> AttrSpec(const EdnValue& el) {
    if (el.is_keyword()) return AttrName(el);
    if (el.is_list() && !el.items().empty() && el.items()[0].is_symbol()) {
      return LegacyOption(el);
    }
    if (el.is_sequential()) return AttrWithOptions(el);
    if (el.is_symbol() && el.text() == "...") {
      return ErrorAt(el, "... is only allowed as the value of a map spec");
    }
    return ErrorAt(el, StrCat("expected an attribute keyword, *, a map spec or "
                              "an attribute with options, got ",
                              KindWithArticle(el), " ", Show(el)));
  }

  [[nodiscard]] absl::StatusOr<PullAttrSpec> AttrName(const EdnValue& kw) {
    PullAttrSpec spec;
    spec.line = kw.line();
    spec.column = kw.column();
    std::string_view ns = kw.ns();
    std::string_view name = kw.name();
    if (name.size() > 1 && name[0] == '_') {
      spec.reverse = true;
      spec.attr = ns.empty() ? std::string(name.substr(1))
                             : StrCat(ns, "/", name.substr(1));
    } else {
      spec.attr = kw.text();
    }
    return spec;
  }

  [[nodiscard]] absl::StatusOr<PullAttrSpec> AttrWithOptions(
      const EdnValue& seq) {
    const std::vector<EdnValue>& items = seq.items();
    if (items.empty() || !items[0].is_keyword()) {
      const EdnValue& at = items.empty() ? seq : items[0];
      return ErrorAt(
          at, StrCat("an attribute with options starts with the "
                     "attribute keyword, got ",
                     items.empty() ? std::string("nothing") : Show(items[0])));
    }
    absl::StatusOr<PullAttrSpec> spec = AttrName(items[0]);
    if (!spec.ok()) return spec;
    if (items.size() == 1) {
      return ErrorAt(seq, StrCat(Show(seq),
                                 " has no options; write the "
                                 "attribute alone"));
    }
    SeenOptions seen;
    for (size_t i = 1; i < items.size(); i += 2) {
      if (i + 1 == items.size()) {
        return ErrorAt(items[i],
                       StrCat("pull option ", Show(items[i]), " has no value"));
      }
      absl::Status s = Option(items[i], items[i + 1], &seen, &*spec);
      if (!s.ok()) return s;
    }
    return spec;
  }

  [[nodiscard]] absl::Status Option(const EdnValue& name, const EdnValue& value,
                                    SeenOptions* seen, PullAttrSpec* spec) {
    if (name.is_keyword("as")) {
      if (seen->as) return Repeated(name);
      seen->as = true;
      spec->as = value;
      return absl::OkStatus();
    }
    if (name.is_keyword("limit")) {
      if (seen->limit) return Repeated(name);
      seen->limit = true;
      return Limit(value, spec);
    }
    if (name.is_keyword("default")) {
      if (seen->default_value) return Repeated(name);
      seen->default_value = true;
      spec->default_value = value;
      return absl::OkStatus();
    }
    if (name.is_keyword("xform")) {
      return ErrorAt(name, "pull option :xform is not supported");
    }
    return ErrorAt(name, StrCat("unknown pull option ", Show(name),
                                " (expected :as, :limit or :default)"));
  }

  [[nodiscard]] absl::Status Repeated(const EdnValue& name) {
    return ErrorAt(name, StrCat("pull option ", Show(name), " given twice"));
  }

  [[nodiscard]] absl::Status Limit(const EdnValue& value, PullAttrSpec* spec) {
    if (value.is_nil()) {
      spec->no_limit = true;
      return absl::OkStatus();
    }
    if (!value.is_int()) {
      return ErrorAt(value, StrCat("pull option :limit needs a number or nil, "
                                   "got ",
                                   Show(value)));
    }
    if (value.as_int() <= 0) {
      return ErrorAt(value, StrCat("pull option :limit must be positive, got ",
                                   value.as_int()));
    }
    spec->limit = value.as_int();
    spec->no_limit = false;
    return absl::OkStatus();
  }

  // `(limit :a 5)` and `(default :a v)`, or a list-form attribute whose
  // head is a symbol by mistake.
  [[nodiscard]] absl::StatusOr<PullAttrSpec> LegacyOption(
      const EdnValue& list) {
    const std::vector<EdnValue>& items = list.items();
    const EdnValue& head = items[0];
    const bool limit = head.text() == "limit";
    if (!limit && head.text() != "default") {
      return ErrorAt(head, StrCat("unknown pull form (", head.text(),
                                  " ...); expected (limit :attr n), "
                                  "(default :attr value) or (:attr options)"));
    }
    if (items.size() != 3) {
      return ErrorAt(list,
                     StrCat("(", head.text(),
                            " ...) takes an attribute "
                            "and a value, as in (",
                            head.text(), limit ? " :a/b 10)" : " :a/b 0)"));
    }
    if (!items[1].is_keyword()) {
      return ErrorAt(items[1], StrCat("(", head.text(),
                                      " ...) needs an attribute "
                                      "keyword, got ",
                                      Show(items[1])));
    }
    absl::StatusOr<PullAttrSpec> spec = AttrName(items[1]);
    if (!spec.ok()) return spec;
    if (limit) {
      absl::Status s = Limit(items[2], &*spec);
      if (!s.ok()) return s;
    } else {
      spec->default_value = items[2];
    }
    return spec;
  }

  // `{:a [:b] (:c :limit 2) ... [:d :as "d"] 3}`: each entry is one spec.
  [[nodiscard]] absl::Status MapSpec(const EdnValue& map, PullPattern* out) {
    const std::vector<EdnValue>& kv = map.items();
    if (kv.empty()) return ErrorAt(map, "a map spec needs at least one entry");
    for (size_t i = 0; i + 1 < kv.size(); i += 2) {
      const EdnValue& key = kv[i];
      const EdnValue& value = kv[i + 1];
      if (IsWildcard(key)) {
        return ErrorAt(key, "* cannot be the key of a map spec");
      }
      absl::StatusOr<PullAttrSpec> spec = AttrSpec(key);
      if (!spec.ok()) return spec.status();
      if (value.is_vector()) {
        absl::StatusOr<PullPattern> sub = Pattern(value);
        if (!sub.ok()) return sub.status();
        spec->sub = std::make_shared<const PullPattern>(*std::move(sub));
      } else if (value.is_symbol() && value.text() == "...") {
        spec->recursive = true;
      } else if (value.is_int()) {
        if (value.as_int() <= 0) {
          return ErrorAt(value, StrCat("a recursion depth must be positive, "
                                       "got ",
                                       value.as_int()));
        }
        spec->recursive = true;
        spec->recursion_depth = value.as_int();
      } else {
        return ErrorAt(value, StrCat("the value of a map spec must be a "
                                     "pattern vector, a recursion depth or "
                                     "..., got ",
                                     Show(value)));
      }
      out->attrs.push_back(*std::move(spec));
    }
    return absl::OkStatus();
  }
};

}  // namespace

absl::StatusOr<PullPattern> ParsePullPattern(const edn::EdnValue& pattern) {
  PatternParser parser;
  return parser.Pattern(pattern);
}

}  // namespace mentat::query
