#include "semi_sync.h"

#include "mentat/base/str_cat.h"
#include "mentat/storage/entity_ids.h"

namespace mentat::server {

SemiSync::SemiSync(ReaderPool& readers, std::chrono::milliseconds timeout)
    : readers_(readers), timeout_(timeout) {
  thread_ = std::thread([this] { Run(); });
}

SemiSync::~SemiSync() { Stop(); }

void SemiSync::Settle(std::shared_ptr<Waiter> w, absl::Status status) {
  const auto waited = std::chrono::steady_clock::now() - w->start;
  wait_micros_.fetch_add(
      std::chrono::duration_cast<std::chrono::microseconds>(waited).count(),
      std::memory_order_relaxed);
  if (status.ok()) {
    acked_waits_.fetch_add(1, std::memory_order_relaxed);
  } else if (status.code() == absl::StatusCode::kDeadlineExceeded) {
    timeouts_.fetch_add(1, std::memory_order_relaxed);
  }
  readers_.Post([w = std::move(w), status = std::move(status)] {
    Then then = std::move(w->then);
    then(status);
  });
}

void SemiSync::Ack(const std::string& database, int64_t applied_tx) {
  std::vector<std::shared_ptr<Waiter>> ready;
  {
    absl::MutexLock lock(&mu_);
    Db& db = dbs_[database];
    if (applied_tx <= db.acked) return;
    db.acked = applied_tx;
    auto end = db.waits.upper_bound(applied_tx);
    for (auto it = db.waits.begin(); it != end; ++it) {
      it->second->done = true;
      ready.push_back(std::move(it->second));
    }
    db.waits.erase(db.waits.begin(), end);
    waiting_ -= static_cast<int64_t>(ready.size());
  }
  for (auto& w : ready) Settle(std::move(w), absl::OkStatus());
}

void SemiSync::WaitFor(const std::string& database, int64_t tx, Then then) {
  auto w = std::make_shared<Waiter>();
  w->database = database;
  w->tx = tx;
  w->start = std::chrono::steady_clock::now();
  w->deadline = w->start + timeout_;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) {
      w->done = true;
    } else {
      Db& db = dbs_[database];
      if (tx <= db.acked) {
        w->done = true;
      } else {
        w->then = std::move(then);
        db.waits.emplace(tx, w);
        by_deadline_.push_back(std::move(w));
        waiting_++;
        return;
      }
    }
  }
  // Acknowledged already, or stopping.
  bool stopping;
  {
    absl::MutexLock lock(&mu_);
    stopping = stopping_;
  }
  if (stopping) {
    then(absl::UnavailableError(
        StrCat("transaction ", tx,
               " is committed on this primary, but the "
               "server is shutting down before a replica acknowledged it")));
    return;
  }
  acked_waits_.fetch_add(1, std::memory_order_relaxed);
  then(absl::OkStatus());
}

void SemiSync::Run() {
  absl::MutexLock lock(&mu_);
  while (!stopping_) {
    // The nearest deadline of a wait still open.
    while (!by_deadline_.empty() && by_deadline_.front()->done) {
      by_deadline_.pop_front();
    }
    if (by_deadline_.empty()) {
      mu_.Await(absl::Condition(
          +[](SemiSync* s) ABSL_NO_THREAD_SAFETY_ANALYSIS {
            return s->stopping_ || !s->by_deadline_.empty();
          },
          this));
      continue;
    }
    const auto deadline = by_deadline_.front()->deadline;
    if (std::chrono::steady_clock::now() < deadline) {
      mu_.AwaitWithTimeout(
          absl::Condition(&stopping_),
          absl::FromChrono(deadline - std::chrono::steady_clock::now()));
      continue;
    }
    std::shared_ptr<Waiter> w = std::move(by_deadline_.front());
    by_deadline_.pop_front();
    Db& db = dbs_[w->database];
    for (auto [it, end] = db.waits.equal_range(w->tx); it != end; ++it) {
      if (it->second == w) {
        db.waits.erase(it);
        break;
      }
    }
    w->done = true;
    waiting_--;
    const int64_t acked = db.acked;
    mu_.Unlock();
    Settle(w, absl::DeadlineExceededError(StrCat(
                  "transaction ", w->tx, " (t ", w->tx & storage::kCounterMask,
                  ") of database ", w->database,
                  " is committed on this primary but no replica acknowledged "
                  "it within ",
                  timeout_.count(),
                  " ms (--durability semi-sync; the replicas hold database ",
                  w->database, " up to tx ", acked,
                  "): it is not yet durable on a replica and would be lost if "
                  "this primary failed now. A read with min_basis_tx ",
                  w->tx,
                  " at a replica shows when it arrives; a retry with the "
                  "same request_id answers once a replica has it")));
    mu_.Lock();
  }
}

void SemiSync::Stop() {
  std::vector<std::shared_ptr<Waiter>> open;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    stopping_ = true;
    for (auto& [name, db] : dbs_) {
      for (auto& [tx, w] : db.waits) {
        w->done = true;
        open.push_back(std::move(w));
      }
      db.waits.clear();
    }
    by_deadline_.clear();
    waiting_ = 0;
  }
  if (thread_.joinable()) thread_.join();
  for (auto& w : open) {
    const int64_t tx = w->tx;
    Settle(std::move(w),
           absl::UnavailableError(StrCat(
               "transaction ", tx,
               " is committed on this primary, but the server is shutting "
               "down before a replica acknowledged it")));
  }
}

int64_t SemiSync::acked(const std::string& database) const {
  absl::MutexLock lock(&mu_);
  auto it = dbs_.find(database);
  return it == dbs_.end() ? 0 : it->second.acked;
}

int64_t SemiSync::waiting() const {
  absl::MutexLock lock(&mu_);
  return waiting_;
}

std::string SemiSync::RenderPrometheus() const {
  std::string out;
  StrAppend(&out,
            "# HELP mentat_semi_sync_waiting Transactions committed here "
            "whose answer waits for a replica's acknowledgement.\n"
            "# TYPE mentat_semi_sync_waiting gauge\n"
            "mentat_semi_sync_waiting ",
            waiting(),
            "\n"
            "# HELP mentat_semi_sync_acked_total Transactions answered once "
            "a replica acknowledged them.\n"
            "# TYPE mentat_semi_sync_acked_total counter\n"
            "mentat_semi_sync_acked_total ",
            acked_waits_.load(),
            "\n"
            "# HELP mentat_semi_sync_timeouts_total Transactions answered "
            "DEADLINE_EXCEEDED: committed here, acknowledged by no replica "
            "in time.\n"
            "# TYPE mentat_semi_sync_timeouts_total counter\n"
            "mentat_semi_sync_timeouts_total ",
            timeouts_.load(),
            "\n"
            "# HELP mentat_semi_sync_wait_seconds_total Time transactions "
            "spent waiting for a replica.\n"
            "# TYPE mentat_semi_sync_wait_seconds_total counter\n"
            "mentat_semi_sync_wait_seconds_total ",
            static_cast<double>(wait_micros_.load()) / 1e6,
            "\n"
            "# HELP mentat_semi_sync_acked_basis_tx The highest basis a "
            "replica acknowledged, per database.\n"
            "# TYPE mentat_semi_sync_acked_basis_tx gauge\n");
  absl::MutexLock lock(&mu_);
  for (const auto& [name, db] : dbs_) {
    StrAppend(&out, "mentat_semi_sync_acked_basis_tx{database=\"", name, "\"} ",
              db.acked, "\n");
  }
  return out;
}

}  // namespace mentat::server
