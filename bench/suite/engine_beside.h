#ifndef MENTAT_BENCH_SUITE_ENGINE_BESIDE_H_
#define MENTAT_BENCH_SUITE_ENGINE_BESIDE_H_

// The paired scenario's third call: the same query run in mentat-bench's
// own process, on a copy of the server's store, so that what the engine
// takes in process is timed in the same seconds as the served call and
// its ping (issue 18's goals are ratios between the three, and this
// machine's speed drifts between runs by more than those ratios' margins).

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "mentat/edn/edn_value.h"
#include "mentat/query/query_engine.h"
#include "mentat/storage/store.h"

namespace mentat::bench {

// Not thread-safe: one caller at a time.
class EngineBeside {
 public:
  // Opens the store at `dir` (a database's directory: a copy of the
  // server's <data-dir>/<database>, which the server's lock keeps from
  // being opened in place) with StoreOptions' defaults and the entity
  // cache warmed, as mentatd opens it, and waits for the warm-up and the
  // statistics' columns.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<EngineBeside>> Open(
      const std::string& dir);

  // A read's inputs, as the server reads them (EDN text each).
  [[nodiscard]] static absl::StatusOr<std::vector<edn::EdnValue>> Inputs(
      const std::vector<std::string>& texts);

  // Runs `query` on the state the store was opened at, seen at `basis`
  // (its t a t or a transaction id, as the server takes it), and returns
  // its number of rows: engine.Query as query-bench times it, rows
  // materialised.
  [[nodiscard]] absl::StatusOr<int64_t> Rows(
      const std::string& query, const std::vector<edn::EdnValue>& inputs,
      storage::Basis basis);

 private:
  explicit EngineBeside(std::unique_ptr<storage::Store> store);

  std::unique_ptr<storage::Store> store_;
  std::shared_ptr<const storage::Db> db_;
  query::QueryEngine engine_;
  // By basis (kind, t): a since view keeps its index of changes.
  std::map<std::pair<int, int64_t>, storage::DbView> views_;
};

}  // namespace mentat::bench

#endif  // MENTAT_BENCH_SUITE_ENGINE_BESIDE_H_
