#include "basis_wait.h"

#include <algorithm>

#include "mentat/base/str_cat.h"
#include "mentat/storage/entity_ids.h"

namespace mentat::server {

// One wait: listens to its database's commits and closing (on the
// transactor thread, where it only pokes the checking thread).
struct BasisWaiters::Waiter : CommitListener {
  BasisWaiters* owner = nullptr;
  std::shared_ptr<Database> database;
  storage::EntityId min_tx = 0;
  std::chrono::steady_clock::time_point deadline;
  Then then;
  absl::Mutex mu;
  absl::Status closed ABSL_GUARDED_BY(mu);

  void OnCommit() override { owner->Poke(); }
  void OnClosed(const absl::Status& why) override {
    {
      absl::MutexLock lock(&mu);
      if (closed.ok()) closed = why;
    }
    owner->Poke();
  }
};

BasisWaiters::BasisWaiters(ReaderPool& readers,
                           std::chrono::milliseconds max_wait)
    : readers_(readers), max_wait_(max_wait) {
  thread_ = std::thread([this] { Run(); });
}

BasisWaiters::~BasisWaiters() { Stop(); }

void BasisWaiters::RunAt(std::shared_ptr<Database> database, int64_t min_tx,
                         std::chrono::steady_clock::time_point deadline,
                         Then then) {
  if (min_tx == 0) {
    then(absl::OkStatus());
    return;
  }
  auto resolved = storage::Db::ResolveT(min_tx);
  if (!resolved.ok()) {
    then(absl::InvalidArgumentError(
        StrCat("min_basis_tx: ", resolved.status().message())));
    return;
  }
  if (database->Latest()->basis_tx() >= *resolved) {
    then(absl::OkStatus());
    return;
  }
  auto w = std::make_unique<Waiter>();
  w->owner = this;
  w->database = database;
  w->min_tx = *resolved;
  const auto now = std::chrono::steady_clock::now();
  // The answer must reach the client before its own deadline does (it
  // would see DEADLINE_EXCEEDED instead of the basis this node has): give
  // up a tenth of the time left early, at most 100 ms.
  if (deadline != std::chrono::steady_clock::time_point::max()) {
    deadline -= std::min<std::chrono::steady_clock::duration>(
        std::chrono::milliseconds(100), (deadline - now) / 10);
  }
  w->deadline = std::min(deadline, now + max_wait_);
  w->then = std::move(then);
  // Listen first, then check: a commit in between wakes the thread.
  database->AddListener(w.get());
  // A database deleted or set aside before the listener was added told
  // its listeners already: this wait ends at once, with the reason (a
  // wait that went on would keep a set-aside store open, and its copy
  // could not be opened again until the wait's deadline).
  if (absl::Status live = database->CheckLive(); !live.ok()) {
    absl::MutexLock wl(&w->mu);
    w->closed = std::move(live);
  }
  {
    absl::MutexLock lock(&mu_);
    if (!stopping_) {
      waiters_.push_back(std::move(w));
      poked_ = true;
    }
  }
  if (w != nullptr) {  // stopping: never queued
    database->RemoveListener(w.get());
    w->then(absl::UnavailableError("the server is shutting down"));
    return;
  }
  cv_.Signal();
}

void BasisWaiters::Poke() {
  {
    absl::MutexLock lock(&mu_);
    poked_ = true;
  }
  cv_.Signal();
}

int64_t BasisWaiters::waiting() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int64_t>(waiters_.size());
}

void BasisWaiters::Stop() {
  // stop_mu_ makes a second Stop (the destructor's, or a concurrent one)
  // wait for the first one's join instead of joining too.
  absl::MutexLock stop(&stop_mu_);
  if (!thread_.joinable()) return;  // stopped before
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  cv_.Signal();
  thread_.join();
}

void BasisWaiters::Run() {
  for (;;) {
    std::vector<std::pair<std::unique_ptr<Waiter>, absl::Status>> done;
    bool exit = false;
    {
      absl::MutexLock lock(&mu_);
      auto nearest = std::chrono::steady_clock::time_point::max();
      for (const auto& w : waiters_) nearest = std::min(nearest, w->deadline);
      while (!poked_ && !stopping_) {
        if (nearest == std::chrono::steady_clock::time_point::max()) {
          cv_.Wait(&mu_);
          continue;
        }
        const auto left = nearest - std::chrono::steady_clock::now();
        if (left <= std::chrono::steady_clock::duration::zero()) break;
        cv_.WaitWithTimeout(&mu_, absl::FromChrono(left));
      }
      poked_ = false;
      exit = stopping_;
      const auto now = std::chrono::steady_clock::now();
      for (auto it = waiters_.begin(); it != waiters_.end();) {
        Waiter& w = **it;
        absl::Status closed;
        {
          absl::MutexLock wl(&w.mu);
          closed = w.closed;
        }
        const storage::EntityId has = w.database->Latest()->basis_tx();
        absl::Status outcome;
        bool finished = true;
        if (has >= w.min_tx) {
          outcome = absl::OkStatus();
        } else if (!closed.ok()) {
          outcome = closed;
        } else if (stopping_) {
          outcome = absl::UnavailableError("the server is shutting down");
        } else if (now >= w.deadline) {
          outcome = absl::UnavailableError(StrCat(
              "database ", w.database->name(), " has basis ", has, " (t ",
              has & storage::kCounterMask, ") and did not reach min_basis_tx ",
              w.min_tx, " (t ", w.min_tx & storage::kCounterMask,
              ") before the call's deadline (or --max-basis-wait-ms): this "
              "node is behind its primary; retry, or read at the primary"));
        } else {
          finished = false;
        }
        if (finished) {
          done.emplace_back(std::move(*it), std::move(outcome));
          it = waiters_.erase(it);
        } else {
          ++it;
        }
      }
    }
    for (auto& [w, status] : done) {
      w->database->RemoveListener(w.get());
      std::shared_ptr<Waiter> shared(std::move(w));
      readers_.Post(
          [shared, status = std::move(status)] { shared->then(status); });
    }
    if (exit) {
      absl::MutexLock lock(&mu_);
      if (waiters_.empty()) return;
    }
  }
}

}  // namespace mentat::server
