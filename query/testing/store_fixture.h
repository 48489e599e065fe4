#ifndef MENTAT_QUERY_TESTING_STORE_FIXTURE_H_
#define MENTAT_QUERY_TESTING_STORE_FIXTURE_H_

// For query tests: a store in a temporary directory, the benchmark
// workload's schema (../shared/workload/schema.edn) as tx ops, and terse
// builders for tx ops. Header-only, so that it stays out of mentat_query.
//
//   StoreFixture f;
//   REQUIRE(f.InstallWorkloadSchema().ok());
//   auto r = f.Transact({Add("u", "user/name", Value::String("Ann"))});
//   DbView view = f.View();

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "mentat/storage/db.h"
#include "mentat/storage/store.h"
#include "mentat/storage/tx_op.h"
#include "mentat/storage/tx_report.h"
#include "mentat/storage/value.h"

namespace mentat::query::testing {

// A schema attribute for AttrOps.
struct AttrDef {
  const char* ident;  // "ns/name"
  const char* type;   // "db.type/string"
  bool many = false;
  const char* unique = nullptr;  // "db.unique/identity" or ".../value"
  bool component = false;
  bool index = false;
};

// An entity position: a tempid string, or an id.
inline storage::EntityRef Ent(const char* tempid) {
  return storage::EntityRef::TempId(tempid);
}
inline storage::EntityRef Ent(storage::EntityId id) {
  return storage::EntityRef::Id(id);
}

// [:db/add e attr v] with a scalar value.
inline storage::TxOp Add(storage::EntityRef e, const char* attr,
                         storage::Value v) {
  storage::TxOp op;
  op.kind = storage::TxOp::Kind::kAdd;
  op.e = std::move(e);
  op.a = storage::EntityRef::Ident(attr);
  op.v = storage::TxValue::Scalar(std::move(v));
  return op;
}
inline storage::TxOp Add(const char* tempid, const char* attr,
                         storage::Value v) {
  return Add(Ent(tempid), attr, std::move(v));
}

// [:db/add e attr target] for a ref attribute.
inline storage::TxOp AddRef(storage::EntityRef e, const char* attr,
                            storage::EntityRef target) {
  storage::TxOp op;
  op.kind = storage::TxOp::Kind::kAdd;
  op.e = std::move(e);
  op.a = storage::EntityRef::Ident(attr);
  op.v = storage::TxValue::Entity(std::move(target));
  return op;
}
inline storage::TxOp AddRef(const char* e, const char* attr,
                            const char* target) {
  return AddRef(Ent(e), attr, Ent(target));
}

// [:db/retract e attr v].
inline storage::TxOp Retract(storage::EntityRef e, const char* attr,
                             storage::Value v) {
  storage::TxOp op = Add(std::move(e), attr, std::move(v));
  op.kind = storage::TxOp::Kind::kRetract;
  return op;
}

// The ops that install one attribute.
inline std::vector<storage::TxOp> AttrOps(const AttrDef& def) {
  const std::string tempid = std::string("attr:") + def.ident;
  const storage::EntityRef e = storage::EntityRef::TempId(tempid);
  std::vector<storage::TxOp> ops;
  ops.push_back(Add(e, "db/ident", storage::Value::Keyword(def.ident)));
  ops.push_back(AddRef(e, "db/valueType", storage::EntityRef::Ident(def.type)));
  ops.push_back(
      AddRef(e, "db/cardinality",
             storage::EntityRef::Ident(def.many ? "db.cardinality/many"
                                                : "db.cardinality/one")));
  if (def.unique != nullptr) {
    ops.push_back(
        AddRef(e, "db/unique", storage::EntityRef::Ident(def.unique)));
  }
  if (def.component) {
    ops.push_back(Add(e, "db/isComponent", storage::Value::Boolean(true)));
  }
  if (def.index)
    ops.push_back(Add(e, "db/index", storage::Value::Boolean(true)));
  return ops;
}

// The attributes of ../shared/workload/schema.edn.
inline std::vector<AttrDef> WorkloadSchema() {
  return {
      {"user/email", "db.type/string", false, "db.unique/identity", false,
       true},
      {"user/name", "db.type/string"},
      {"issue/title", "db.type/string"},
      {"issue/state", "db.type/keyword", false, nullptr, false, true},
      {"issue/priority", "db.type/long", false, nullptr, false, true},
      {"issue/assignee", "db.type/ref", false, nullptr, false, true},
      {"issue/reporter", "db.type/ref", false, nullptr, false, true},
      {"issue/created-at", "db.type/instant", false, nullptr, false, true},
      {"issue/label", "db.type/ref", true, nullptr, false, true},
      {"label/name", "db.type/string", false, "db.unique/identity", false,
       true},
  };
}

// A store in a fresh temporary directory, removed with the fixture.
// Commits skip fsync: tests do not need durability.
class StoreFixture {
 public:
  // With `eager_columns`, an attribute gets a column as soon as a query
  // reads it (storage::StoreOptions::column_build_after_rows).
  explicit StoreFixture(bool eager_columns = false) {
    static std::atomic<int> counter{0};
    dir_ = (std::filesystem::temp_directory_path() /
            ("mentat-query-test-" + std::to_string(::getpid()) + "-" +
             std::to_string(counter++)))
               .string();
    std::filesystem::remove_all(dir_);
    storage::StoreOptions options;
    options.sync_commits = false;
    options.block_cache_bytes = size_t{8} << 20;
    if (eager_columns) {
      options.column_build_after_rows = 1;
    }
    auto store = storage::Store::Open(dir_, options);
    open_status_ = store.status();
    if (store.ok()) store_ = *std::move(store);
  }
  ~StoreFixture() {
    store_.reset();
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  StoreFixture(const StoreFixture&) = delete;
  StoreFixture& operator=(const StoreFixture&) = delete;

  // Why the store failed to open, if it did (then store() must not be
  // used).
  const absl::Status& open_status() const { return open_status_; }
  storage::Store& store() { return *store_; }

  // Commits `ops` as one transaction and waits for it.
  [[nodiscard]] absl::StatusOr<storage::TxReport> Transact(
      std::vector<storage::TxOp> ops) {
    if (store_ == nullptr) return open_status_;
    return store_->Transact(storage::TxRequest{std::move(ops)}).get();
  }

  // Installs `attrs` in one transaction.
  [[nodiscard]] absl::Status Install(const std::vector<AttrDef>& attrs) {
    std::vector<storage::TxOp> ops;
    for (const AttrDef& def : attrs) {
      std::vector<storage::TxOp> more = AttrOps(def);
      ops.insert(ops.end(), more.begin(), more.end());
    }
    return Transact(std::move(ops)).status();
  }
  [[nodiscard]] absl::Status InstallWorkloadSchema() {
    return Install(WorkloadSchema());
  }

  // The latest state at `basis`.
  storage::DbView View(storage::Basis basis = storage::Basis::Current()) {
    return store_->Latest()->View(basis);
  }

 private:
  std::string dir_;
  absl::Status open_status_;
  std::unique_ptr<storage::Store> store_;
};

}  // namespace mentat::query::testing

#endif  // MENTAT_QUERY_TESTING_STORE_FIXTURE_H_
