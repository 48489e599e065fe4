#include "mentat/query/query_engine.h"

#include <iterator>
#include <limits>
#include <optional>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "execution/plan_runner.h"
#include "mentat/base/str_cat.h"
#include "mentat/query/parser.h"
#include "planner/explain.h"
#include "planner/query_planner.h"

namespace mentat::query {

using edn::EdnValue;

PreparedQuery::PreparedQuery(std::string text, std::optional<EdnValue> rules,
                             QueryShape shape,
                             std::unique_ptr<const planner::QueryPlan> plan)
    : text_(std::move(text)),
      rules_(std::move(rules)),
      shape_(std::move(shape)),
      plan_(std::move(plan)) {}

PreparedQuery::~PreparedQuery() = default;

namespace {

// Where the rules input (%) sits among the inputs after the sources, or
// -1.
int RulesPosition(const ParsedQuery& q) {
  int pos = 0;
  for (const InputSpec& in : q.inputs) {
    if (in.kind == InputSpec::Kind::kSource) continue;
    if (in.kind == InputSpec::Kind::kRules) return pos;
    ++pos;
  }
  return -1;
}

// The :in entries after the sources, the rules input included.
int InputCount(const ParsedQuery& q) {
  int n = 0;
  for (const InputSpec& in : q.inputs) {
    if (in.kind != InputSpec::Kind::kSource) ++n;
  }
  return n;
}

// The rows all the steps of the plan produce, estimated.
double EstimatedRows(const planner::QueryPlan& plan) {
  if (plan.shortcut.kind != planner::StatsShortcut::Kind::kNone) return 0;
  if (!plan.tables.empty()) return std::numeric_limits<double>::infinity();
  double rows = 0;
  for (const planner::Step& step : plan.where.steps) rows += step.est_rows;
  return rows;
}

bool SameRules(const std::optional<EdnValue>& a, const EdnValue* b) {
  if (!a.has_value()) return b == nullptr;
  return b != nullptr && *a == *b;
}

// True while the plan fits the view: the same schema, and no attribute
// whose statistics the estimates used has grown or shrunk by more than 2x.
bool Fresh(const planner::QueryPlan& plan, const storage::DbView& view) {
  if (plan.schema.get() != &view.schema()) return false;
  const storage::Statistics& stats = view.db().stats();
  for (const auto& [attr, then] : plan.used_counts) {
    const storage::AttributeStats* s = stats.Find(attr);
    const int64_t now = s == nullptr ? 0 : s->datoms;
    const int64_t lo = std::min(now, then), hi = std::max(now, then);
    // Small attributes wobble; only moves that change costs count.
    if (hi - lo > 64 && hi > 2 * std::max<int64_t>(lo, 1)) return false;
  }
  return true;
}

class CollectingSink : public RowSink {
 public:
  explicit CollectingSink(QueryResult* result) : result_(result) {}
  [[nodiscard]] absl::Status OnColumns(
      const std::vector<std::string>& columns) override {
    result_->columns = columns;
    return absl::OkStatus();
  }
  [[nodiscard]] absl::Status OnRows(std::vector<Row>&& rows) override {
    if (result_->rows.empty()) {
      result_->rows = std::move(rows);
    } else {
      result_->rows.insert(result_->rows.end(),
                           std::make_move_iterator(rows.begin()),
                           std::make_move_iterator(rows.end()));
    }
    return absl::OkStatus();
  }

 private:
  QueryResult* result_;
};

class CountingSink : public RowSink {
 public:
  [[nodiscard]] absl::Status OnColumns(
      const std::vector<std::string>&) override {
    return absl::OkStatus();
  }
  [[nodiscard]] absl::Status OnRows(std::vector<Row>&& rows) override {
    rows_ += rows.size();
    return absl::OkStatus();
  }
  uint64_t rows() const { return rows_; }

 private:
  uint64_t rows_ = 0;
};

}  // namespace

struct QueryEngine::Cache {
  struct Entry {
    int rules_position = -1;
    int inputs = 0;
    std::vector<std::shared_ptr<const PreparedQuery>> plans;
  };
  absl::Mutex mu;
  absl::flat_hash_map<std::string, Entry> entries ABSL_GUARDED_BY(mu);
  size_t plans ABSL_GUARDED_BY(mu) = 0;

  // The rules position of a cached text, or nullopt.
  std::optional<int> RulesPositionOf(std::string_view text) {
    absl::MutexLock lock(&mu);
    auto it = entries.find(absl::string_view(text.data(), text.size()));
    if (it == entries.end()) return std::nullopt;
    return it->second.rules_position;
  }
};

QueryEngine::QueryEngine(const EngineOptions& options)
    : options_(options), cache_(std::make_unique<Cache>()) {}

QueryEngine::~QueryEngine() = default;

absl::StatusOr<std::shared_ptr<const PreparedQuery>> QueryEngine::Prepare(
    std::string_view text, const storage::DbView& view, const EdnValue* rules) {
  const absl::string_view key(text.data(), text.size());
  {
    absl::MutexLock lock(&cache_->mu);
    auto it = cache_->entries.find(key);
    if (it != cache_->entries.end()) {
      for (const auto& p : it->second.plans) {
        if (SameRules(p->rules(), rules) && Fresh(p->plan(), view)) return p;
      }
    }
  }
  // Planning happens outside the lock.
  absl::StatusOr<ParsedQuery> parsed = ParseQuery(text);
  if (!parsed.ok()) return parsed.status();
  std::vector<Rule> rule_list;
  if (rules != nullptr) {
    absl::StatusOr<std::vector<Rule>> r = ParseRules(*rules);
    if (!r.ok()) return r.status();
    rule_list = *std::move(r);
  }
  const std::shared_ptr<const storage::Schema>& schema = view.db().schema_ptr();
  absl::Status s = ValidateQuery(*parsed, *schema, rule_list);
  if (!s.ok()) return s;
  absl::StatusOr<std::unique_ptr<planner::QueryPlan>> plan =
      planner::PlanQuery(*parsed, rule_list, schema, view.db().stats(),
                         {.always_entity_order = options_.always_entity_order});
  if (!plan.ok()) return plan.status();
  QueryShape shape;
  shape.kind = (*plan)->find_kind;
  shape.keyed = (*plan)->keys_kind != ParsedQuery::KeysKind::kNone;
  shape.columns = (*plan)->columns;
  shape.inputs = InputCount(*parsed);
  shape.rules_index = RulesPosition(*parsed);
  shape.estimated_rows = EstimatedRows(**plan);
  auto prepared = std::make_shared<const PreparedQuery>(
      std::string(text),
      rules != nullptr ? std::optional<EdnValue>(*rules) : std::nullopt,
      std::move(shape), *std::move(plan));

  absl::MutexLock lock(&cache_->mu);
  if (cache_->plans >= options_.plan_cache_entries &&
      !cache_->entries.contains(key)) {
    // Crude but bounded: drop one whole text's plans.
    auto victim = cache_->entries.begin();
    cache_->plans -= victim->second.plans.size();
    cache_->entries.erase(victim);
  }
  Cache::Entry& entry = cache_->entries[key];
  entry.rules_position = RulesPosition(*parsed);
  entry.inputs = InputCount(*parsed);
  auto& plans = entry.plans;
  for (auto it = plans.begin(); it != plans.end();) {
    if (SameRules((*it)->rules(), rules)) {
      it = plans.erase(it);
      --cache_->plans;
    } else {
      ++it;
    }
  }
  plans.push_back(prepared);
  ++cache_->plans;
  return prepared;
}

absl::StatusOr<std::shared_ptr<const PreparedQuery>> QueryEngine::PrepareCall(
    std::string_view text, const storage::DbView& view,
    std::vector<EdnValue>* inputs) {
  const absl::string_view key(text.data(), text.size());
  int expected = -1;
  int rules_at = -1;
  std::shared_ptr<const PreparedQuery> cached;
  {
    absl::MutexLock lock(&cache_->mu);
    auto it = cache_->entries.find(key);
    if (it != cache_->entries.end()) {
      expected = it->second.inputs;
      rules_at = it->second.rules_position;
      if (static_cast<size_t>(expected) == inputs->size()) {
        const EdnValue* rules =
            rules_at >= 0 ? &(*inputs)[static_cast<size_t>(rules_at)] : nullptr;
        for (const auto& p : it->second.plans) {
          if (SameRules(p->rules(), rules) && Fresh(p->plan(), view)) {
            cached = p;
            break;
          }
        }
      }
    }
  }
  if (expected < 0) {
    absl::StatusOr<ParsedQuery> parsed = ParseQuery(text);
    if (!parsed.ok()) return parsed.status();
    expected = InputCount(*parsed);
    rules_at = RulesPosition(*parsed);
  }
  if (static_cast<size_t>(expected) != inputs->size()) {
    return absl::InvalidArgumentError(StrCat(
        "the query's :in takes ", expected,
        " input(s) after its sources, the request has ", inputs->size()));
  }
  std::optional<EdnValue> rules;
  if (rules_at >= 0) {
    auto at = inputs->begin() + rules_at;
    rules = std::move(*at);
    inputs->erase(at);
  }
  if (cached != nullptr) return cached;
  return Prepare(text, view, rules.has_value() ? &*rules : nullptr);
}

absl::Status QueryEngine::Execute(const PreparedQuery& query,
                                  const storage::DbView& view,
                                  const std::vector<EdnValue>& inputs,
                                  const QueryOptions& options, RowSink* sink) {
  return execution::RunPlan(query.plan(), view, inputs, options, sink, nullptr);
}

namespace {

// Splits the rules input out of a Query call's inputs.
struct SplitInputs {
  const EdnValue* rules = nullptr;
  std::vector<EdnValue> rest;
  bool split = false;
};

[[nodiscard]] absl::StatusOr<SplitInputs> Split(
    std::optional<int> position, std::string_view text,
    const std::vector<EdnValue>& inputs) {
  if (!position.has_value()) {
    absl::StatusOr<ParsedQuery> parsed = ParseQuery(text);
    if (!parsed.ok()) return parsed.status();
    position = RulesPosition(*parsed);
  }
  SplitInputs out;
  if (*position < 0) return out;
  if (static_cast<size_t>(*position) >= inputs.size()) {
    return absl::InvalidArgumentError(
        StrCat("the query takes rules (%) as input ", *position + 1,
               " but got ", inputs.size(), " inputs"));
  }
  out.split = true;
  out.rules = &inputs[static_cast<size_t>(*position)];
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (static_cast<int>(i) != *position) out.rest.push_back(inputs[i]);
  }
  return out;
}

}  // namespace

absl::StatusOr<QueryResult> QueryEngine::Query(
    std::string_view text, const storage::DbView& view,
    const std::vector<EdnValue>& inputs, const QueryOptions& options) {
  absl::StatusOr<SplitInputs> split =
      Split(cache_->RulesPositionOf(text), text, inputs);
  if (!split.ok()) return split.status();
  absl::StatusOr<std::shared_ptr<const PreparedQuery>> prepared =
      Prepare(text, view, split->rules);
  if (!prepared.ok()) return prepared.status();
  QueryResult result;
  const planner::QueryPlan& plan = (*prepared)->plan();
  result.kind = plan.find_kind;
  result.keyed = plan.keys_kind != ParsedQuery::KeysKind::kNone;
  CollectingSink sink(&result);
  absl::Status s = Execute(**prepared, view,
                           split->split ? split->rest : inputs, options, &sink);
  if (!s.ok()) return s;
  return result;
}

absl::StatusOr<std::string> QueryEngine::Explain(
    std::string_view text, const storage::DbView& view,
    const std::vector<EdnValue>& inputs, bool profile,
    const QueryOptions& limits) {
  absl::StatusOr<SplitInputs> split =
      Split(cache_->RulesPositionOf(text), text, inputs);
  if (!split.ok()) return split.status();
  absl::StatusOr<std::shared_ptr<const PreparedQuery>> prepared =
      Prepare(text, view, split->rules);
  if (!prepared.ok()) return prepared.status();
  const planner::QueryPlan& plan = (*prepared)->plan();
  if (!profile) return planner::ExplainPlan(plan, nullptr);
  planner::PlanProfile measured;
  CountingSink sink;
  absl::Status s =
      execution::RunPlan(plan, view, split->split ? split->rest : inputs,
                         limits, &sink, &measured);
  if (!s.ok()) return s;
  measured.result_rows = sink.rows();
  return planner::ExplainPlan(plan, &measured);
}

EdnValue QueryResult::ToEdn() const {
  auto row_value = [&](const Row& r) {
    if (keyed && r.size() == 1) return r[0];
    return EdnValue::Vector(r);
  };
  switch (kind) {
    case FindSpec::Kind::kRelation: {
      std::vector<EdnValue> items;
      items.reserve(rows.size());
      for (const Row& r : rows) items.push_back(row_value(r));
      return EdnValue::Set(std::move(items));
    }
    case FindSpec::Kind::kCollection: {
      std::vector<EdnValue> items;
      items.reserve(rows.size());
      for (const Row& r : rows) {
        items.push_back(r.empty() ? EdnValue::Nil() : r[0]);
      }
      return EdnValue::Vector(std::move(items));
    }
    case FindSpec::Kind::kTuple:
      if (rows.empty()) return EdnValue::Nil();
      return row_value(rows[0]);
    case FindSpec::Kind::kScalar:
      if (rows.empty() || rows[0].empty()) return EdnValue::Nil();
      return rows[0][0];
  }
  return EdnValue::Nil();
}

}  // namespace mentat::query
