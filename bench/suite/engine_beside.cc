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
    std::optional<int64_t> as_of) {
  // Views made once, as query-bench makes them (the server makes one a
  // call; a current or as_of view holds the state and its basis only).
  auto made = views_.find(as_of.value_or(-1));
  if (made == views_.end()) {
    made =
        views_
            .emplace(as_of.value_or(-1),
                     db_->View(as_of.has_value() ? storage::Basis::AsOf(*as_of)
                                                 : storage::Basis::Current()))
            .first;
  }
  absl::StatusOr<query::QueryResult> result =
      engine_.Query(query, made->second, inputs);
  if (!result.ok()) return result.status();
  return static_cast<int64_t>(result->rows.size());
}

}  // namespace mentat::bench
