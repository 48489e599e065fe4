#include "parser/parse_support.h"

#include <string>
#include <string_view>

#include "mentat/base/excerpt.h"
#include "mentat/base/str_cat.h"
#include "mentat/edn/edn_printer.h"
#include "mentat/edn/edn_reader.h"

namespace mentat::query::parser {

using edn::EdnValue;

[[nodiscard]] absl::Status ErrorAt(Pos pos, std::string_view message) {
  return edn::EdnError({pos.line, pos.column}, message);
}

std::string Show(const EdnValue& v) {
  return edn::PrintEdnAbbreviated(v, kShowBytes);
}

std::string KindWithArticle(const EdnValue& v) {
  std::string_view name = edn::EdnKindName(v.kind());
  const bool vowel = !name.empty() && std::string_view("aeiou").find(name[0]) !=
                                          std::string_view::npos;
  return StrCat(vowel ? "an " : "a ", name);
}

[[nodiscard]] absl::Status ParseTerm(const EdnValue& v, TermPlace place,
                                     const EdnValue& clause, Term* out) {
  out->pos = PosOf(v);
  if (v.is_symbol()) {
    if (IsVariable(v)) {
      out->kind = Term::Kind::kVariable;
      out->name = v.text();
      return absl::OkStatus();
    }
    if (IsBlank(v)) {
      if (place == TermPlace::kFunctionArg) {
        return ErrorAt(v, StrCat("_ cannot be an argument of a function, in ",
                                 Show(clause)));
      }
      out->kind = Term::Kind::kBlank;
      return absl::OkStatus();
    }
    if (IsSourceSymbol(v)) {
      if (place != TermPlace::kFunctionArg) {
        return ErrorAt(
            v, StrCat("source ", Excerpt(v.text()),
                      place == TermPlace::kPattern
                          ? " must come first in a data pattern, in "
                          : " cannot be a rule argument (write ($src rule ...))"
                            ", in ",
                      Show(clause)));
      }
      out->kind = Term::Kind::kSource;
      out->name = v.text();
      return absl::OkStatus();
    }
    return ErrorAt(
        v, StrCat("unexpected symbol ", Excerpt(v.text()), " in ", Show(clause),
                  ": variables start with '?', sources with '$'"));
  }
  if (v.is_list()) {
    return ErrorAt(v,
                   StrCat("nested expression ", Show(v), " in ", Show(clause),
                          ": bind it with its own clause [(f ...) ?x]"));
  }
  if (v.is_nil() && place != TermPlace::kFunctionArg) {
    return ErrorAt(v, StrCat("nil is not allowed in ", Show(clause)));
  }
  out->kind = Term::Kind::kConstant;
  out->constant = v;
  return absl::OkStatus();
}

}  // namespace mentat::query::parser
