#ifndef MENTAT_QUERY_EXECUTION_ENGINE_TEST_SUPPORT_H_
#define MENTAT_QUERY_EXECUTION_ENGINE_TEST_SUPPORT_H_

// For the engine's tests: a store with the workload schema plus a few
// attributes of our own, data written as EDN tx-data, and terse query
// helpers. Test-only, header-only.

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "mentat/base/str_cat.h"
#include "mentat/edn/edn_printer.h"
#include "mentat/edn/edn_reader.h"
#include "mentat/query/query_engine.h"
#include "mentat/query/tx_data_parser.h"
#include "testing/store_fixture.h"

namespace mentat::query::engine_testing {

using edn::EdnValue;
using storage::Basis;
using storage::DbView;
using storage::EntityId;

inline EdnValue Edn(std::string_view text) {
  absl::StatusOr<EdnValue> v = edn::ParseEdn(text);
  REQUIRE_MESSAGE(v.ok(), v.status().ToString(), " in ", text);
  return *std::move(v);
}

// Inputs written as one EDN vector: "[\"a@x\" [1 2]]".
inline std::vector<EdnValue> Inputs(std::string_view text) {
  if (text.empty()) return {};
  return Edn(text).items();
}

// The rows of a result, each printed, sorted: order-free comparison.
inline std::vector<std::string> Printed(const QueryResult& r) {
  std::vector<std::string> out;
  for (const Row& row : r.rows) {
    out.push_back(edn::PrintEdn(EdnValue::Vector(row)));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// "#{[1 2] [3 4]}" -> its elements printed, sorted.
inline std::vector<std::string> Expected(std::string_view text) {
  std::vector<std::string> out;
  const EdnValue set = Edn(text);
  for (const EdnValue& v : set.items()) out.push_back(edn::PrintEdn(v));
  std::sort(out.begin(), out.end());
  return out;
}

inline std::string Join(const std::vector<std::string>& xs) {
  std::string out;
  for (const std::string& x : xs) StrAppend(&out, x, "\n");
  return out;
}

class EngineFixture {
 public:
  explicit EngineFixture(bool eager_columns = false) : store_(eager_columns) {
    REQUIRE_MESSAGE(store_.open_status().ok(), store_.open_status().ToString());
    std::vector<testing::AttrDef> attrs = testing::WorkloadSchema();
    attrs.push_back(
        {"node/name", "db.type/string", false, "db.unique/identity"});
    attrs.push_back({"node/edge", "db.type/ref", true});
    attrs.push_back({"node/weight", "db.type/long"});
    attrs.push_back({"user/score", "db.type/double"});
    attrs.push_back({"user/tags", "db.type/string", true});
    REQUIRE(store_.Install(attrs).ok());
  }

  // Transacts EDN tx-data; returns the report.
  storage::TxReport Tx(std::string_view edn_text) {
    absl::StatusOr<storage::TxRequest> req = ParseTxData(edn_text);
    REQUIRE_MESSAGE(req.ok(), req.status().ToString());
    absl::StatusOr<storage::TxReport> r = store_.Transact(req->ops);
    REQUIRE_MESSAGE(r.ok(), r.status().ToString());
    for (const auto& [k, v] : r->tempids) ids_[k] = v;
    return *std::move(r);
  }

  // The id a tempid got.
  EntityId Id(const std::string& tempid) {
    auto it = ids_.find(tempid);
    REQUIRE_MESSAGE(it != ids_.end(), "no tempid ", tempid);
    return it->second;
  }

  DbView View(Basis basis = Basis::Current()) { return store_.View(basis); }

  [[nodiscard]] absl::StatusOr<QueryResult> Run(
      std::string_view query, std::string_view inputs = "",
      Basis basis = Basis::Current(), const QueryOptions& options = {}) {
    return engine_.Query(query, View(basis), Inputs(inputs), options);
  }

  QueryResult Q(std::string_view query, std::string_view inputs = "",
                Basis basis = Basis::Current()) {
    absl::StatusOr<QueryResult> r = Run(query, inputs, basis);
    REQUIRE_MESSAGE(r.ok(), r.status().ToString(), "\n  query: ", query);
    return *std::move(r);
  }

  // The rows printed and sorted, one per line.
  std::string Rows(std::string_view query, std::string_view inputs = "",
                   Basis basis = Basis::Current()) {
    return Join(Printed(Q(query, inputs, basis)));
  }

  [[nodiscard]] absl::Status Error(std::string_view query,
                                   std::string_view inputs = "",
                                   Basis basis = Basis::Current(),
                                   const QueryOptions& options = {}) {
    absl::StatusOr<QueryResult> r = Run(query, inputs, basis, options);
    REQUIRE_MESSAGE(!r.ok(), "expected an error from ", query);
    return r.status();
  }

  std::string Explain(std::string_view query, std::string_view inputs = "",
                      bool profile = false) {
    absl::StatusOr<std::string> r =
        engine_.Explain(query, View(), Inputs(inputs), profile);
    REQUIRE_MESSAGE(r.ok(), r.status().ToString());
    return *std::move(r);
  }

  QueryEngine& engine() { return engine_; }
  testing::StoreFixture& store() { return store_; }

 private:
  testing::StoreFixture store_;
  QueryEngine engine_;
  std::map<std::string, EntityId> ids_;
};

// The issue tracker in small: three users, five issues, three labels.
inline void LoadIssues(EngineFixture& f) {
  f.Tx(R"([
    {:db/id "alice" :user/email "alice@x.org" :user/name "Alice" :user/score 9.5
     :user/tags ["admin" "dev"]}
    {:db/id "bob" :user/email "bob@x.org" :user/name "Bob" :user/score 7.0}
    {:db/id "carol" :user/email "carol@x.org" :user/name "Carol"}
    {:db/id "l1" :label/name "bug"}
    {:db/id "l2" :label/name "ui"}
    {:db/id "l3" :label/name "perf"}
  ])");
  f.Tx(R"([
    {:db/id "i1" :issue/title "Crash on start" :issue/state :state/open
     :issue/priority 5 :issue/assignee [:user/email "alice@x.org"]
     :issue/reporter [:user/email "bob@x.org"] :issue/label [[:label/name "bug"]]}
    {:db/id "i2" :issue/title "Slow search" :issue/state :state/open
     :issue/priority 3 :issue/assignee [:user/email "alice@x.org"]
     :issue/reporter [:user/email "carol@x.org"]
     :issue/label [[:label/name "perf"] [:label/name "bug"]]}
    {:db/id "i3" :issue/title "Typo" :issue/state :state/closed
     :issue/priority 1 :issue/assignee [:user/email "bob@x.org"]
     :issue/reporter [:user/email "alice@x.org"]}
    {:db/id "i4" :issue/title "Button misplaced" :issue/state :state/open
     :issue/priority 4 :issue/assignee [:user/email "bob@x.org"]
     :issue/reporter [:user/email "bob@x.org"] :issue/label [[:label/name "ui"]]}
    {:db/id "i5" :issue/title "Memory leak" :issue/state :state/in-progress
     :issue/priority 4 :issue/assignee [:user/email "carol@x.org"]
     :issue/reporter [:user/email "alice@x.org"]}
  ])");
}

}  // namespace mentat::query::engine_testing

#endif  // MENTAT_QUERY_EXECUTION_ENGINE_TEST_SUPPORT_H_
