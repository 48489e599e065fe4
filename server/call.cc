#include "call.h"

#include <grpcpp/impl/codegen/proto_utils.h>
#include <grpcpp/support/proto_buffer_reader.h>
#include <spdlog/spdlog.h>

#include <mutex>

#include "google/protobuf/stubs/logging.h"
#include "mentat/base/excerpt.h"
#include "mentat/base/str_cat.h"
#include "tsan_handoff.h"

namespace mentat::server {

namespace {

// Protobuf reports why a parse failed (invalid UTF-8 in a named field)
// only through its log; keep the last such line per thread so the
// INVALID_ARGUMENT can say it.
thread_local std::string last_protobuf_error;

void CaptureProtobufLog(google::protobuf::LogLevel level, const char* filename,
                        int line, const std::string& message) {
  (void)filename;
  (void)line;
  if (level >= google::protobuf::LOGLEVEL_ERROR) {
    last_protobuf_error = message;
  }
  spdlog::debug("protobuf: {}", message);
}

void InstallProtobufLogCapture() {
  static std::once_flag once;
  std::call_once(once,
                 [] { google::protobuf::SetLogHandler(&CaptureProtobufLog); });
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  }
  return diff == 0;
}

}  // namespace

std::string BoundedStatusMessage(const absl::Status& status) {
  const absl::string_view m = status.message();
  return Excerpt(std::string_view(m.data(), m.size()), kMaxStatusMessageBytes);
}

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()),
                      BoundedStatusMessage(status));
}

absl::Status Admit(const ServiceContext& sc,
                   const grpc::ServerContextBase* ctx) {
  if (!sc.expected_authorization.empty()) {
    const auto& md = ctx->client_metadata();
    auto it = md.find("authorization");
    if (it == md.end()) {
      return absl::UnauthenticatedError(
          "this server requires \"authorization: Bearer <token>\" metadata");
    }
    std::string_view got(it->second.data(), it->second.size());
    if (!ConstantTimeEquals(got, sc.expected_authorization)) {
      return absl::UnauthenticatedError("wrong bearer token");
    }
  }
  if (sc.shutting_down.load(std::memory_order_acquire)) {
    return absl::UnavailableError("the server is shutting down");
  }
  return absl::OkStatus();
}

absl::Status ParseRequest(const grpc::ByteBuffer& buffer,
                          google::protobuf::Message* message) {
  InstallProtobufLogCapture();
  last_protobuf_error.clear();
  grpc::ProtoBufferReader reader(const_cast<grpc::ByteBuffer*>(&buffer));
  if (message->ParseFromZeroCopyStream(&reader)) return absl::OkStatus();
  std::string why = last_protobuf_error;
  if (why.empty()) why = "malformed protobuf encoding";
  return absl::InvalidArgumentError(
      StrCat("the request is not a valid ", message->GetTypeName(), ": ", why));
}

absl::Status SerializeResponse(const google::protobuf::Message& message,
                               grpc::ByteBuffer* buffer) {
  bool own = false;
  grpc::Status s =
      grpc::SerializationTraits<google::protobuf::Message>::Serialize(
          message, buffer, &own);
  if (!s.ok()) {
    return absl::InternalError(
        StrCat("serializing the response: ", s.error_message()));
  }
  return absl::OkStatus();
}

std::chrono::steady_clock::time_point SteadyDeadline(
    const grpc::ServerContextBase* ctx) {
  const auto deadline = ctx->deadline();
  if (deadline == std::chrono::system_clock::time_point::max() ||
      deadline.time_since_epoch().count() == 0) {
    return std::chrono::steady_clock::time_point::max();
  }
  const auto left = deadline - std::chrono::system_clock::now();
  // Far-future deadlines (years) mean "none"; avoid overflowing.
  if (left > std::chrono::hours(24 * 365)) {
    return std::chrono::steady_clock::time_point::max();
  }
  return std::chrono::steady_clock::now() +
         std::chrono::duration_cast<std::chrono::steady_clock::duration>(left);
}

void LogCallError(Method method, const absl::Status& status,
                  std::string_view detail) {
  const std::string message = BoundedStatusMessage(status);
  switch (status.code()) {
    case absl::StatusCode::kInternal:
    case absl::StatusCode::kDataLoss:
    case absl::StatusCode::kUnknown:
      // Server faults.
      spdlog::error("{} failed: {}: {}{}{}", MethodName(method),
                    absl::StatusCodeToString(status.code()), message,
                    detail.empty() ? "" : " ", detail);
      break;
    case absl::StatusCode::kCancelled:
    case absl::StatusCode::kDeadlineExceeded:
    case absl::StatusCode::kUnavailable:
      // The client's or the shutdown's doing; routine.
      spdlog::debug("{} ended: {}: {}", MethodName(method),
                    absl::StatusCodeToString(status.code()), message);
      break;
    default:
      // User errors: one line each, so an operator can see what clients
      // get wrong.
      spdlog::info("{} refused: {}: {}{}{}", MethodName(method),
                   absl::StatusCodeToString(status.code()), message,
                   detail.empty() ? "" : " ", detail);
      break;
  }
}

namespace {

// A unary reactor that counts itself in ServiceContext::active_calls until
// gRPC is done with it, so that shutdown knows when every answer is out.
class TrackedUnaryReactor final : public grpc::ServerUnaryReactor,
                                  public UnaryCompletion {
 public:
  explicit TrackedUnaryReactor(ServiceContext* sc) : sc_(sc) {
    sc_->active_calls.fetch_add(1, std::memory_order_relaxed);
  }
  // gRPC calls these on its threads (tsan_handoff.h).
  void OnCancel() override {
    HandOffAcquire(static_cast<grpc::ServerUnaryReactor*>(this));
    cancelled_.store(true, std::memory_order_release);
    HandOffRelease(static_cast<grpc::ServerUnaryReactor*>(this));
  }
  void OnDone() override {
    HandOffAcquire(static_cast<grpc::ServerUnaryReactor*>(this));
    sc_->active_calls.fetch_sub(1, std::memory_order_release);
    delete this;
  }

  void Complete(const grpc::Status& status, grpc::ByteBuffer*) override {
    // OnDone runs on a gRPC thread (tsan_handoff.h).
    HandOffRelease(static_cast<grpc::ServerUnaryReactor*>(this));
    Finish(status);
  }
  const std::atomic<bool>* cancelled() const override { return &cancelled_; }

 private:
  ServiceContext* sc_;
  std::atomic<bool> cancelled_{false};
};

}  // namespace

UnaryCall::UnaryCall(ServiceContext& sc, Method method,
                     grpc::CallbackServerContext* ctx,
                     grpc::ByteBuffer* response)
    : sc_(&sc),
      method_(method),
      ctx_(ctx),
      response_(response),
      start_(std::chrono::steady_clock::now()) {
  auto* reactor = new TrackedUnaryReactor(&sc);
  completion_ = reactor;
  reactor_ = reactor;
}

UnaryCall::UnaryCall(ServiceContext& sc, Method method,
                     grpc::ServerContextBase* ctx, UnaryCompletion* completion,
                     grpc::ByteBuffer* response)
    : sc_(&sc),
      method_(method),
      ctx_(ctx),
      completion_(completion),
      reactor_(nullptr),
      response_(response),
      start_(std::chrono::steady_clock::now()) {}

absl::Status UnaryCall::Begin(const grpc::ByteBuffer* request,
                              google::protobuf::Message* message) const {
  absl::Status s = Admit(*sc_, ctx_);
  if (!s.ok()) return s;
  return ParseRequest(*request, message);
}

void UnaryCall::FinishSerialized(grpc::ByteBuffer response) const {
  *response_ = std::move(response);
  Finish(absl::OkStatus());
}

void UnaryCall::Finish(const absl::Status& status,
                       const google::protobuf::Message* response) const {
  absl::Status final_status = status;
  if (final_status.ok() && response != nullptr) {
    final_status = SerializeResponse(*response, response_);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_)
          .count();
  sc_->metrics.RecordRpc(method_, static_cast<int>(final_status.code()),
                         seconds);
  if (!final_status.ok()) LogCallError(method_, final_status, "");
  completion_->Complete(ToGrpcStatus(final_status), response_);
}

const std::atomic<bool>* UnaryCall::cancel_flag() const {
  return completion_->cancelled();
}

absl::Status UnaryCall::StillWanted() const {
  if (ctx_->IsCancelled()) {
    return absl::CancelledError("the client cancelled the call");
  }
  if (SteadyDeadline(ctx_) <= std::chrono::steady_clock::now()) {
    return absl::DeadlineExceededError("the call's deadline passed");
  }
  return absl::OkStatus();
}

grpc::ServerUnaryReactor* FinishNow(const UnaryCall& call,
                                    const absl::Status& status) {
  call.Finish(status);
  return call.reactor();
}

}  // namespace mentat::server
