#ifndef MENTAT_QUERY_QUERY_ENGINE_H_
#define MENTAT_QUERY_QUERY_ENGINE_H_

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "mentat/edn/edn_value.h"
#include "mentat/query/ast.h"
#include "mentat/storage/db.h"

namespace mentat::query {

// One result row: one EDN value per :find element. Entity ids and longs
// are integers, keywords keywords, instants #inst, pulls maps, aggregates
// numbers or collections.
using Row = std::vector<edn::EdnValue>;

// Per-execution limits. Plain struct with defaults.
struct QueryOptions {
  // Stop with DeadlineExceeded once passed. Default: none.
  std::chrono::steady_clock::time_point deadline =
      std::chrono::steady_clock::time_point::max();
  // Set to true from any thread to stop the query with Cancelled. The flag
  // is polled inside every loop of the executor. Not owned; may be null.
  const std::atomic<bool>* cancelled = nullptr;
  // Most bytes the query's intermediate results may hold before it stops
  // with ResourceExhausted. Default: 1 GiB.
  size_t memory_budget_bytes = size_t{1} << 30;
  // Most datoms and rows the executor may step through (every datom a scan
  // or probe reads, every row a step handles, every datom a pull reads)
  // before it stops with ResourceExhausted. 0: no limit (the default).
  uint64_t max_rows_scanned = 0;
  // Largest pull result, in bytes as the engine builds it (each value about
  // sizeof(EdnValue), 80 bytes, plus its text): one `(pull ...)` value of a
  // row, one Pull, or all the results of one PullExecutor (PullMany).
  // Past it the pull stops with ResourceExhausted. 0: no cap. Default:
  // 256 MiB, about what fits the server's 64 MiB message limit.
  size_t max_pull_bytes = size_t{256} << 20;
  // Rows per batch handed to the sink. Default: 1000.
  size_t batch_rows = 1000;
  // A batch is also handed over once the texts of its plain values hold
  // this many bytes, so that a batch of large values stays small (a query
  // whose consumer waits holds one batch). Default: 1 MiB.
  size_t batch_bytes = size_t{1} << 20;
  // Answer counts the statistics know (`[:find ?v (count ?e) ...]` and
  // friends) from them instead of scanning. Off: always scan (benchmarks,
  // checks of the scan path). Default: on.
  bool use_statistics = true;
};

// Receives a query's results as they are produced. Called on the thread
// that runs the query.
class RowSink {
 public:
  virtual ~RowSink() = default;
  // Called once, before any rows: one name per :find element ("?e",
  // "(count ?i)").
  [[nodiscard]] virtual absl::Status OnColumns(
      const std::vector<std::string>& columns) = 0;
  // Called with each batch of rows, in order. Returning an error stops the
  // query with that error (a client that went away, say).
  [[nodiscard]] virtual absl::Status OnRows(std::vector<Row>&& rows) = 0;

  // A sink that encodes storage values itself (the server's, straight into
  // wire bytes) returns true: then a query whose every column is a plain
  // value (no pull, aggregate, tuple, :keys, :order, :offset or :limit)
  // hands it each row through OnValueRow instead of an EDN value per cell
  // in OnRows. The values are the engine's, valid during the call only.
  virtual bool TakesValues() const { return false; }
  [[nodiscard]] virtual absl::Status OnValueRow(
      const storage::Value* const* cells, size_t width) {
    (void)cells;
    (void)width;
    return absl::UnimplementedError("this sink takes EDN rows only");
  }
};

namespace planner {
struct QueryPlan;
}

// What a query's text says of its results and of the inputs it takes.
struct QueryShape {
  FindSpec::Kind kind = FindSpec::Kind::kRelation;
  // With :keys/:strs/:syms each row holds one value: the row as a map.
  bool keyed = false;
  // One name per :find element ("?e", "(count ?i)"), as OnColumns gets.
  std::vector<std::string> columns;
  // The :in entries after the sources, the rules input included.
  int inputs = 0;
  // Where among those the rules input (%) sits, or -1.
  int rules_index = -1;
  // The planner's estimate of the rows its steps produce in all (0 for a
  // count the statistics answer), or infinity when rules are involved: a
  // hint of how long it runs (the server runs small queries inline).
  double estimated_rows = 0;
};

// A parsed, validated and planned query, ready to run on any DbView whose
// schema it was planned for. Immutable; share it between threads.
class PreparedQuery {
 public:
  PreparedQuery(std::string text, std::optional<edn::EdnValue> rules,
                QueryShape shape,
                std::unique_ptr<const planner::QueryPlan> plan);
  ~PreparedQuery();

  const QueryShape& shape() const { return shape_; }
  const std::string& text() const { return text_; }
  const std::optional<edn::EdnValue>& rules() const { return rules_; }
  // The engine's own: the plan Execute runs.
  const planner::QueryPlan& plan() const { return *plan_; }

 private:
  std::string text_;
  std::optional<edn::EdnValue> rules_;
  QueryShape shape_;
  std::unique_ptr<const planner::QueryPlan> plan_;
};

// Everything a query returned, collected (for tests, the CLI, small
// results).
struct QueryResult {
  std::vector<std::string> columns;
  FindSpec::Kind kind = FindSpec::Kind::kRelation;
  // With :keys/:strs/:syms each row holds one value: the row as a map.
  bool keyed = false;
  std::vector<Row> rows;
  // The result shaped as its find spec asks: a set of tuples, a
  // collection, one tuple, or one scalar (nil when there is none).
  edn::EdnValue ToEdn() const;
};

struct EngineOptions {
  // Prepared queries kept, by query text and schema. Default: 1024.
  size_t plan_cache_entries = 1024;
  // Tests: plan a walk in entity order wherever the rows' order allows
  // one, whatever the statistics say (see planner::PlannerOptions).
  bool always_entity_order = false;
};

// Runs Datalog queries. Thread-safe: any number of threads may Prepare and
// Execute at once (the plan cache has its own lock, held only to look up
// and insert).
class QueryEngine {
 public:
  explicit QueryEngine(const EngineOptions& options = {});
  ~QueryEngine();

  // Parses, validates and plans `text` against the view's schema and
  // statistics; cached by text (re-planned when the schema changes or the
  // statistics move a lot). `rules` is the `%` input if the query takes
  // one (rules are part of the cache key).
  [[nodiscard]] absl::StatusOr<std::shared_ptr<const PreparedQuery>> Prepare(
      std::string_view text, const storage::DbView& view,
      const edn::EdnValue* rules = nullptr);

  // Prepares `text` for a call whose `inputs` are every :in value after
  // the sources, the rules input included, in :in order: checks their
  // count against the query's :in (InvalidArgument naming both), takes the
  // rules input out of `*inputs` and prepares for it. What is left in
  // `*inputs` is what Execute takes. One plan-cache lookup when cached.
  [[nodiscard]] absl::StatusOr<std::shared_ptr<const PreparedQuery>>
  PrepareCall(std::string_view text, const storage::DbView& view,
              std::vector<edn::EdnValue>* inputs);

  // Runs a prepared query. `inputs` are the :in values after the sources
  // and rules, in order (scalars, tuples as vectors, collections as
  // vectors, relations as vectors of vectors); entity positions accept ids,
  // idents and lookup refs. Errors: InvalidArgument (bad inputs, a pull on
  // a history basis), DeadlineExceeded, Cancelled, ResourceExhausted
  // (memory budget), OutOfRange (an integer overflow in a function),
  // FailedPrecondition (a pull on an as_of before the retention horizon),
  // DataLoss or Unavailable from storage, or what the sink returned.
  //
  // With :keys/:strs/:syms each row the sink gets holds one map. A plan
  // keeps the attribute definitions it was made with; Query() and Prepare()
  // re-plan when the view's schema differs, Execute() does not. A query
  // that fails or is cancelled leaves nothing behind but the plan cache.
  [[nodiscard]] absl::Status Execute(const PreparedQuery& query,
                                     const storage::DbView& view,
                                     const std::vector<edn::EdnValue>& inputs,
                                     const QueryOptions& options,
                                     RowSink* sink);

  // Prepare + Execute, collecting the rows. `inputs` may include the rules
  // input in its :in position (the engine takes it out).
  [[nodiscard]] absl::StatusOr<QueryResult> Query(
      std::string_view text, const storage::DbView& view,
      const std::vector<edn::EdnValue>& inputs,
      const QueryOptions& options = {});

  // The plan as text, with estimated rows per step; with profile, also
  // actual rows and time per operator after running it. The profiled run
  // obeys `limits` (deadline, cancellation, memory budget; its batch_rows
  // is ignored) and fails as Execute does.
  [[nodiscard]] absl::StatusOr<std::string> Explain(
      std::string_view text, const storage::DbView& view,
      const std::vector<edn::EdnValue>& inputs, bool profile,
      const QueryOptions& limits = {});

 private:
  struct Cache;
  EngineOptions options_;
  std::unique_ptr<Cache> cache_;
};

}  // namespace mentat::query

#endif  // MENTAT_QUERY_QUERY_ENGINE_H_
