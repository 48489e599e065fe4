#include "suite/engine_beside.h"

#include <utility>

#include "mentat/base/str_cat.h"
#include "mentat/edn/edn_reader.h"

namespace mentat::bench {

EngineBeside::EngineBeside(std::unique_ptr<storage::Store> store)
    : store_(std::move(store)), db_(store_->Latest()) {}

absl::StatusOr<std::unique_ptr<EngineBeside>> EngineBeside::Open(
    const std::string& dir) {
  storage::StoreOptions options;
  options.warm_entity_cache = true;
  absl::StatusOr<std::unique_ptr<storage::Store>> store =
      storage::Store::Open(dir, options);
  if (!store.ok()) {
    return absl::Status(
        store.status().code(),
        StrCat("--engine-data ", dir, ": ", store.status().message()));
  }
  (*store)->WaitForWarmCache();
  (*store)->WaitForColumns();
  return std::unique_ptr<EngineBeside>(new EngineBeside(*std::move(store)));
}

absl::StatusOr<std::vector<edn::EdnValue>> EngineBeside::Inputs(
    const std::vector<std::string>& texts) {
  std::vector<edn::EdnValue> inputs;
  inputs.reserve(texts.size());
  for (const std::string& text : texts) {
    absl::StatusOr<edn::EdnValue> v = edn::ParseEdn(text);
    if (!v.ok()) return v.status();
    inputs.push_back(*std::move(v));
  }
  return inputs;
}

absl::StatusOr<int64_t> EngineBeside::Rows(
    const std::string& query, const std::vector<edn::EdnValue>& inputs,
    storage::Basis basis) {
  if (basis.kind != storage::BasisKind::kCurrent) {
    absl::StatusOr<storage::EntityId> t = storage::Db::ResolveT(basis.t);
    if (!t.ok()) return t.status();
    basis.t = *t;
  }
  // Views made once, as query-bench makes them (the server makes one a
  // call; a current or as_of view holds the state and its basis only).
  const std::pair<int, int64_t> key(static_cast<int>(basis.kind), basis.t);
  auto made = views_.find(key);
  if (made == views_.end()) made = views_.emplace(key, db_->View(basis)).first;
  absl::StatusOr<query::QueryResult> result =
      engine_.Query(query, made->second, inputs);
  if (!result.ok()) return result.status();
  return static_cast<int64_t>(result->rows.size());
}

}  // namespace mentat::bench
