#ifndef MENTAT_QUERY_CONFORMANCE_CASE_STORE_H_
#define MENTAT_QUERY_CONFORMANCE_CASE_STORE_H_

// The database of a conformance case: a temporary store with the case's
// schema and transactions applied, the tempids and tx ids they produced,
// and the resolution of #ref / #tx tags against them. Test-only,
// header-only.

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "conformance/case_file.h"
#include "mentat/base/str_cat.h"
#include "mentat/edn/edn_printer.h"
#include "mentat/query/query_engine.h"
#include "mentat/query/tx_data_parser.h"
#include "mentat/storage/store.h"

namespace mentat::query::conformance {

// Where scratch stores go: /dev/shm when it is a roomy tmpfs (RocksDB
// fsyncs dozens of times while creating a store, which costs most of the
// suite's time on a real disk), else the system temp dir.
inline const std::filesystem::path& ScratchRoot() {
  static const std::filesystem::path root = [] {
    std::error_code ec;
    std::filesystem::path shm("/dev/shm");
    if (std::filesystem::is_directory(shm, ec)) {
      std::filesystem::space_info space = std::filesystem::space(shm, ec);
      if (!ec && space.available >= (uintmax_t{1} << 30)) return shm;
    }
    return std::filesystem::temp_directory_path();
  }();
  return root;
}

// A fresh directory under ScratchRoot(), removed on destruction.
class ScratchDir {
 public:
  ScratchDir() {
    static std::atomic<int> counter{0};
    path_ = (ScratchRoot() /
             StrCat("mentat-conformance-", ::getpid(), "-", counter++))
                .string();
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A store with a case's data. The dir outlives the store (members are
// destroyed in reverse order).
struct CaseStore {
  explicit CaseStore(const EngineOptions& engine_options = {})
      : engine(engine_options) {}

  ScratchDir dir;
  std::unique_ptr<storage::Store> store;
  // One engine per store: plan caches must never see two stores' schemas.
  QueryEngine engine;
  std::map<std::string, storage::EntityId> tempids;
  std::vector<storage::EntityId> tx_ids;  // of :tx, in order (1-based in
                                          // cases)

  // Parses and commits one transaction; records its tempids. `counted`
  // transactions get a #tx number.
  [[nodiscard]] absl::Status Transact(const EdnValue& tx_data, bool counted) {
    // Later transactions name earlier entities with #ref tags.
    absl::StatusOr<EdnValue> resolved = Resolve(tx_data);
    if (!resolved.ok()) return resolved.status();
    absl::StatusOr<storage::TxRequest> request = ParseTxData(*resolved);
    if (!request.ok()) return request.status();
    absl::StatusOr<storage::TxReport> report =
        store->Transact(*std::move(request)).get();
    if (!report.ok()) return report.status();
    return Record(*report, counted);
  }

  // Notes a transaction's tempids and, if `counted`, its #tx number.
  [[nodiscard]] absl::Status Record(const storage::TxReport& report,
                                    bool counted) {
    for (const auto& [name, id] : report.tempids) {
      if (IsGeneratedTempId(name) || name == "datomic.tx") continue;
      auto [it, inserted] = tempids.emplace(name, id);
      if (!inserted && it->second != id) {
        return absl::FailedPreconditionError(
            StrCat("case setup: tempid \"", name, "\" names entity ",
                   it->second, " in one transaction and ", id,
                   " in another; #ref needs one entity per tempid"));
      }
    }
    if (counted) tx_ids.push_back(report.tx);
    return absl::OkStatus();
  }

  // Replaces #ref "tempid", #ref :ident and #tx N inside `v`.
  [[nodiscard]] absl::StatusOr<EdnValue> Resolve(const EdnValue& v) const {
    if (v.is_tagged()) {
      const EdnValue& arg = v.tagged_value();
      if (v.text() == "ref" && arg.is_string()) {
        auto it = tempids.find(arg.text());
        if (it == tempids.end()) {
          return CaseError(v, StrCat("#ref \"", arg.text(),
                                     "\": no transaction of the case "
                                     "used this tempid"));
        }
        return EdnValue::Int(it->second);
      }
      if (v.text() == "ref" && arg.is_keyword()) {
        std::optional<storage::EntityId> id =
            store->Latest()->schema().EntityForIdent(arg.text());
        if (!id) {
          return CaseError(v, StrCat("#ref :", arg.text(), ": unknown ident"));
        }
        return EdnValue::Int(*id);
      }
      if (v.text() == "tx" && arg.is_int()) {
        if (arg.as_int() < 1 ||
            arg.as_int() > static_cast<int64_t>(tx_ids.size())) {
          return CaseError(v, StrCat("#tx ", arg.as_int(), ": the case has ",
                                     tx_ids.size(), " transactions"));
        }
        return EdnValue::Int(tx_ids[arg.as_int() - 1]);
      }
      if (v.text() == "ref" || v.text() == "tx") {
        return CaseError(v, StrCat("bad tag ", edn::PrintEdn(v)));
      }
      return v;
    }
    if (!v.is_collection()) return v;
    std::vector<EdnValue> items;
    items.reserve(v.items().size());
    for (const EdnValue& item : v.items()) {
      absl::StatusOr<EdnValue> r = Resolve(item);
      if (!r.ok()) return r.status();
      items.push_back(*std::move(r));
    }
    EdnValue out;
    switch (v.kind()) {
      case edn::EdnKind::kList:
        out = EdnValue::List(std::move(items));
        break;
      case edn::EdnKind::kVector:
        out = EdnValue::Vector(std::move(items));
        break;
      case edn::EdnKind::kMap:
        out = EdnValue::Map(std::move(items));
        break;
      default:
        out = EdnValue::Set(std::move(items));
        break;
    }
    out.set_position(v.line(), v.column());
    return out;
  }

  // The tempids, for failure messages: {"alice" 17592186045418, ...}.
  std::string TempidText() const {
    std::string out = "{";
    for (const auto& [name, id] : tempids) {
      if (out.size() > 1) out += ", ";
      StrAppend(&out, "\"", name, "\" ", id);
    }
    StrAppend(&out, "} tx ids [");
    for (size_t i = 0; i < tx_ids.size(); ++i) {
      StrAppend(&out, i == 0 ? "" : " ", tx_ids[i]);
    }
    return out + "]";
  }
};

// Opens a fresh store and applies the fixture's and the case's schema and
// transactions, except the last `hold_back` transactions (an
// :expect-tx-error case commits its last one itself). With
// `eager_columns`, an attribute gets a column as soon as a query reads it
// (storage::StoreOptions::column_build_after_rows), so that the cases run
// the executor's column paths too, not only the big benchmark data. With
// `entity_order`, the planner walks attributes in entity order wherever
// the rows' order allows (EngineOptions::always_entity_order).
[[nodiscard]] inline absl::StatusOr<std::unique_ptr<CaseStore>> BuildCaseStore(
    const Case& c, const Fixture* fixture, size_t hold_back, bool eager_columns,
    bool entity_order = false) {
  EngineOptions engine_options;
  engine_options.always_entity_order = entity_order;
  auto cs = std::make_unique<CaseStore>(engine_options);
  storage::StoreOptions options;
  if (eager_columns) {
    options.column_build_after_rows = 1;
  }
  options.sync_commits = false;
  options.block_cache_bytes = size_t{4} << 20;
  options.rocksdb_statistics = false;
  absl::StatusOr<std::unique_ptr<storage::Store>> store =
      storage::Store::Open(cs->dir.path(), options);
  if (!store.ok()) return store.status();
  cs->store = *std::move(store);
  auto step = [&](std::string_view what, const EdnValue& tx,
                  bool counted) -> absl::Status {
    absl::Status s = cs->Transact(tx, counted);
    if (s.ok()) return s;
    return absl::Status(s.code(), StrCat("case setup, ", what, " (",
                                         edn::PrintEdnAbbreviated(tx, 120),
                                         "): ", s.message()));
  };
  if (fixture != nullptr && fixture->schema) {
    absl::Status s = step("fixture schema", *fixture->schema, false);
    if (!s.ok()) return s;
  }
  if (c.schema) {
    absl::Status s = step(":schema", *c.schema, false);
    if (!s.ok()) return s;
  }
  std::vector<const EdnValue*> txs;
  if (fixture != nullptr) {
    for (const EdnValue& tx : fixture->txs) txs.push_back(&tx);
  }
  for (const EdnValue& tx : c.txs) txs.push_back(&tx);
  for (size_t i = 0; i + hold_back < txs.size(); ++i) {
    absl::Status s = step(StrCat("tx ", i + 1), *txs[i], true);
    if (!s.ok()) return s;
  }
  return cs;
}

}  // namespace mentat::query::conformance

#endif  // MENTAT_QUERY_CONFORMANCE_CASE_STORE_H_
