#ifndef MENTAT_SERVER_STREAM_REACTOR_H_
#define MENTAT_SERVER_STREAM_REACTOR_H_

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <deque>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "metrics.h"
#include "service_context.h"

namespace mentat::server {

// A server stream that sends what producers hand it, one message per
// OnWriteDone, and holds at most a few messages: gRPC's flow control
// reaches the producer, so a slow client slows the producer down instead of
// making the server buffer the result.
//
// Two kinds of producers use it:
//  - blocking ones (a query running on a reader thread) call PushBlocking,
//    which parks while the queue is full;
//  - batch ones (Datoms, TxRange, Subscribe) produce one message per task
//    and override OnRoom, which runs when the queue has drained, to
//    schedule the next.
// Either ends the stream with Done(status) once; the reactor finishes after
// the queued messages are written.
//
// Lifetime: reference counted; gRPC holds one reference until OnDone, and
// every task that may touch the reactor holds one (Ref/Unref). Thread-safe.
class StreamReactor : public grpc::ServerWriteReactor<grpc::ByteBuffer> {
 public:
  StreamReactor(ServiceContext& sc, Method method,
                grpc::CallbackServerContext* ctx);

  // Queues `message`; parks while `max_queued` messages wait. Cancelled
  // (the client went away) or DeadlineExceeded (the call's deadline passed
  // while parked) when the message cannot be sent.
  [[nodiscard]] absl::Status PushBlocking(grpc::ByteBuffer message);
  // Queues `message` without waiting (batch producers send one at a time).
  // With `last`, the stream then ends with OK (as Done(OkStatus())).
  void Push(grpc::ByteBuffer message, bool last = false);
  // Ends the stream with `status` after the queued messages. Only the
  // first call counts.
  void Done(const absl::Status& status);

  // Set when the client cancelled or the stream broke; the query engine
  // polls it.
  const std::atomic<bool>* cancel_flag() const { return &cancelled_; }
  bool cancelled() const { return cancelled_.load(std::memory_order_acquire); }

  void Ref() { refs_.fetch_add(1, std::memory_order_relaxed); }
  void Unref();

  ServiceContext& sc() const { return sc_; }
  grpc::CallbackServerContext* context() const { return ctx_; }
  std::chrono::steady_clock::time_point deadline() const { return deadline_; }

 protected:
  ~StreamReactor() override;

  // Runs (on a gRPC thread, without locks held) when the queue has drained
  // and the stream is still open. Batch producers schedule their next
  // message here.
  virtual void OnRoom() {}
  // Runs when the client cancels (before OnDone).
  virtual void OnCancelled() {}
  // Runs in OnDone, before the reactor's reference is dropped.
  virtual void OnStreamDone() {}

  static constexpr size_t kMaxQueued = 2;

 private:
  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;
  struct Action;
  // Decides, under mu_, what to do next; Act does it outside the lock.
  Action DecideLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Act(const Action& action);
  // The address ThreadSanitizer's hand-over edges use (tsan_handoff.h).
  const void* handoff() const {
    return static_cast<const grpc::ServerWriteReactor<grpc::ByteBuffer>*>(this);
  }

  ServiceContext& sc_;
  const Method method_;
  grpc::CallbackServerContext* const ctx_;
  const std::chrono::steady_clock::time_point start_;
  const std::chrono::steady_clock::time_point deadline_;
  std::atomic<bool> cancelled_{false};
  std::atomic<int> refs_{1};

  absl::Mutex mu_;
  absl::CondVar room_;
  std::deque<grpc::ByteBuffer> queue_ ABSL_GUARDED_BY(mu_);
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool broken_ ABSL_GUARDED_BY(mu_) = false;
  bool done_requested_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status final_ ABSL_GUARDED_BY(mu_);
};

}  // namespace mentat::server

#endif  // MENTAT_SERVER_STREAM_REACTOR_H_
