#include "async_unary.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>

#include "call.h"
#include "tsan_handoff.h"

namespace mentat::server {

namespace {

// Calls of each method a queue keeps asked for: gRPC holds a call that
// arrives while none is asked for until one is, so this is only how many
// may start between two turns of the queue's thread.
constexpr int kAskedPerMethod = 8;

// An async method: how to ask gRPC for its next call, and its handler.
struct AsyncMethod {
  using Request = void (RawMentatService::*)(
      grpc::ServerContext*, grpc::ByteBuffer*,
      grpc::ServerAsyncResponseWriter<grpc::ByteBuffer>*,
      grpc::CompletionQueue*, grpc::ServerCompletionQueue*, void*);
  Request request;
  Method method;
  void (*serve)(const UnaryCall& call, const Buf* req);
};

// Every method of AsyncMethods (service.h): one left out would have its
// calls held by gRPC forever, as none is ever asked for.
const AsyncMethod kAsyncMethods[] = {
    {&RawMentatService::RequestPing, Method::kPing, &ServePing},
    {&RawMentatService::RequestQueryFirst, Method::kQueryFirst,
     &ServeQueryFirst},
    {&RawMentatService::RequestPull, Method::kPull, &ServePull},
    {&RawMentatService::RequestTransact, Method::kTransact, &ServeTransact},
    {&RawMentatService::RequestPullMany, Method::kPullMany, &ServePullMany},
    {&RawMentatService::RequestSchema, Method::kSchema, &ServeSchema},
    {&RawMentatService::RequestStats, Method::kStats, &ServeStats},
    {&RawMentatService::RequestExplain, Method::kExplain, &ServeExplain},
    {&RawMentatService::RequestCreateDatabase, Method::kCreateDatabase,
     &ServeCreateDatabase},
    {&RawMentatService::RequestListDatabases, Method::kListDatabases,
     &ServeListDatabases},
    {&RawMentatService::RequestDeleteDatabase, Method::kDeleteDatabase,
     &ServeDeleteDatabase},
    {&RawMentatService::RequestBackup, Method::kBackup, &ServeBackup},
};

// One async call, from being asked for to gRPC's last event about it.
// After its request event it holds two references, one for each event
// still to come (its answer sent, the call done); the last one deletes it.
class AsyncCall final : public UnaryCompletion {
 public:
  enum class Event { kRequest, kFinish, kDone };
  // What a completion-queue event points at.
  struct Tag {
    AsyncCall* call;
    Event event;
  };

  // Asks gRPC for the next call of `method` on `cq`.
  static void Ask(ServiceContext& sc, RawMentatService* service,
                  grpc::ServerCompletionQueue* cq, const AsyncMethod* method) {
    auto* call = new AsyncCall(sc, service, cq, method);
    call->ctx_.AsyncNotifyWhenDone(&call->done_tag_);
    HandOffRelease(call);
    (service->*(method->request))(&call->ctx_, &call->request_,
                                  &call->responder_, cq, cq,
                                  &call->request_tag_);
  }

  // On the queue's thread.
  void OnEvent(Event event, bool ok) {
    HandOffAcquire(this);
    switch (event) {
      case Event::kRequest:
        // Not ok: the server shut down before a call came; the done event
        // never comes for a call that never started.
        if (!ok) {
          delete this;
          return;
        }
        Ask(sc_, service_, cq_, method_);
        sc_.active_calls.fetch_add(1, std::memory_order_relaxed);
        Serve();
        return;
      case Event::kFinish:
        Release();
        return;
      case Event::kDone:
        if (ctx_.IsCancelled())
          cancelled_.store(true, std::memory_order_release);
        Release();
        return;
    }
  }

  void Complete(const grpc::Status& status,
                grpc::ByteBuffer* response) override {
    // From any thread; the finish event reaches the queue's thread.
    HandOffRelease(this);
    if (status.ok()) {
      responder_.Finish(*response, status, &finish_tag_);
    } else {
      responder_.FinishWithError(status, &finish_tag_);
    }
  }

  const std::atomic<bool>* cancelled() const override { return &cancelled_; }

 private:
  AsyncCall(ServiceContext& sc, RawMentatService* service,
            grpc::ServerCompletionQueue* cq, const AsyncMethod* method)
      : sc_(sc), service_(service), cq_(cq), method_(method) {}

  void Serve() {
    method_->serve(UnaryCall(sc_, method_->method, &ctx_, this, &response_),
                   &request_);
  }

  void Release() {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      sc_.active_calls.fetch_sub(1, std::memory_order_release);
      delete this;
    }
  }

  ServiceContext& sc_;
  RawMentatService* const service_;
  grpc::ServerCompletionQueue* const cq_;
  const AsyncMethod* const method_;
  grpc::ServerContext ctx_;
  grpc::ByteBuffer request_;
  grpc::ByteBuffer response_;
  grpc::ServerAsyncResponseWriter<grpc::ByteBuffer> responder_{&ctx_};
  std::atomic<bool> cancelled_{false};
  std::atomic<int> refs_{2};
  Tag request_tag_{this, Event::kRequest};
  Tag finish_tag_{this, Event::kFinish};
  Tag done_tag_{this, Event::kDone};
};

// Handles `cq`'s events until it is shut down and empty. After each
// event it polls for `spin` without sleeping, then blocks: a client that
// calls back to back finds the thread awake (a sleeping vCPU takes tens of
// microseconds to wake), and an idle server sleeps after `spin`.
void Drain(grpc::ServerCompletionQueue* cq, std::chrono::microseconds spin) {
  using Queue = grpc::CompletionQueue;
  void* tag = nullptr;
  bool ok = false;
  for (;;) {
    Queue::NextStatus status = Queue::TIMEOUT;
    for (const auto until = std::chrono::steady_clock::now() + spin;
         status == Queue::TIMEOUT &&
         std::chrono::steady_clock::now() < until;) {
      // A deadline already past: one poll of the queue's sockets, no sleep.
      status = cq->AsyncNext(&tag, &ok, gpr_time_0(GPR_CLOCK_MONOTONIC));
      // A thread with work on this CPU (the transactor, a reader) runs
      // first: the poll is meant to keep an idle CPU awake, not to take a
      // busy one.
      if (status == Queue::TIMEOUT) sched_yield();
    }
    if (status == Queue::SHUTDOWN) return;
    if (status == Queue::TIMEOUT && !cq->Next(&tag, &ok)) return;
    auto* t = static_cast<AsyncCall::Tag*>(tag);
    t->call->OnEvent(t->event, ok);
  }
}

}  // namespace

AsyncUnaryServer::AsyncUnaryServer(ServiceContext& sc,
                                   RawMentatService* service,
                                   grpc::ServerBuilder& builder, int threads,
                                   int spin_us)
    : sc_(sc), service_(service), spin_us_(spin_us) {
  for (int i = 0; i < std::max(1, threads); ++i) {
    queues_.push_back(builder.AddCompletionQueue());
  }
}

AsyncUnaryServer::~AsyncUnaryServer() { Stop(); }

void AsyncUnaryServer::Start() {
  for (auto& queue : queues_) {
    for (const AsyncMethod& method : kAsyncMethods) {
      for (int i = 0; i < kAskedPerMethod; ++i) {
        AsyncCall::Ask(sc_, service_, queue.get(), &method);
      }
    }
  }
  for (auto& queue : queues_) {
    threads_.emplace_back(
        [cq = queue.get(), spin = std::chrono::microseconds(spin_us_)] {
          pthread_setname_np(pthread_self(), "mentat-unary");
          Drain(cq, spin);
        });
  }
}

void AsyncUnaryServer::Stop() {
  if (stopped_) return;
  stopped_ = true;
  for (auto& queue : queues_) queue->Shutdown();
  if (threads_.empty()) {
    // Never started (the gRPC server did not build): drain here.
    for (auto& queue : queues_) Drain(queue.get(), {});
  }
  for (std::thread& t : threads_) t.join();
  threads_.clear();
}

}  // namespace mentat::server
