#ifndef MENTAT_CLIENT_QUEUE_LEASE_H_
#define MENTAT_CLIENT_QUEUE_LEASE_H_

// Completion queues a thread keeps for its polled calls (ClientOptions::
// poll_us), one per call in progress: a call made inside another's
// callback (a query inside a stream's rows) gets a queue of its own, so
// each call sees its own events only. A call gives its queue back once it
// has taken every event it caused.

#include <grpcpp/grpcpp.h>

#include <memory>
#include <vector>

namespace mentat::client {

// Not thread-safe, nor shared between threads: a lease belongs to the
// thread that made it.
class QueueLease {
 public:
  QueueLease() {
    std::vector<std::unique_ptr<grpc::CompletionQueue>>& free = Free();
    if (free.empty()) {
      queue_ = std::make_unique<grpc::CompletionQueue>();
    } else {
      queue_ = std::move(free.back());
      free.pop_back();
    }
  }
  ~QueueLease() { Free().push_back(std::move(queue_)); }
  QueueLease(const QueueLease&) = delete;
  QueueLease& operator=(const QueueLease&) = delete;

  grpc::CompletionQueue* get() { return queue_.get(); }

 private:
  // Shut down and drained when the thread ends.
  struct Queues {
    std::vector<std::unique_ptr<grpc::CompletionQueue>> free;
    ~Queues() {
      for (auto& q : free) {
        q->Shutdown();
        void* tag = nullptr;
        bool ok = false;
        while (q->Next(&tag, &ok)) {
        }
      }
    }
  };
  static std::vector<std::unique_ptr<grpc::CompletionQueue>>& Free() {
    thread_local Queues queues;
    return queues.free;
  }

  std::unique_ptr<grpc::CompletionQueue> queue_;
};

}  // namespace mentat::client

#endif  // MENTAT_CLIENT_QUEUE_LEASE_H_
