// Client's unary calls that do not wait for their answer (TransactAsync,
// PingAsync, QueryFirstAsync), over gRPC's callback API: the answer arrives on
// one of gRPC's threads, so the caller holds no thread per call in flight.

#include <grpcpp/grpcpp.h>
#include <grpcpp/support/client_callback.h>

#include <string>
#include <type_traits>
#include <utility>
#include <variant>

#include "absl/synchronization/mutex.h"
#include "mentat/client/client.h"
#include "response_parser.h"

namespace mentat::client {

// One call in flight: what gRPC writes into, and what a second attempt at
// a named primary needs (a ClientContext serves one call only).
//
// A reactor rather than a plain callback: gRPC calls OnDone after it has
// let go of the call, so once every OnDone has returned the Client may go
// (~Client waits for that). A plain callback runs before gRPC's last use
// of the call, and a Client destroyed between the two took the process's
// callback queue down under it (an abort seen in client_async_test).
template <typename Response>
struct Client::PendingUnary : grpc::ClientUnaryReactor {
  void OnDone(const grpc::Status& status) override {
    Client* c = client;
    c->FinishUnary(std::unique_ptr<PendingUnary>(this), status);
    c->AsyncCallEnded();
  }

  Client* client = nullptr;
  const char* method = nullptr;
  CallOptions call;
  Done<Response> done;
  grpc::ClientContext context;
  grpc::ByteBuffer raw;
  grpc::Channel* channel = nullptr;
  // A write's first attempt over several nodes: the node it went to and
  // its request, to send it once more to a primary the node names.
  std::string address;
  std::unique_ptr<google::protobuf::Message> request_copy;
};

template <typename Response>
void Client::UnaryAsync(const char* method,
                        const google::protobuf::Message& request, Route route,
                        Done<Response> done, const CallOptions& call) {
  auto pending = std::make_unique<PendingUnary<Response>>();
  pending->method = method;
  pending->call = call;
  pending->done = std::move(done);
  pending->channel = channel_.get();
  if (!single_node_) {
    size_t count;
    {
      absl::MutexLock lock(&mu_);
      count = nodes_.size();
    }
    if (count > 1 && route == Route::kWrite) {
      const Node node = PrimaryNode();
      pending->channel = node.channel.get();
      pending->address = node.address;
      pending->request_copy.reset(request.New());
      pending->request_copy->CopyFrom(request);
    } else if (count > 1) {
      pending->channel = ReadChannel();
    }
  }
  StartUnary(std::move(pending), request);
}

template <typename Response>
void Client::StartUnary(std::unique_ptr<PendingUnary<Response>> pending,
                        const google::protobuf::Message& request) {
  {
    absl::MutexLock lock(&async_mu_);
    async_calls_++;
  }
  PendingUnary<Response>* p = pending.release();  // OnDone takes it back
  p->client = this;
  Prepare(&p->context, p->call);
  if (p->call.canceller != nullptr) p->call.canceller->Attach(&p->context);
  grpc::internal::ClientCallbackUnaryFactory::Create<google::protobuf::Message,
                                                     grpc::ByteBuffer>(
      p->channel,
      grpc::internal::RpcMethod(p->method,
                                grpc::internal::RpcMethod::NORMAL_RPC),
      &p->context, &request, &p->raw, p);
  // The request is serialized here (as the blocking call's is), so it
  // need not outlive this call.
  p->StartCall();
}

void Client::AsyncCallEnded() {
  absl::MutexLock lock(&async_mu_);
  async_calls_--;
}

Client::~Client() {
  absl::MutexLock lock(&async_mu_);
  auto ended = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(async_mu_) {
    return async_calls_ == 0;
  };
  async_mu_.Await(absl::Condition(&ended));
}

template <typename Response>
void Client::FinishUnary(std::unique_ptr<PendingUnary<Response>> q,
                         const grpc::Status& status) {
  if (q->call.canceller != nullptr) q->call.canceller->Detach(&q->context);
  absl::StatusOr<Response> answer;
  // A QueryFirst reply is read in place from the bytes gRPC received: the
  // batch and what it views live until `done` returns. Other replies need
  // none of it.
  struct BatchReply {
    QueryBatch batch;
    grpc::Slice slice;
    std::string scratch;
  };
  constexpr bool kBatch = std::is_same_v<Response, const QueryBatch*>;
  std::conditional_t<kBatch, BatchReply, std::monostate> reply;
  if (!status.ok()) {
    answer = FromGrpc(status);
  } else if constexpr (kBatch) {
    absl::Status decoded =
        DecodeResponse(q->raw, &reply.slice, &reply.scratch, &reply.batch);
    if (decoded.ok()) {
      answer = &reply.batch;
    } else {
      answer = decoded;
    }
  } else {
    Response response;
    absl::Status parsed = ParseAnswer(&q->raw, &response);
    if (parsed.ok()) {
      answer = std::move(response);
    } else {
      answer = parsed;
    }
  }
  const bool cancelled =
      q->call.canceller != nullptr && q->call.canceller->cancelled();
  if (!answer.ok() && q->request_copy != nullptr && !cancelled) {
    const std::string named = NamedPrimary(answer.status());
    if (!named.empty() && named != q->address) {
      // The refusal wrote nothing: the write goes to the node it names,
      // once (as Transact's does).
      auto again = std::make_unique<PendingUnary<Response>>();
      again->method = q->method;
      again->call = q->call;
      again->done = std::move(q->done);
      again->channel = SetPrimary(named);
      StartUnary(std::move(again), *q->request_copy);
      return;
    }
    if (answer.status().code() == absl::StatusCode::kUnavailable) {
      PrimaryFailed(q->address);
    }
  }
  q->done(std::move(answer));
}

void Client::TransactAsync(const v1::TransactRequest& request,
                           Done<v1::TransactResponse> done,
                           const CallOptions& call) {
  UnaryAsync<v1::TransactResponse>("/mentat.v1.Mentat/Transact", request,
                                   Route::kWrite, std::move(done), call);
}

void Client::QueryFirstAsync(const v1::QueryRequest& request,
                             Done<const QueryBatch*> done,
                             const CallOptions& call) {
  UnaryAsync<const QueryBatch*>("/mentat.v1.Mentat/QueryFirst", request,
                                Route::kRead, std::move(done), call);
}

void Client::PingAsync(Done<v1::PingResponse> done, const CallOptions& call) {
  v1::PingRequest request;
  UnaryAsync<v1::PingResponse>("/mentat.v1.Mentat/Ping", request, Route::kRead,
                               std::move(done), call);
}

}  // namespace mentat::client
