#include "mentat/query/pull.h"

#include <memory>
#include <utility>

#include "execution/exec_context.h"
#include "pull/pull_plan.h"
#include "pull/pull_runner.h"

namespace mentat::query {

absl::Status ValidatePullPattern(const PullPattern& pattern,
                                 const storage::Schema& schema) {
  return pull_internal::PullPlan::Compile(pattern, schema).status();
}

namespace pull_internal {

absl::StatusOr<std::unique_ptr<PullRunner>> PullRunner::Create(
    const storage::DbView& view, const PullPattern& pattern,
    execution::ExecContext* ctx) {
  // A history database holds every value an attribute ever had, asserted
  // and retracted; there is no one map of an entity to give.
  if (view.basis().kind == storage::BasisKind::kHistory) {
    return absl::InvalidArgumentError(
        "pull is not defined on a history database");
  }
  // An as_of before the history retention horizon may miss old values.
  absl::Status exact = view.db().CheckBasis(view.basis());
  if (!exact.ok()) return exact;
  absl::StatusOr<std::unique_ptr<PullPlan>> plan =
      PullPlan::Compile(pattern, view.schema());
  if (!plan.ok()) return plan.status();
  return std::make_unique<PullRunner>(view, *std::move(plan), ctx);
}

}  // namespace pull_internal

absl::StatusOr<PullExecutor> PullExecutor::Create(const storage::DbView& view,
                                                  const PullPattern& pattern,
                                                  const QueryOptions& limits) {
  auto ctx = std::make_unique<execution::ExecContext>(view, limits, "pull");
  absl::StatusOr<std::unique_ptr<pull_internal::PullRunner>> runner =
      pull_internal::PullRunner::Create(view, pattern, ctx.get());
  if (!runner.ok()) return runner.status();
  return PullExecutor(std::move(ctx), *std::move(runner));
}

PullExecutor::PullExecutor(std::unique_ptr<execution::ExecContext> ctx,
                           std::unique_ptr<pull_internal::PullRunner> runner)
    : ctx_(std::move(ctx)), runner_(std::move(runner)) {}
PullExecutor::PullExecutor(PullExecutor&&) noexcept = default;
PullExecutor& PullExecutor::operator=(PullExecutor&&) noexcept = default;
PullExecutor::~PullExecutor() = default;

absl::StatusOr<edn::EdnValue> PullExecutor::Pull(storage::EntityId e) {
  runner_->set_bytes_before(returned_bytes_);
  size_t bytes = 0;
  absl::StatusOr<edn::EdnValue> result = runner_->Pull(e, &bytes);
  if (!result.ok()) return result;
  // The caller keeps what it was given until the response is done.
  returned_bytes_ += bytes;
  absl::Status kept = ctx_->Charge(bytes, "the pull results of this call");
  if (!kept.ok()) return kept;
  return result;
}

uint64_t PullExecutor::rows_scanned() const { return ctx_->rows_scanned(); }

absl::StatusOr<edn::EdnValue> Pull(const storage::DbView& view,
                                   const PullPattern& pattern,
                                   storage::EntityId e,
                                   const QueryOptions& limits) {
  absl::StatusOr<PullExecutor> executor =
      PullExecutor::Create(view, pattern, limits);
  if (!executor.ok()) return executor.status();
  return executor->Pull(e);
}

absl::StatusOr<std::vector<edn::EdnValue>> PullMany(
    const storage::DbView& view, const PullPattern& pattern,
    const std::vector<storage::EntityId>& entities,
    const QueryOptions& limits) {
  absl::StatusOr<PullExecutor> executor =
      PullExecutor::Create(view, pattern, limits);
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
