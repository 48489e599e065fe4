#include "stream_reactor.h"

#include <optional>

#include "call.h"
#include "reader_pool.h"
#include "tsan_handoff.h"

namespace mentat::server {

StreamReactor::StreamReactor(ServiceContext& sc, Method method,
                             grpc::CallbackServerContext* ctx)
    : sc_(sc),
      method_(method),
      ctx_(ctx),
      start_(std::chrono::steady_clock::now()),
      deadline_(SteadyDeadline(ctx)) {
  sc_.metrics.open_streams.fetch_add(1, std::memory_order_relaxed);
  sc_.active_calls.fetch_add(1, std::memory_order_relaxed);
}

StreamReactor::~StreamReactor() = default;

void StreamReactor::Unref() {
  if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    // Everything gRPC's callbacks did happened before this delete.
    HandOffAcquire(handoff());
    delete this;
  }
}

// What to do next, decided under mu_ and done outside it (gRPC may run a
// reaction inline).
struct StreamReactor::Action {
  enum Kind { kNone, kWrite, kWriteAndFinish, kFinish } kind = kNone;
  grpc::ByteBuffer* message = nullptr;
  absl::Status status;
};

StreamReactor::Action StreamReactor::DecideLocked() {
  Action a;
  if (finished_ || writing_) return a;
  if (broken_) {
    if (done_requested_) {
      finished_ = true;
      a.kind = Action::kFinish;
      a.status = final_;
    }
    return a;
  }
  if (!queue_.empty()) {
    writing_ = true;
    a.message = &queue_.front();
    if (done_requested_ && queue_.size() == 1 && final_.ok()) {
      // The last message and the status in one go: saves a round of
      // OnWriteDone, which is most of a small result's cost.
      finished_ = true;
      a.kind = Action::kWriteAndFinish;
      a.status = final_;
    } else {
      a.kind = Action::kWrite;
    }
    return a;
  }
  if (done_requested_) {
    finished_ = true;
    a.kind = Action::kFinish;
    a.status = final_;
  }
  return a;
}

void StreamReactor::Act(const Action& a) {
  if (a.kind == Action::kNone) return;
  // The operation's completion runs on a gRPC thread.
  HandOffRelease(handoff());
  switch (a.kind) {
    case Action::kNone:
      return;
    case Action::kWrite:
      StartWrite(a.message);
      return;
    case Action::kWriteAndFinish:
      StartWriteAndFinish(a.message, grpc::WriteOptions(),
                          ToGrpcStatus(a.status));
      return;
    case Action::kFinish:
      Finish(ToGrpcStatus(a.status));
      return;
  }
}

absl::Status StreamReactor::PushBlocking(grpc::ByteBuffer message) {
  Action action;
  {
    absl::MutexLock lock(&mu_);
    // While it waits for the client, the reader thread counts as parked
    // (the pool keeps others running).
    std::optional<ReaderPool::Parked> parked;
    while (queue_.size() >= kMaxQueued && !broken_ && !cancelled()) {
      if (!parked) parked.emplace();
      if (deadline_ == std::chrono::steady_clock::time_point::max()) {
        room_.Wait(&mu_);
      } else {
        const auto left = deadline_ - std::chrono::steady_clock::now();
        if (left <= std::chrono::steady_clock::duration::zero()) {
          return absl::DeadlineExceededError(
              "the call's deadline passed while the client was reading");
        }
        room_.WaitWithTimeout(&mu_, absl::FromChrono(left));
      }
    }
    if (broken_ || cancelled() || finished_ || done_requested_) {
      return absl::CancelledError("the client went away");
    }
    queue_.push_back(std::move(message));
    action = DecideLocked();
  }
  Act(action);
  return absl::OkStatus();
}

void StreamReactor::Push(grpc::ByteBuffer message, bool last) {
  Action action;
  {
    absl::MutexLock lock(&mu_);
    if (finished_ || done_requested_) return;
    if (last) {
      done_requested_ = true;
      final_ = absl::OkStatus();
    }
    // A broken stream drops the message; nobody would read it.
    if (!broken_) queue_.push_back(std::move(message));
    action = DecideLocked();
  }
  Act(action);
}

void StreamReactor::Done(const absl::Status& status) {
  Action action;
  {
    absl::MutexLock lock(&mu_);
    if (done_requested_) return;
    done_requested_ = true;
    final_ = status;
    action = DecideLocked();
  }
  Act(action);
}

void StreamReactor::OnWriteDone(bool ok) {
  HandOffAcquire(handoff());
  Action action;
  bool room = false;
  {
    absl::MutexLock lock(&mu_);
    if (!queue_.empty()) queue_.pop_front();
    writing_ = false;
    if (!ok) {
      broken_ = true;
      cancelled_.store(true, std::memory_order_release);
    }
    action = DecideLocked();
    // A broken stream also wakes a batch producer, which then sees
    // cancelled() and ends.
    room = !done_requested_ && !writing_;
    room_.SignalAll();
  }
  Act(action);
  if (room) OnRoom();
  HandOffRelease(handoff());
}

void StreamReactor::OnCancel() {
  HandOffAcquire(handoff());
  cancelled_.store(true, std::memory_order_release);
  {
    absl::MutexLock lock(&mu_);
    room_.SignalAll();
  }
  OnCancelled();
  HandOffRelease(handoff());
}

void StreamReactor::OnDone() {
  HandOffAcquire(handoff());
  absl::Status final_status;
  {
    absl::MutexLock lock(&mu_);
    final_status = final_;
    if (!finished_) final_status = absl::CancelledError("stream broken");
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_)
          .count();
  sc_.metrics.RecordRpc(method_, static_cast<int>(final_status.code()),
                        seconds);
  if (!final_status.ok()) LogCallError(method_, final_status, "");
  sc_.metrics.open_streams.fetch_sub(1, std::memory_order_relaxed);
  OnStreamDone();
  sc_.active_calls.fetch_sub(1, std::memory_order_release);
  HandOffRelease(handoff());
  Unref();
}

}  // namespace mentat::server
