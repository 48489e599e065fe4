#ifndef MENTAT_SERVER_CALL_H_
#define MENTAT_SERVER_CALL_H_

// What every RPC handler does at its start and end: check the token, parse
// the request from its raw bytes, map statuses, record metrics, log.
//
// The service takes its requests as raw ByteBuffers and parses them itself,
// so that a request gRPC's own parser would refuse (a string field holding
// invalid UTF-8, say) gets INVALID_ARGUMENT naming the field instead of the
// INTERNAL gRPC answers for undecodable messages.

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "google/protobuf/message.h"
#include "metrics.h"
#include "service_context.h"

namespace mentat::server {

// The most of a status message that reaches a client or a log line. The
// message travels as metadata (grpc-message), which clients refuse past
// 8 KiB by default; messages quote values as excerpts already, so this
// only stops a message that quotes something unforeseen.
inline constexpr size_t kMaxStatusMessageBytes = 2048;

// status.message() cut to kMaxStatusMessageBytes (Excerpt).
std::string BoundedStatusMessage(const absl::Status& status);

// absl and gRPC share their codes; the message carries over, bounded
// (BoundedStatusMessage).
grpc::Status ToGrpcStatus(const absl::Status& status);

// OK if the call may proceed: the bearer token matches (when one is
// configured) and the server is not shutting down. UNAUTHENTICATED or
// UNAVAILABLE otherwise.
[[nodiscard]] absl::Status Admit(const ServiceContext& sc,
                                 const grpc::ServerContextBase* ctx);

// Parses a request; InvalidArgument naming the message (and, for invalid
// UTF-8, the field) if it does not parse.
[[nodiscard]] absl::Status ParseRequest(const grpc::ByteBuffer& buffer,
                                        google::protobuf::Message* message);

// Serializes a response into `buffer`.
[[nodiscard]] absl::Status SerializeResponse(
    const google::protobuf::Message& message, grpc::ByteBuffer* buffer);

// The call's deadline on the steady clock (time_point::max() if none).
std::chrono::steady_clock::time_point SteadyDeadline(
    const grpc::ServerContextBase* ctx);

// Logs a failed call: server faults as errors, user errors at debug.
void LogCallError(Method method, const absl::Status& status,
                  std::string_view detail);

// How a unary call's answer goes back to gRPC: through a callback
// reactor (the callback API) or an async responder (async_unary.h).
// Complete is called exactly once, from any thread; the object lives at
// least until then.
class UnaryCompletion {
 public:
  virtual ~UnaryCompletion() = default;
  // Sends `response` (when `status` is OK) and the status.
  virtual void Complete(const grpc::Status& status,
                        grpc::ByteBuffer* response) = 0;
  // Set when the client cancels (or the deadline passes).
  virtual const std::atomic<bool>* cancelled() const = 0;
};

// A unary call in progress: finish it exactly once with Finish, from any
// thread. Copyable (pointers only); the gRPC objects live until Finish.
class UnaryCall {
 public:
  // A callback-API call: answered through a reactor made here.
  UnaryCall(ServiceContext& sc, Method method, grpc::CallbackServerContext* ctx,
            grpc::ByteBuffer* response);
  // An async-API call (async_unary.h), answered through `completion`.
  UnaryCall(ServiceContext& sc, Method method, grpc::ServerContextBase* ctx,
            UnaryCompletion* completion, grpc::ByteBuffer* response);

  // The callback API's reactor (nullptr for an async call).
  grpc::ServerUnaryReactor* reactor() const { return reactor_; }
  grpc::ServerContextBase* context() const { return ctx_; }
  ServiceContext& sc() const { return *sc_; }
  // When the call began (its time limits count from here).
  std::chrono::steady_clock::time_point start() const { return start_; }

  // Admit + ParseRequest; on error the caller Finishes with it.
  [[nodiscard]] absl::Status Begin(const grpc::ByteBuffer* request,
                                   google::protobuf::Message* message) const;

  // Serializes `response` (when `status` is OK), records the call's
  // metrics, logs errors, finishes the reactor.
  void Finish(const absl::Status& status,
              const google::protobuf::Message* response = nullptr) const;

  // Finishes with OK and `response`, already serialized (the wire
  // encoders of wire_encoding.h); otherwise as Finish.
  void FinishSerialized(grpc::ByteBuffer response) const;

  // OK unless the client cancelled or the deadline passed (then
  // Cancelled / DeadlineExceeded), for work that was queued.
  [[nodiscard]] absl::Status StillWanted() const;

  // Set when the client cancels, for work that polls (the query engine's
  // QueryOptions::cancelled). Valid until Finish.
  const std::atomic<bool>* cancel_flag() const;

 private:
  ServiceContext* sc_;
  Method method_;
  grpc::ServerContextBase* ctx_;
  UnaryCompletion* completion_;
  grpc::ServerUnaryReactor* reactor_;
  grpc::ByteBuffer* response_;
  std::chrono::steady_clock::time_point start_;
};

// Shortcut for handlers: a reactor already finished with `status`.
grpc::ServerUnaryReactor* FinishNow(const UnaryCall& call,
                                    const absl::Status& status);

}  // namespace mentat::server

#endif  // MENTAT_SERVER_CALL_H_
