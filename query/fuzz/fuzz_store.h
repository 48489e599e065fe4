#ifndef MENTAT_QUERY_FUZZ_FUZZ_STORE_H_
#define MENTAT_QUERY_FUZZ_FUZZ_STORE_H_

// The small store the fuzz targets that need a schema or data share: one
// per process, in a temporary directory (under /dev/shm when it exists),
// with a schema covering every value type and a handful of entities. Fuzz
// entry points call FuzzStore::Get() (created on first use, removed at exit)
// and Reset() it now and then so that what earlier inputs transacted does
// not pile up.

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "mentat/base/str_cat.h"
#include "mentat/query/query_engine.h"
#include "mentat/query/tx_data_parser.h"
#include "mentat/storage/store.h"

namespace mentat::fuzz {

// Every value type, uniqueness and cardinality, a component ref.
inline constexpr std::string_view kFuzzSchema = R"edn([
 {:db/ident :user/email :db/valueType :db.type/string :db/cardinality :db.cardinality/one :db/unique :db.unique/identity :db/index true}
 {:db/ident :user/name :db/valueType :db.type/string :db/cardinality :db.cardinality/one}
 {:db/ident :user/nick :db/valueType :db.type/string :db/cardinality :db.cardinality/one :db/unique :db.unique/value}
 {:db/ident :issue/title :db/valueType :db.type/string :db/cardinality :db.cardinality/one}
 {:db/ident :issue/state :db/valueType :db.type/keyword :db/cardinality :db.cardinality/one :db/index true}
 {:db/ident :issue/priority :db/valueType :db.type/long :db/cardinality :db.cardinality/one :db/index true}
 {:db/ident :issue/assignee :db/valueType :db.type/ref :db/cardinality :db.cardinality/one :db/index true}
 {:db/ident :issue/reporter :db/valueType :db.type/ref :db/cardinality :db.cardinality/one :db/index true}
 {:db/ident :issue/created-at :db/valueType :db.type/instant :db/cardinality :db.cardinality/one :db/index true}
 {:db/ident :issue/label :db/valueType :db.type/ref :db/cardinality :db.cardinality/many :db/index true}
 {:db/ident :issue/tags :db/valueType :db.type/string :db/cardinality :db.cardinality/many}
 {:db/ident :issue/comment :db/valueType :db.type/ref :db/cardinality :db.cardinality/many :db/isComponent true}
 {:db/ident :comment/text :db/valueType :db.type/string :db/cardinality :db.cardinality/one}
 {:db/ident :issue/score :db/valueType :db.type/double :db/cardinality :db.cardinality/one}
 {:db/ident :issue/open :db/valueType :db.type/boolean :db/cardinality :db.cardinality/one}
 {:db/ident :issue/uuid :db/valueType :db.type/uuid :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
 {:db/ident :issue/big :db/valueType :db.type/bigint :db/cardinality :db.cardinality/one}
 {:db/ident :issue/cost :db/valueType :db.type/bigdec :db/cardinality :db.cardinality/one}
 {:db/ident :issue/blob :db/valueType :db.type/bytes :db/cardinality :db.cardinality/one}
 {:db/ident :label/name :db/valueType :db.type/string :db/cardinality :db.cardinality/one :db/unique :db.unique/identity :db/index true}
 {:db/ident :person/friend :db/valueType :db.type/ref :db/cardinality :db.cardinality/many}])edn";

inline constexpr std::string_view kFuzzData = R"edn([
 {:db/id "alice" :user/email "alice@example.com" :user/name "Alice" :user/nick "al" :person/friend ["bob"]}
 {:db/id "bob" :user/email "bob@example.com" :user/name "Bob" :person/friend ["carol"]}
 {:db/id "carol" :user/email "carol@example.com" :user/name "Carol" :person/friend ["alice"]}
 {:db/id "bug" :label/name "bug"}
 {:db/id "perf" :label/name "perf"}
 {:db/id "i1" :issue/title "Crash on start" :issue/state :state/open :issue/priority 5
  :issue/assignee "alice" :issue/reporter "bob" :issue/created-at #inst "2024-01-01T00:00:00Z"
  :issue/label ["bug" "perf"] :issue/tags ["a" "b"] :issue/score 1.5 :issue/open true
  :issue/uuid #uuid "6ba7b810-9dad-11d1-80b4-00c04fd430c8" :issue/big 123456789012345678901234567890N
  :issue/cost 12.50M :issue/comment [{:comment/text "first"} {:comment/text "second"}]}
 {:db/id "i2" :issue/title "Slow search" :issue/state :state/closed :issue/priority 3
  :issue/assignee "bob" :issue/reporter "carol" :issue/created-at #inst "2024-01-02T00:00:00Z"
  :issue/label ["perf"] :issue/score -0.25 :issue/open false}])edn";

class FuzzStore {
 public:
  // The process's store (created on first call). Aborts if it cannot be
  // made: a fuzz run without its store is useless.
  static FuzzStore& Get() {
    static FuzzStore* store = [] {
      auto* s = new FuzzStore();
      std::atexit([] { Get().Remove(); });
      return s;
    }();
    return *store;
  }

  storage::Store& store() { return *store_; }
  query::QueryEngine& engine() { return *engine_; }
  // The entities of the data (users, labels, issues, comments).
  const std::vector<storage::EntityId>& entities() const { return entities_; }

  // A fresh store with just the schema and the data.
  void Reset() {
    engine_.reset();
    store_.reset();
    Open();
  }

 private:
  FuzzStore() { Open(); }

  void Open() {
    static std::atomic<int> counter{0};
    std::error_code ec;
    std::filesystem::path root("/dev/shm");
    if (!std::filesystem::is_directory(root, ec)) {
      root = std::filesystem::temp_directory_path();
    }
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
    dir_ = (root / StrCat("mentat-fuzz-", ::getpid(), "-", counter++)).string();
    std::filesystem::remove_all(dir_, ec);
    storage::StoreOptions options;
    options.sync_commits = false;
    options.block_cache_bytes = size_t{4} << 20;
    options.rocksdb_statistics = false;
    auto store = storage::Store::Open(dir_, options);
    if (!store.ok()) Die("open", store.status());
    store_ = *std::move(store);
    engine_ = std::make_unique<query::QueryEngine>();
    for (std::string_view tx : {kFuzzSchema, kFuzzData}) {
      auto request = query::ParseTxData(tx);
      if (!request.ok()) Die("parse", request.status());
      auto report = store_->Transact(*std::move(request)).get();
      if (!report.ok()) Die("transact", report.status());
      entities_.clear();
      for (const auto& [tempid, id] : report->tempids) entities_.push_back(id);
      std::sort(entities_.begin(), entities_.end());
    }
  }

  void Remove() {
    engine_.reset();
    store_.reset();
    std::error_code ec;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  }

  [[noreturn]] static void Die(const char* what, const absl::Status& status) {
    std::fprintf(stderr, "fuzz store: %s: %s\n", what,
                 status.ToString().c_str());
    std::abort();
  }

  std::string dir_;
  std::unique_ptr<storage::Store> store_;
  std::unique_ptr<query::QueryEngine> engine_;
  std::vector<storage::EntityId> entities_;
};

}  // namespace mentat::fuzz

#endif  // MENTAT_QUERY_FUZZ_FUZZ_STORE_H_
