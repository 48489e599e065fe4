// The data-driven Datalog conformance suite: runs every case file under
// query/conformance/cases (format: query/conformance/README.md).
//
// Environment:
//   MENTAT_CONFORMANCE_FILTER=text  run only cases whose "file: name"
//                                   contains text
//   MENTAT_CONFORMANCE_EXCLUDE=a|b  skip cases whose "file: name"
//                                   contains one of the texts
//   MENTAT_CONFORMANCE_VERBOSE=1    print every case's outcome

#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "conformance/case_file.h"
#include "conformance/case_store.h"
#include "conformance/result_match.h"
#include "mentat/base/str_cat.h"
#include "mentat/edn/edn_printer.h"
#include "mentat/query/query_engine.h"
#include "mentat/storage/db.h"

#ifndef MENTAT_CONFORMANCE_DIR
#error "query_test defines MENTAT_CONFORMANCE_DIR (see query/CMakeLists.txt)"
#endif

namespace mentat::query::conformance {
namespace {

std::string Msg(const absl::Status& s) {
  return std::string(s.message().data(), s.message().size());
}

// absl::StatusCode::kInvalidArgument -> "invalid-argument".
std::string CodeKeyword(absl::StatusCode code) {
  std::string out = absl::StatusCodeToString(code);
  for (char& ch : out) {
    ch = ch == '_' ? '-' : static_cast<char>(std::tolower(ch));
  }
  return out;
}

std::string StatusText(const absl::Status& s) {
  return StrCat(":", CodeKeyword(s.code()), " \"", Msg(s), "\"");
}

// Empty if `s` is the error `want` describes, else what differs.
std::string CheckError(const absl::Status& s, const ExpectedError& want) {
  if (s.ok()) return "it succeeded";
  std::string problems;
  if (!want.code.empty() && CodeKeyword(s.code()) != want.code) {
    StrAppend(&problems, "code :", CodeKeyword(s.code()),
              " is not :", want.code, "; ");
  }
  for (const std::string& fragment : want.contains) {
    if (Msg(s).find(fragment) == std::string::npos) {
      StrAppend(&problems, "message lacks \"", fragment, "\"; ");
    }
  }
  if (problems.empty()) return "";
  return StrCat(problems, "got ", StatusText(s));
}

std::string ExpectedErrorText(const ExpectedError& e) {
  std::string out = StrCat("{:code :", e.code.empty() ? "any" : e.code);
  for (const std::string& f : e.contains)
    StrAppend(&out, " :contains \"", f, "\"");
  return out + "}";
}

std::string BasisText(const CaseBasis& b) {
  switch (b.kind) {
    case CaseBasis::Kind::kCurrent:
      return ":current";
    case CaseBasis::Kind::kHistory:
      return ":history";
    case CaseBasis::Kind::kAsOf:
      return StrCat("{:as-of ", b.tx_number, "}");
    case CaseBasis::Kind::kSince:
      return StrCat("{:since ", b.tx_number, "}");
  }
  return "?";
}

// The query as text: a string as written; an EDN form printed after its
// #ref / #tx tags are replaced.
[[nodiscard]] absl::StatusOr<std::string> QueryText(const Case& c,
                                                    const CaseStore& cs) {
  if (c.query->is_string()) return c.query->text();
  absl::StatusOr<EdnValue> q = cs.Resolve(*c.query);
  if (!q.ok()) return q.status();
  return edn::PrintEdn(*q);
}

[[nodiscard]] absl::StatusOr<storage::DbView> ViewFor(
    const Case& c, const CaseStore& cs, std::shared_ptr<const storage::Db> db) {
  storage::Basis basis;
  switch (c.basis.kind) {
    case CaseBasis::Kind::kCurrent:
      break;
    case CaseBasis::Kind::kHistory:
      basis = storage::Basis::History();
      break;
    case CaseBasis::Kind::kAsOf:
    case CaseBasis::Kind::kSince: {
      int64_t n = c.basis.tx_number;
      if (n < 1 || n > static_cast<int64_t>(cs.tx_ids.size())) {
        return absl::InvalidArgumentError(
            StrCat(":basis names tx ", n, " but the case has ",
                   cs.tx_ids.size(), " transactions"));
      }
      storage::EntityId t = cs.tx_ids[n - 1];
      basis = c.basis.kind == CaseBasis::Kind::kAsOf ? storage::Basis::AsOf(t)
                                                     : storage::Basis::Since(t);
      break;
    }
  }
  return db->View(basis);
}

// Runs the query of `c` on `cs` and checks it. Empty on success, else the
// failure report (without the case header).
std::string RunQuery(const Case& c, CaseStore& cs) {
  // The :with transactions' tempids and tx numbers hold for this case only
  // (the store is shared by the file's cases with the same data).
  struct Restore {
    CaseStore& cs;
    std::map<std::string, storage::EntityId> tempids = cs.tempids;
    std::vector<storage::EntityId> tx_ids = cs.tx_ids;
    ~Restore() {
      cs.tempids = std::move(tempids);
      cs.tx_ids = std::move(tx_ids);
    }
  } restore{cs};
  std::shared_ptr<const storage::Db> db = cs.store->Latest();
  absl::Status with_status;
  for (size_t i = 0; i < c.with.size() && with_status.ok(); ++i) {
    absl::StatusOr<EdnValue> resolved = cs.Resolve(c.with[i]);
    if (!resolved.ok()) return StrCat("  case error: ", Msg(resolved.status()));
    absl::StatusOr<storage::TxRequest> request = ParseTxData(*resolved);
    if (!request.ok()) {
      with_status = request.status();
      break;
    }
    absl::StatusOr<storage::SpeculativeTx> with = db->With(*request);
    if (!with.ok()) {
      with_status = with.status();
      break;
    }
    absl::Status recorded = cs.Record(with->report, true);
    if (!recorded.ok()) return StrCat("  case error: ", Msg(recorded));
    db = std::move(with->db_after);
  }
  absl::StatusOr<std::string> text = QueryText(c, cs);
  if (!text.ok()) return StrCat("  case error: ", Msg(text.status()));
  std::string context = StrCat("  query:    ", *text, "\n");
  absl::StatusOr<EdnValue> inputs = cs.Resolve(c.inputs);
  if (!inputs.ok())
    return StrCat(context, "  case error: ", Msg(inputs.status()));
  if (!inputs->items().empty()) {
    StrAppend(&context, "  inputs:   ", edn::PrintEdn(*inputs), "\n");
  }
  if (c.basis.kind != CaseBasis::Kind::kCurrent) {
    StrAppend(&context, "  basis:    ", BasisText(c.basis), "\n");
  }
  if (!c.with.empty()) {
    StrAppend(&context, "  with:     ",
              edn::PrintEdnAbbreviated(EdnValue::Vector(c.with), 300), "\n");
  }
  StrAppend(&context, "  tempids:  ", cs.TempidText(), "\n");
  absl::StatusOr<storage::DbView> view = ViewFor(c, cs, db);
  if (!view.ok()) return StrCat(context, "  case error: ", Msg(view.status()));

  // Twice: the second run comes from the plan cache and must match too.
  // Between the two, the columns the first run's reads queued are built
  // (with eager columns), so that the second reads through them. A failed
  // :with transaction is the outcome of both.
  absl::StatusOr<QueryResult> first = QueryResult();
  absl::StatusOr<QueryResult> second = QueryResult();
  if (with_status.ok()) {
    first = cs.engine.Query(*text, *view, inputs->items());
    cs.store->WaitForColumns();
    second = cs.engine.Query(*text, *view, inputs->items());
  } else {
    first = with_status;
    second = with_status;
  }

  if (c.expect_error) {
    StrAppend(&context, "  expected: error ",
              ExpectedErrorText(*c.expect_error), "\n");
    if (first.ok()) {
      return StrCat(context,
                    "  actual:   ", edn::PrintEdn(ShapeResult(*first)));
    }
    std::string problem = CheckError(first.status(), *c.expect_error);
    if (!problem.empty()) return StrCat(context, "  actual:   ", problem);
    if (second.ok() || second.status() != first.status()) {
      return StrCat(context, "  second run (plan cache) differs: ",
                    second.ok() ? "succeeded" : StatusText(second.status()));
    }
    return "";
  }

  absl::StatusOr<EdnValue> expect = cs.Resolve(*c.expect);
  if (!expect.ok())
    return StrCat(context, "  case error: ", Msg(expect.status()));
  StrAppend(&context, "  expected: ", edn::PrintEdn(*expect), "\n");
  if (!first.ok()) {
    return StrCat(context, "  actual:   error ", StatusText(first.status()));
  }
  EdnValue actual = ShapeResult(*first);
  if (!Matches(*expect, actual, c.tolerance)) {
    return StrCat(context,
                  "  actual:   ", edn::PrintEdn(ForDisplay(*expect, actual)));
  }
  if (c.expect_columns) {
    std::vector<EdnValue> names;
    for (const std::string& n : first->columns) {
      names.push_back(EdnValue::String(n));
    }
    EdnValue got = EdnValue::Vector(std::move(names));
    if (!Matches(*c.expect_columns, got, 0)) {
      return StrCat(context,
                    "  expected columns: ", edn::PrintEdn(*c.expect_columns),
                    "\n  actual columns:   ", edn::PrintEdn(got));
    }
  }
  // Matched against the expectation, not the first run: sample and rand
  // may differ between runs.
  if (!second.ok() || !Matches(*expect, ShapeResult(*second), c.tolerance)) {
    return StrCat(context, "  second run (plan cache) differs: ",
                  second.ok() ? edn::PrintEdn(ShapeResult(*second))
                              : StatusText(second.status()));
  }
  return "";
}

class SuiteRunner {
 public:
  SuiteRunner(std::string root, bool eager_columns, bool entity_order)
      : root_(std::move(root)),
        eager_columns_(eager_columns),
        entity_order_(entity_order) {}

  // Empty on success, else the failure report.
  std::string RunCase(const Case& c) {
    const Fixture* fixture = nullptr;
    if (!c.fixture.empty()) {
      absl::StatusOr<const Fixture*> f = GetFixture(c.fixture);
      if (!f.ok()) return StrCat("  case error: ", Msg(f.status()));
      fixture = *f;
    }
    if (c.expect_tx_error) return RunTxErrorCase(c, fixture);
    std::string key = edn::PrintEdn(EdnValue::Vector(
        {EdnValue::String(c.fixture), c.schema.value_or(EdnValue::Nil()),
         EdnValue::Vector(c.txs)}));
    auto it = stores_.find(key);
    if (it == stores_.end()) {
      absl::StatusOr<std::unique_ptr<CaseStore>> cs =
          BuildCaseStore(c, fixture, 0, eager_columns_, entity_order_);
      if (!cs.ok()) return StrCat("  case error: ", Msg(cs.status()));
      it = stores_.emplace(key, *std::move(cs)).first;
    }
    return RunQuery(c, *it->second);
  }

  // Stores are shared by the cases of one file with the same data only.
  void EndFile() { stores_.clear(); }

 private:
  std::string RunTxErrorCase(const Case& c, const Fixture* fixture) {
    absl::StatusOr<std::unique_ptr<CaseStore>> cs =
        BuildCaseStore(c, fixture, 1, eager_columns_, entity_order_);
    if (!cs.ok()) return StrCat("  case error: ", Msg(cs.status()));
    const EdnValue& last = c.txs.back();
    absl::Status s = (*cs)->Transact(last, true);
    std::string problem = CheckError(s, *c.expect_tx_error);
    if (!problem.empty()) {
      return StrCat(
          "  tx:       ", edn::PrintEdn(last), "\n  expected: tx error ",
          ExpectedErrorText(*c.expect_tx_error), "\n  actual:   ", problem);
    }
    if (!c.query) return "";
    return RunQuery(c, **cs);
  }

  [[nodiscard]] absl::StatusOr<const Fixture*> GetFixture(
      const std::string& name) {
    auto it = fixtures_.find(name);
    if (it != fixtures_.end()) return it->second.get();
    std::string path = StrCat(root_, "/fixtures/", name, ".edn");
    absl::StatusOr<Fixture> f = LoadFixture(path);
    if (!f.ok()) {
      return absl::Status(f.status().code(),
                          StrCat("fixture ", path, ": ", Msg(f.status())));
    }
    auto owned = std::make_unique<Fixture>(*std::move(f));
    const Fixture* out = owned.get();
    fixtures_.emplace(name, std::move(owned));
    return out;
  }

  std::string root_;
  bool eager_columns_;
  bool entity_order_;
  std::map<std::string, std::unique_ptr<Fixture>> fixtures_;
  std::map<std::string, std::unique_ptr<CaseStore>> stores_;
};

// Case files under `root`, sorted, relative to it; fixtures excluded.
std::vector<std::string> FindCaseFiles(const std::string& root) {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(root, ec);
       !ec && it != std::filesystem::recursive_directory_iterator();
       it.increment(ec)) {
    if (!it->is_regular_file() || it->path().extension() != ".edn") continue;
    std::string rel = std::filesystem::relative(it->path(), root).string();
    if (rel.rfind("fixtures/", 0) == 0) continue;
    out.push_back(rel);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

TEST_CASE("conformance: every case under query/conformance/cases") {
  const std::string root = MENTAT_CONFORMANCE_DIR;
  const std::string filter = Env("MENTAT_CONFORMANCE_FILTER");
  const bool verbose = !Env("MENTAT_CONFORMANCE_VERBOSE").empty();
  std::vector<std::string> excludes;
  {
    std::string all = Env("MENTAT_CONFORMANCE_EXCLUDE");
    size_t start = 0;
    while (start <= all.size() && !all.empty()) {
      size_t bar = all.find('|', start);
      if (bar == std::string::npos) bar = all.size();
      if (bar > start) excludes.push_back(all.substr(start, bar - start));
      start = bar + 1;
    }
  }
  std::vector<std::string> files = FindCaseFiles(root);
  REQUIRE_MESSAGE(!files.empty(), "no case files under " << root);

  // Every case runs three times: reading RocksDB (and the record caches);
  // with a column built for every attribute a query reads, which turns
  // entity probes and hash joins into AEVT column probes; and with the
  // planner walking attributes in entity order wherever the rows' order
  // allows (merge joins the tiny data would never choose).
  bool eager_columns = false;
  bool entity_order = false;
  SUBCASE("reads through RocksDB") {}
  SUBCASE("reads through columns") { eager_columns = true; }
  SUBCASE("walks in entity order") { entity_order = true; }
  SuiteRunner runner(root, eager_columns, entity_order);
  int ran = 0, failed = 0, skipped = 0;
  std::vector<std::string> failing, skips;
  for (const std::string& file : files) {
    absl::StatusOr<std::vector<Case>> cases =
        LoadCaseFile(StrCat(root, "/", file), file);
    if (!cases.ok()) {
      FAIL_CHECK("conformance: cannot read " << file << ": "
                                             << Msg(cases.status()));
      ++failed;
      failing.push_back(StrCat(file, " (unreadable)"));
      continue;
    }
    for (const Case& c : *cases) {
      std::string id = StrCat(c.file, ": ", c.name);
      if (!filter.empty() && id.find(filter) == std::string::npos) continue;
      bool excluded = false;
      for (const std::string& x : excludes) {
        excluded = excluded || id.find(x) != std::string::npos;
      }
      if (excluded) {
        ++skipped;
        if (verbose) std::cout << "SKIP " << id << " (excluded)\n";
        continue;
      }
      if (!c.skip.empty()) {
        ++skipped;
        skips.push_back(StrCat(id, " (", c.skip, ")"));
        if (verbose) std::cout << "SKIP " << id << " (" << c.skip << ")\n";
        continue;
      }
      ++ran;
      // Named in doctest's report if the engine crashes on this case.
      INFO("running conformance case " << id);
      if (verbose) std::cout << "run  " << id << std::endl;
      auto start = std::chrono::steady_clock::now();
      std::string failure = runner.RunCase(c);
      auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::steady_clock::now() - start)
                    .count();
      if (verbose) {
        std::cout << (failure.empty() ? "ok   " : "FAIL ") << ms << "ms " << id
                  << std::endl;
      }
      if (failure.empty()) continue;
      ++failed;
      failing.push_back(id);
      FAIL_CHECK("conformance case failed: " << c.file << ":" << c.line << " \""
                                             << c.name << "\"\n"
                                             << failure);
    }
    runner.EndFile();
  }
  std::string summary =
      StrCat("conformance: ", ran, " cases run, ", ran - failed, " ok, ",
             failed, " failing, ", skipped, " skipped");
  for (const std::string& f : failing) StrAppend(&summary, "\n  failing: ", f);
  for (const std::string& s : skips) StrAppend(&summary, "\n  skipped: ", s);
  MESSAGE(summary);
  CHECK_MESSAGE(ran > 0, "no case ran (filter \"" << filter << "\")");
}

}  // namespace
}  // namespace mentat::query::conformance
