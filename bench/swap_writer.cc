#include "swap_writer.h"

#include <chrono>

namespace mentat::bench {
namespace {

constexpr int64_t kSampleIssues = 4096;

storage::TxOp Set(storage::EntityId e, const char* attr, storage::Value v) {
  storage::TxOp op;
  op.kind = storage::TxOp::Kind::kAdd;
  op.e = storage::EntityRef::Id(e);
  op.a = storage::EntityRef::Ident(attr);
  op.v = storage::TxValue::Scalar(std::move(v));
  return op;
}

}  // namespace

SwapWriter::SwapWriter(storage::Store* store, const WorkloadScale& scale,
                       const LoadResult& meta, double tx_per_second)
    : store_(store), tx_per_second_(tx_per_second) {
  // Every issue-th issue, spread over the whole range; states after the
  // history phase.
  const int64_t step = std::max<int64_t>(1, scale.issues / kSampleIssues);
  for (int64_t idx = 0; idx < scale.issues; idx += step) {
    const Issue issue = GenerateIssue(scale, idx);
    int state = issue.state;
    int changed;
    if (HistoryChange(scale, idx, &changed)) state = changed;
    sample_.push_back(
        {meta.issue_ids[static_cast<size_t>(idx)], state, issue.priority});
  }
}

std::vector<storage::TxOp> SwapWriter::NextSwap() {
  auto next = [&] {
    rng_ ^= rng_ << 13;
    rng_ ^= rng_ >> 7;
    rng_ ^= rng_ << 17;
    return rng_;
  };
  const size_t n = sample_.size();
  const bool swap_states = (submitted_ % 2) == 0;
  for (;;) {
    Sampled& a = sample_[next() % n];
    const size_t from = next() % n;
    for (size_t k = 0; k < n; ++k) {
      Sampled& b = sample_[(from + k) % n];
      if (swap_states && b.priority == a.priority && b.state != a.state) {
        std::swap(a.state, b.state);
        for (Sampled* s : {&a, &b}) {
          if (!s->state_touched) {
            s->state_touched = true;
            states_touched_.fetch_add(1);
          }
        }
        return {
            Set(a.id, "issue/state", storage::Value::Keyword(kStates[a.state])),
            Set(b.id, "issue/state",
                storage::Value::Keyword(kStates[b.state]))};
      }
      if (!swap_states && b.state == a.state && b.priority != a.priority) {
        std::swap(a.priority, b.priority);
        return {Set(a.id, "issue/priority", storage::Value::Long(a.priority)),
                Set(b.id, "issue/priority", storage::Value::Long(b.priority))};
      }
    }
  }
}

void SwapWriter::Start() {
  stop_ = false;
  thread_ = std::thread([this] { Run(); });
}

void SwapWriter::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  // Every submitted transaction answers (the store never drops one).
  while (committed_.load() + failed_.load() < submitted_) {
    std::this_thread::yield();
  }
}

void SwapWriter::Run() {
  using Clock = std::chrono::steady_clock;
  const auto period = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(1.0 / tx_per_second_));
  const Clock::time_point start = Clock::now();
  for (int64_t i = 0; !stop_.load(); ++i) {
    std::this_thread::sleep_until(start + period * i);
    // Submitted without waiting: commits group, as a server's would.
    std::vector<storage::TxOp> ops = NextSwap();
    ++submitted_;
    store_->Transact(storage::TxRequest{std::move(ops)},
                     [this](absl::StatusOr<storage::TxReport> r) {
                       (r.ok() ? committed_ : failed_).fetch_add(1);
                     });
  }
}

}  // namespace mentat::bench
