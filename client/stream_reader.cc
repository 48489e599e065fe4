#include "stream_reader.h"

#include <grpcpp/impl/codegen/proto_utils.h>
#include <grpcpp/support/async_stream.h>
#include <grpcpp/support/sync_stream.h>

#include <utility>

#include "queue_lease.h"

namespace mentat::client {
namespace {

class BlockingStreamReader final : public StreamReader {
 public:
  explicit BlockingStreamReader(
      std::unique_ptr<grpc::ClientReader<grpc::ByteBuffer>> reader)
      : reader_(std::move(reader)) {}
  bool Read(grpc::ByteBuffer* raw) override { return reader_->Read(raw); }
  grpc::Status Finish() override { return reader_->Finish(); }

 private:
  std::unique_ptr<grpc::ClientReader<grpc::ByteBuffer>> reader_;
};

// gRPC's asynchronous reader on a queue of the calling thread's, polled
// for `poll` before each wait sleeps: on a busy 2-vCPU machine a sleeping
// thread's wake-up cost about as much as a whole small call.
class PolledStreamReader final : public StreamReader {
 public:
  PolledStreamReader(grpc::Channel* channel,
                     const grpc::internal::RpcMethod& method,
                     grpc::ClientContext* context,
                     const google::protobuf::Message& request,
                     std::chrono::microseconds poll)
      : poll_(poll) {
    // Allocated in the call's arena: the pointer's delete does nothing.
    reader_.reset(
        grpc::internal::ClientAsyncReaderFactory<grpc::ByteBuffer>::Create(
            channel, queue_.get(), method, context, request, /*start=*/true,
            &started_));
    outstanding_ = 1;
  }
  // The call's events must all be taken before its memory goes (each
  // event's completion runs code of the call's): a reader not finished
  // finishes here. Its context is cancelled first by whoever stopped
  // reading.
  ~PolledStreamReader() override {
    if (!finished_) Finish();
  }

  bool Read(grpc::ByteBuffer* raw) override {
    reader_->Read(raw, &read_);
    ++outstanding_;
    return Await(&read_);
  }

  grpc::Status Finish() override {
    finished_ = true;
    grpc::Status status;
    reader_->Finish(&status, &finish_);
    ++outstanding_;
    Await(&finish_);
    // The start's event, when it came last.
    while (outstanding_ > 0) Await(nullptr);
    return status;
  }

 private:
  // Takes this call's events until `want`'s, polling for `poll_` first;
  // returns its ok. Null: the next event.
  bool Await(const void* want) {
    const auto until = std::chrono::steady_clock::now() + poll_;
    for (;;) {
      const bool polling = std::chrono::steady_clock::now() < until;
      void* tag = nullptr;
      bool ok = false;
      const auto got = queue_.get()->AsyncNext(
          &tag, &ok,
          polling ? gpr_time_0(GPR_CLOCK_MONOTONIC)
                  : gpr_inf_future(GPR_CLOCK_MONOTONIC));
      if (got == grpc::CompletionQueue::TIMEOUT) continue;  // polled
      if (got == grpc::CompletionQueue::SHUTDOWN) {  // never while leased
        outstanding_ = 0;
        return false;
      }
      --outstanding_;
      if (want == nullptr || tag == want) return ok;
    }
  }

  QueueLease queue_;
  std::chrono::microseconds poll_;
  std::unique_ptr<grpc::ClientAsyncReader<grpc::ByteBuffer>> reader_;
  int outstanding_ = 0;  // operations whose events are still to come
  bool finished_ = false;
  // The operations' tags: their addresses.
  char started_ = 0, read_ = 0, finish_ = 0;
};

}  // namespace

std::unique_ptr<StreamReader> StartStreamReader(
    grpc::Channel* channel, const char* method, grpc::ClientContext* context,
    const google::protobuf::Message& request, std::chrono::microseconds poll) {
  const grpc::internal::RpcMethod rpc(
      method, grpc::internal::RpcMethod::SERVER_STREAMING);
  if (poll.count() > 0) {
    return std::make_unique<PolledStreamReader>(channel, rpc, context, request,
                                                poll);
  }
  return std::make_unique<BlockingStreamReader>(
      std::unique_ptr<grpc::ClientReader<grpc::ByteBuffer>>(
          grpc::internal::ClientReaderFactory<grpc::ByteBuffer>::Create(
              channel, rpc, context, request)));
}

}  // namespace mentat::client
