#include "mentat/query/pull.h"

#include <memory>
#include <utility>

#include "pull/pull_plan.h"
#include "pull/pull_runner.h"

namespace mentat::query {

absl::Status ValidatePullPattern(const PullPattern& pattern,
                                 const storage::Schema& schema) {
  return pull_internal::PullPlan::Compile(pattern, schema).status();
}

absl::StatusOr<PullExecutor> PullExecutor::Create(const storage::DbView& view,
                                                  const PullPattern& pattern) {
  // A history database holds every value an attribute ever had, asserted
  // and retracted; there is no one map of an entity to give.
  if (view.basis().kind == storage::BasisKind::kHistory) {
    return absl::InvalidArgumentError(
        "pull is not defined on a history database");
  }
  // An as_of before the history retention horizon may miss old values.
  absl::Status exact = view.db().CheckBasis(view.basis());
  if (!exact.ok()) return exact;
  absl::StatusOr<std::unique_ptr<pull_internal::PullPlan>> plan =
      pull_internal::PullPlan::Compile(pattern, view.schema());
  if (!plan.ok()) return plan.status();
  return PullExecutor(
      std::make_unique<pull_internal::PullRunner>(view, *std::move(plan)));
}

PullExecutor::PullExecutor(std::unique_ptr<pull_internal::PullRunner> runner)
    : runner_(std::move(runner)) {}
PullExecutor::PullExecutor(PullExecutor&&) noexcept = default;
PullExecutor& PullExecutor::operator=(PullExecutor&&) noexcept = default;
PullExecutor::~PullExecutor() = default;

absl::StatusOr<edn::EdnValue> PullExecutor::Pull(storage::EntityId e) {
  return runner_->Pull(e);
}

absl::StatusOr<edn::EdnValue> Pull(const storage::DbView& view,
                                   const PullPattern& pattern,
                                   storage::EntityId e) {
  absl::StatusOr<PullExecutor> executor = PullExecutor::Create(view, pattern);
  if (!executor.ok()) return executor.status();
  return executor->Pull(e);
}

absl::StatusOr<std::vector<edn::EdnValue>> PullMany(
    const storage::DbView& view, const PullPattern& pattern,
    const std::vector<storage::EntityId>& entities) {
  absl::StatusOr<PullExecutor> executor = PullExecutor::Create(view, pattern);
  if (!executor.ok()) return executor.status();
  std::vector<edn::EdnValue> out;
  out.reserve(entities.size());
  for (storage::EntityId e : entities) {
    absl::StatusOr<edn::EdnValue> one = executor->Pull(e);
    if (!one.ok()) return one.status();
    out.push_back(*std::move(one));
  }
  return out;
}

}  // namespace mentat::query
