#include "stream_reactor.h"

#include "call.h"

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
  if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
}

absl::Status StreamReactor::PushBlocking(grpc::ByteBuffer message) {
  grpc::ByteBuffer* to_write = nullptr;
  {
    absl::MutexLock lock(&mu_);
    while (queue_.size() >= kMaxQueued && !broken_ && !cancelled()) {
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
    if (broken_ || cancelled() || finished_) {
      return absl::CancelledError("the client went away");
    }
    queue_.push_back(std::move(message));
    if (!writing_) {
      writing_ = true;
      to_write = &queue_.front();
    }
  }
  if (to_write != nullptr) StartWrite(to_write);
  return absl::OkStatus();
}

void StreamReactor::Push(grpc::ByteBuffer message, bool last) {
  grpc::ByteBuffer* to_write = nullptr;
  bool finish = false;
  absl::Status final_status;
  {
    absl::MutexLock lock(&mu_);
    if (finished_ || done_requested_) return;
    if (last) {
      done_requested_ = true;
      final_ = absl::OkStatus();
    }
    if (broken_) {
      // Nobody will read it; end the stream if this was the last word.
      MaybeFinishLocked(&finish);
      final_status = final_;
    } else {
      queue_.push_back(std::move(message));
      if (!writing_) {
        writing_ = true;
        to_write = &queue_.front();
      }
    }
  }
  if (to_write != nullptr) StartWrite(to_write);
  if (finish) Finish(ToGrpcStatus(final_status));
}

void StreamReactor::MaybeFinishLocked(bool* finish) {
  *finish = false;
  if (finished_ || !done_requested_) return;
  if (writing_ && !broken_) return;
  if (!queue_.empty() && !broken_) return;
  finished_ = true;
  *finish = true;
}

void StreamReactor::Done(const absl::Status& status) {
  bool finish = false;
  absl::Status final_status;
  {
    absl::MutexLock lock(&mu_);
    if (done_requested_) return;
    done_requested_ = true;
    final_ = status;
    MaybeFinishLocked(&finish);
    final_status = final_;
  }
  if (finish) Finish(ToGrpcStatus(final_status));
}

void StreamReactor::OnWriteDone(bool ok) {
  grpc::ByteBuffer* next = nullptr;
  bool finish = false;
  bool room = false;
  absl::Status final_status;
  {
    absl::MutexLock lock(&mu_);
    if (!queue_.empty()) queue_.pop_front();
    if (!ok) {
      broken_ = true;
      cancelled_.store(true, std::memory_order_release);
    }
    if (ok && !queue_.empty()) {
      next = &queue_.front();
    } else {
      writing_ = false;
      // A broken stream also wakes the producer, which then sees
      // cancelled() and ends.
      room = !done_requested_;
    }
    MaybeFinishLocked(&finish);
    final_status = final_;
    room_.SignalAll();
  }
  if (next != nullptr) StartWrite(next);
  if (finish) Finish(ToGrpcStatus(final_status));
  if (room) OnRoom();
}

void StreamReactor::OnCancel() {
  cancelled_.store(true, std::memory_order_release);
  {
    absl::MutexLock lock(&mu_);
    room_.SignalAll();
  }
  OnCancelled();
}

void StreamReactor::OnDone() {
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
  Unref();
}

}  // namespace mentat::server
