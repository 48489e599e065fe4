#ifndef MENTAT_QUERY_CONFORMANCE_CASE_FILE_H_
#define MENTAT_QUERY_CONFORMANCE_CASE_FILE_H_

// Reading conformance case files (format: query/conformance/README.md).
// Test-only code, header-only because query/conformance/ compiles only its
// *_test.cc files (into query_test).

#include <cstdint>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "mentat/base/str_cat.h"
#include "mentat/edn/edn_printer.h"
#include "mentat/edn/edn_reader.h"
#include "mentat/edn/edn_value.h"

namespace mentat::query::conformance {

using edn::EdnValue;

// The database a case's query reads.
struct CaseBasis {
  enum class Kind : uint8_t { kCurrent, kAsOf, kSince, kHistory };
  Kind kind = Kind::kCurrent;
  int64_t tx_number = 0;  // kAsOf, kSince: 1-based index into the txs
};

// An expected error: the status code (as a keyword such as
// :invalid-argument) and fragments its message must contain.
struct ExpectedError {
  std::string code;  // "invalid-argument"; empty: any code
  std::vector<std::string> contains;
};

// One case, with the file's :defaults merged in.
struct Case {
  std::string file;  // path relative to the cases directory
  std::string name;
  uint32_t line = 0;  // where the case's map starts
  std::string fixture;
  std::optional<EdnValue> schema;  // tx-data
  std::vector<EdnValue> txs;       // tx-data of each transaction
  // tx-data applied speculatively (Db::With, chained) after `txs`, for the
  // query only; numbered after them.
  std::vector<EdnValue> with;
  std::optional<EdnValue> query;  // an EDN query form, or a string
  EdnValue inputs = EdnValue::Vector({});
  CaseBasis basis;
  std::optional<EdnValue> expect;
  std::optional<ExpectedError> expect_error;
  std::optional<ExpectedError> expect_tx_error;
  std::optional<EdnValue> expect_columns;
  double tolerance = 1e-9;
  std::string skip;  // non-empty: skipped, with this reason
};

// A named data set shared by several cases: cases/fixtures/<name>.edn
// holding one map {:schema tx-data :tx [tx-data ...]}.
struct Fixture {
  std::optional<EdnValue> schema;
  std::vector<EdnValue> txs;
};

[[nodiscard]] inline absl::StatusOr<std::string> ReadWholeFile(
    const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(StrCat("cannot open ", path));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

[[nodiscard]] inline absl::Status CaseError(const EdnValue& at,
                                            std::string_view what) {
  return absl::InvalidArgumentError(
      StrCat("line ", at.line(), ", column ", at.column(), ": ", what));
}

[[nodiscard]] inline absl::StatusOr<ExpectedError> ParseExpectedError(
    const EdnValue& v) {
  if (!v.is_map()) return CaseError(v, "an expected error must be a map");
  ExpectedError out;
  const auto& items = v.items();
  for (size_t i = 0; i + 1 < items.size(); i += 2) {
    const EdnValue& key = items[i];
    const EdnValue& value = items[i + 1];
    if (key.is_keyword("code") && value.is_keyword()) {
      out.code = value.text();
    } else if (key.is_keyword("contains") && value.is_string()) {
      out.contains.push_back(value.text());
    } else if (key.is_keyword("contains") && value.is_vector()) {
      for (const EdnValue& s : value.items()) {
        if (!s.is_string()) return CaseError(s, ":contains takes strings");
        out.contains.push_back(s.text());
      }
    } else {
      return CaseError(key,
                       StrCat("unexpected ", edn::PrintEdn(key), " ",
                              edn::PrintEdn(value), " in an expected error"));
    }
  }
  return out;
}

[[nodiscard]] inline absl::StatusOr<CaseBasis> ParseBasis(const EdnValue& v) {
  CaseBasis b;
  if (v.is_keyword("current") || v.is_keyword("latest")) return b;
  if (v.is_keyword("history")) {
    b.kind = CaseBasis::Kind::kHistory;
    return b;
  }
  if (v.is_map() && v.size() == 1 && v.items()[1].is_int()) {
    b.tx_number = v.items()[1].as_int();
    if (v.items()[0].is_keyword("as-of")) {
      b.kind = CaseBasis::Kind::kAsOf;
      return b;
    }
    if (v.items()[0].is_keyword("since")) {
      b.kind = CaseBasis::Kind::kSince;
      return b;
    }
  }
  return CaseError(v, ":basis is :current, :history, {:as-of N} or {:since N}");
}

// Applies one key of a case (or of :defaults) to `c`.
[[nodiscard]] inline absl::Status ApplyCaseKey(const EdnValue& key,
                                               const EdnValue& value, Case* c) {
  if (!key.is_keyword()) return CaseError(key, "case keys are keywords");
  const std::string& k = key.text();
  if (k == "name") {
    if (!value.is_string()) return CaseError(value, ":name takes a string");
    c->name = value.text();
  } else if (k == "doc") {
    // Free text for readers.
  } else if (k == "fixture") {
    if (!value.is_string()) return CaseError(value, ":fixture is a string");
    c->fixture = value.text();
  } else if (k == "schema") {
    if (!value.is_vector()) return CaseError(value, ":schema is tx-data");
    c->schema = value;
  } else if (k == "tx") {
    if (!value.is_vector()) {
      return CaseError(value, ":tx is a vector of tx-data vectors");
    }
    c->txs.clear();
    for (const EdnValue& tx : value.items()) {
      if (!tx.is_vector()) return CaseError(tx, "each :tx entry is tx-data");
      c->txs.push_back(tx);
    }
  } else if (k == "with") {
    if (!value.is_vector()) {
      return CaseError(value, ":with is a vector of tx-data vectors");
    }
    c->with.clear();
    for (const EdnValue& tx : value.items()) {
      if (!tx.is_vector()) return CaseError(tx, "each :with entry is tx-data");
      c->with.push_back(tx);
    }
  } else if (k == "query") {
    if (!value.is_vector() && !value.is_map() && !value.is_string()) {
      return CaseError(value, ":query is a vector, a map or a string");
    }
    c->query = value;
  } else if (k == "inputs") {
    if (!value.is_vector()) return CaseError(value, ":inputs is a vector");
    c->inputs = value;
  } else if (k == "basis") {
    absl::StatusOr<CaseBasis> b = ParseBasis(value);
    if (!b.ok()) return b.status();
    c->basis = *b;
  } else if (k == "expect") {
    c->expect = value;
  } else if (k == "expect-error" || k == "expect-tx-error") {
    absl::StatusOr<ExpectedError> e = ParseExpectedError(value);
    if (!e.ok()) return e.status();
    (k == "expect-error" ? c->expect_error : c->expect_tx_error) = *e;
  } else if (k == "expect-columns") {
    if (!value.is_vector()) {
      return CaseError(value, ":expect-columns is a vector of strings");
    }
    c->expect_columns = value;
  } else if (k == "tolerance") {
    if (value.is_float()) {
      c->tolerance = value.as_double();
    } else if (value.is_int()) {
      c->tolerance = static_cast<double>(value.as_int());
    } else {
      return CaseError(value, ":tolerance is a number");
    }
  } else if (k == "skip") {
    if (!value.is_string()) return CaseError(value, ":skip takes a reason");
    c->skip = value.text();
  } else {
    return CaseError(key, StrCat("unknown case key :", k));
  }
  return absl::OkStatus();
}

// Checks that a case asks for something coherent.
[[nodiscard]] inline absl::Status CheckCase(const Case& c, const EdnValue& at) {
  if (c.name.empty()) return CaseError(at, "a case needs a :name");
  int expectations = (c.expect ? 1 : 0) + (c.expect_error ? 1 : 0);
  if (expectations > 1) {
    return CaseError(at, StrCat("case \"", c.name,
                                "\": :expect and :expect-error exclude "
                                "each other"));
  }
  if (c.query && expectations == 0) {
    return CaseError(at, StrCat("case \"", c.name,
                                "\": a :query needs :expect or :expect-error"));
  }
  if (!c.query && expectations != 0) {
    return CaseError(at, StrCat("case \"", c.name, "\": no :query"));
  }
  if (!c.query && !c.expect_tx_error) {
    return CaseError(at, StrCat("case \"", c.name,
                                "\": needs a :query or an :expect-tx-error"));
  }
  if (!c.with.empty() && !c.query) {
    return CaseError(at, StrCat("case \"", c.name, "\": :with needs a :query"));
  }
  if (c.expect_tx_error && c.txs.empty()) {
    return CaseError(
        at, StrCat("case \"", c.name, "\": :expect-tx-error needs a :tx"));
  }
  return absl::OkStatus();
}

// Reads every case of one file. `relative` names it in messages.
[[nodiscard]] inline absl::StatusOr<std::vector<Case>> LoadCaseFile(
    const std::string& path, const std::string& relative) {
  absl::StatusOr<std::string> text = ReadWholeFile(path);
  if (!text.ok()) return text.status();
  absl::StatusOr<std::vector<EdnValue>> forms = edn::ParseEdnAll(*text);
  if (!forms.ok()) return forms.status();
  std::vector<Case> cases;
  Case defaults;
  for (const EdnValue& form : *forms) {
    if (!form.is_map()) return CaseError(form, "each form is a map");
    const EdnValue* d = form.Get("defaults");
    if (d != nullptr) {
      if (form.size() != 1 || !d->is_map()) {
        return CaseError(form, "{:defaults {...}} holds one map of case keys");
      }
      defaults = Case();
      for (size_t i = 0; i + 1 < d->items().size(); i += 2) {
        if (d->items()[i].is_keyword("name")) {
          return CaseError(d->items()[i], "no :name in :defaults");
        }
        absl::Status s =
            ApplyCaseKey(d->items()[i], d->items()[i + 1], &defaults);
        if (!s.ok()) return s;
      }
      continue;
    }
    Case c = defaults;
    c.file = relative;
    c.line = form.line();
    for (size_t i = 0; i + 1 < form.items().size(); i += 2) {
      absl::Status s = ApplyCaseKey(form.items()[i], form.items()[i + 1], &c);
      if (!s.ok()) return s;
    }
    absl::Status s = CheckCase(c, form);
    if (!s.ok()) return s;
    for (const Case& other : cases) {
      if (other.name == c.name) {
        return CaseError(form, StrCat("duplicate case name \"", c.name, "\""));
      }
    }
    cases.push_back(std::move(c));
  }
  return cases;
}

[[nodiscard]] inline absl::StatusOr<Fixture> LoadFixture(
    const std::string& path) {
  absl::StatusOr<std::string> text = ReadWholeFile(path);
  if (!text.ok()) return text.status();
  absl::StatusOr<EdnValue> form = edn::ParseEdn(*text);
  if (!form.ok()) return form.status();
  if (!form->is_map()) return CaseError(*form, "a fixture is one map");
  Fixture f;
  for (size_t i = 0; i + 1 < form->items().size(); i += 2) {
    const EdnValue& key = form->items()[i];
    const EdnValue& value = form->items()[i + 1];
    if (key.is_keyword("schema") && value.is_vector()) {
      f.schema = value;
    } else if (key.is_keyword("tx") && value.is_vector()) {
      for (const EdnValue& tx : value.items()) {
        if (!tx.is_vector()) return CaseError(tx, "each :tx entry is tx-data");
        f.txs.push_back(tx);
      }
    } else if (!key.is_keyword("doc")) {
      return CaseError(key, "a fixture has :doc, :schema and :tx");
    }
  }
  return f;
}

}  // namespace mentat::query::conformance

#endif  // MENTAT_QUERY_CONFORMANCE_CASE_FILE_H_
