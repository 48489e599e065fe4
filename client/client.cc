#include "mentat/client/client.h"

#include <grpcpp/grpcpp.h>
#include <grpcpp/impl/client_unary_call.h>
#include <grpcpp/support/async_unary_call.h>
#include <grpcpp/support/proto_buffer_reader.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>

#include "absl/synchronization/mutex.h"
#include "queue_lease.h"
#include "response_parser.h"

namespace mentat::client {

absl::Status FromGrpc(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      status.error_message());
}

void Canceller::Cancel() {
  absl::MutexLock lock(&mu_);
  cancelled_ = true;
  for (grpc::ClientContext* context : contexts_) context->TryCancel();
}

bool Canceller::cancelled() const {
  absl::MutexLock lock(&mu_);
  return cancelled_;
}

void Canceller::Attach(grpc::ClientContext* context) {
  absl::MutexLock lock(&mu_);
  contexts_.push_back(context);
  if (cancelled_) context->TryCancel();
}

void Canceller::Detach(grpc::ClientContext* context) {
  absl::MutexLock lock(&mu_);
  std::erase(contexts_, context);
}

absl::StatusOr<std::unique_ptr<Client>> Client::Connect(
    const ClientOptions& options) {
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  if (options.tls || !options.tls_ca_file.empty()) {
    grpc::SslCredentialsOptions ssl;
    if (!options.tls_ca_file.empty()) {
      std::ifstream in(options.tls_ca_file);
      if (!in) {
        return absl::NotFoundError("cannot read TLS CA file " +
                                   options.tls_ca_file);
      }
      std::stringstream pem;
      pem << in.rdbuf();
      ssl.pem_root_certs = pem.str();
    }
    credentials = grpc::SslCredentials(ssl);
  } else {
    credentials = grpc::InsecureChannelCredentials();
  }
  std::vector<Node> nodes;
  for (std::string_view rest = options.address;;) {
    const size_t comma = rest.find(',');
    std::string_view part = rest.substr(0, comma);
    while (!part.empty() && part.front() == ' ') part.remove_prefix(1);
    while (!part.empty() && part.back() == ' ') part.remove_suffix(1);
    if (!part.empty())
      nodes.push_back(Node{std::string(part), nullptr, nullptr});
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  if (nodes.empty()) {
    return absl::InvalidArgumentError(
        "no address to connect to (give HOST:PORT, or several separated by "
        "commas)");
  }
  return std::unique_ptr<Client>(
      new Client(options, std::move(credentials), std::move(nodes)));
}

std::shared_ptr<grpc::Channel> Client::MakeChannel(const std::string& address,
                                                   bool streams) const {
  grpc::ChannelArguments args;
  // Results stream in batches, but a single pull or transaction report can
  // be large; the server enforces its own limit.
  args.SetMaxReceiveMessageSize(-1);
  args.SetMaxSendMessageSize(-1);
  if (options_.own_connection || streams) {
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  }
  return grpc::CreateCustomChannel(address, credentials_, args);
}

Client::Node Client::MakeNode(const std::string& address) const {
  return Node{address, MakeChannel(address),
              MakeChannel(address, /*streams=*/true)};
}

Client::Client(ClientOptions options,
               std::shared_ptr<grpc::ChannelCredentials> credentials,
               std::vector<Node> nodes)
    : options_(std::move(options)),
      credentials_(std::move(credentials)),
      single_node_(nodes.size() == 1) {
  for (Node& n : nodes) n = MakeNode(n.address);
  channel_ = nodes.front().channel;
  stream_channel_ = nodes.front().stream_channel;
  stub_ = v1::Mentat::NewStub(channel_);
  absl::MutexLock lock(&mu_);
  nodes_ = std::move(nodes);
}

std::vector<std::string> Client::addresses() const {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> out;
  for (const Node& n : nodes_) out.push_back(n.address);
  return out;
}

std::string Client::primary() const {
  absl::MutexLock lock(&mu_);
  return nodes_[primary_].address;
}

grpc::Channel* Client::ReadChannel() {
  return NextReadChannel(&Node::channel, *channel_);
}

grpc::Channel* Client::StreamChannel() {
  return NextReadChannel(&Node::stream_channel, *stream_channel_);
}

grpc::Channel* Client::NextReadChannel(
    std::shared_ptr<grpc::Channel> Node::*which, grpc::Channel& single) {
  if (single_node_) return &single;
  absl::MutexLock lock(&mu_);
  if (nodes_.size() == 1) return (nodes_.front().*which).get();
  return (nodes_[next_read_.fetch_add(1, std::memory_order_relaxed) %
                 nodes_.size()].*
          which)
      .get();
}

Client::Node Client::PrimaryNode() {
  absl::MutexLock lock(&mu_);
  // A node whose channel already failed to connect is passed over (the
  // first address of a cluster may be the node that is down).
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const size_t at = (primary_ + i) % nodes_.size();
    if (nodes_[at].channel->GetState(/*try_to_connect=*/false) !=
        GRPC_CHANNEL_TRANSIENT_FAILURE) {
      primary_ = at;
      break;
    }
  }
  return nodes_[primary_];
}

grpc::Channel* Client::SetPrimary(const std::string& address) {
  absl::MutexLock lock(&mu_);
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (nodes_[i].address == address) {
      primary_ = i;
      return nodes_[i].channel.get();
    }
  }
  nodes_.push_back(MakeNode(address));
  primary_ = nodes_.size() - 1;
  return nodes_.back().channel.get();
}

void Client::PrimaryFailed(const std::string& address) {
  absl::MutexLock lock(&mu_);
  if (nodes_[primary_].address == address) {
    primary_ = (primary_ + 1) % nodes_.size();
  }
}

std::string NamedPrimary(const absl::Status& status) {
  if (status.code() != absl::StatusCode::kFailedPrecondition &&
      status.code() != absl::StatusCode::kUnavailable) {
    return "";
  }
  constexpr std::string_view kMarker = "primary at ";
  const std::string_view message(status.message().data(),
                                 status.message().size());
  const size_t at = message.rfind(kMarker);
  if (at == std::string_view::npos) return "";
  std::string_view address = message.substr(at + kMarker.size());
  const size_t end = address.find_first_of(" ;,)\n");
  if (end != std::string_view::npos) address = address.substr(0, end);
  while (!address.empty() && address.back() == '.') address.remove_suffix(1);
  return std::string(address);
}

absl::Status Client::WaitForConnected(std::chrono::milliseconds timeout) {
  if (channel_->WaitForConnected(std::chrono::system_clock::now() + timeout)) {
    return absl::OkStatus();
  }
  return absl::UnavailableError("cannot connect to mentatd at " +
                                options_.address);
}

namespace {

absl::Status ConnectChannelOnce(
    grpc::Channel& channel, const std::string& address,
    std::chrono::system_clock::time_point deadline) {
  grpc_connectivity_state state = channel.GetState(/*try_to_connect=*/true);
  while (state != GRPC_CHANNEL_READY) {
    if (state == GRPC_CHANNEL_TRANSIENT_FAILURE ||
        state == GRPC_CHANNEL_SHUTDOWN) {
      return absl::UnavailableError("cannot connect to mentatd at " + address);
    }
    if (!channel.WaitForStateChange(state, deadline)) {
      return absl::UnavailableError("cannot connect to mentatd at " + address +
                                    " (timed out)");
    }
    state = channel.GetState(/*try_to_connect=*/true);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status Client::ConnectOnce(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::system_clock::now() + timeout;
  std::vector<Node> nodes;
  {
    absl::MutexLock lock(&mu_);
    nodes = nodes_;
  }
  // A cluster is reachable when any of its nodes is.
  absl::Status first;
  for (const Node& n : nodes) {
    absl::Status s = ConnectChannelOnce(*n.channel, n.address, deadline);
    if (s.ok()) return s;
    if (first.ok()) first = s;
  }
  if (nodes.size() > 1) {
    return absl::UnavailableError("cannot connect to any node of " +
                                  options_.address);
  }
  return first;
}

void Client::Prepare(grpc::ClientContext* context,
                     const CallOptions& call) const {
  if (!options_.token.empty()) {
    context->AddMetadata("authorization", "Bearer " + options_.token);
  }
  if (call.timeout.count() > 0) {
    context->set_deadline(std::chrono::system_clock::now() + call.timeout);
  }
}

absl::Status ParseAnswer(grpc::ByteBuffer* raw,
                         google::protobuf::Message* response) {
  if (ParseResponse(raw, response)) return absl::OkStatus();
  return absl::InternalError(
      "the " + response->GetTypeName() +
      " from the server could not be parsed (a value nested deeper than "
      "protobuf's limit of 100, or a corrupt message)");
}

absl::Status Client::Unary(const CallOptions& call, const char* method,
                           const google::protobuf::Message& request,
                           google::protobuf::Message* response, Route route) {
  return Unary(
      call, method, request,
      [response](grpc::ByteBuffer* raw) { return ParseAnswer(raw, response); },
      route);
}

absl::Status Client::Unary(const CallOptions& call, const char* method,
                           const google::protobuf::Message& request,
                           AnswerReader response, Route route) {
  if (single_node_) {
    return UnaryAt(channel_.get(), call, method, request, response);
  }
  size_t count;
  {
    absl::MutexLock lock(&mu_);
    count = nodes_.size();
  }
  if (count == 1) {
    return UnaryAt(channel_.get(), call, method, request, response);
  }
  const auto cancelled = [&] {
    return call.canceller != nullptr && call.canceller->cancelled();
  };
  if (route == Route::kWrite) {
    const Node node = PrimaryNode();
    absl::Status s =
        UnaryAt(node.channel.get(), call, method, request, response);
    if (s.ok() || cancelled()) return s;
    const std::string named = NamedPrimary(s);
    if (!named.empty() && named != node.address) {
      // A replica (or a deposed primary) refused before writing: the
      // write goes to the node it names, once.
      return UnaryAt(SetPrimary(named), call, method, request, response);
    }
    if (s.code() == absl::StatusCode::kUnavailable) {
      PrimaryFailed(node.address);
    }
    return s;
  }
  absl::Status s = absl::UnavailableError("no node answered");
  for (size_t i = 0; i < count; ++i) {
    s = UnaryAt(ReadChannel(), call, method, request, response);
    if (s.ok() || s.code() != absl::StatusCode::kUnavailable || cancelled()) {
      return s;
    }
  }
  return s;
}

template <typename Response>
absl::StatusOr<Response> Client::UnaryReturning(
    const CallOptions& call, const char* method,
    const google::protobuf::Message& request, Route route) {
  Response response;
  absl::Status s = Unary(call, method, request, &response, route);
  if (!s.ok()) return s;
  return response;
}

absl::StatusOr<v1::StatsResponse> Client::StatsAt(
    const std::string& address, const v1::StatsRequest& request,
    const CallOptions& call) {
  grpc::Channel* channel = nullptr;
  {
    absl::MutexLock lock(&mu_);
    for (const Node& n : nodes_) {
      if (n.address == address) channel = n.channel.get();
    }
  }
  if (channel == nullptr) {
    return absl::NotFoundError("no node " + address + " in this client");
  }
  v1::StatsResponse response;
  absl::Status s = UnaryAt(
      channel, call, "/mentat.v1.Mentat/Stats", request,
      [&](grpc::ByteBuffer* raw) { return ParseAnswer(raw, &response); });
  if (!s.ok()) return s;
  return response;
}

namespace {

// BlockingUnaryCall's answer, polled for `poll` before the thread sleeps
// (ClientOptions::poll_us).
grpc::Status PolledUnaryCall(grpc::Channel* channel,
                             const grpc::internal::RpcMethod& method,
                             grpc::ClientContext* context,
                             const google::protobuf::Message& request,
                             grpc::ByteBuffer* response,
                             std::chrono::microseconds poll) {
  QueueLease lease;
  grpc::CompletionQueue* queue = lease.get();
  // Allocated in the call's arena: the pointer's delete does nothing.
  std::unique_ptr<grpc::ClientAsyncResponseReader<grpc::ByteBuffer>> reader(
      grpc::internal::ClientAsyncResponseReaderHelper::Create<
          grpc::ByteBuffer, google::protobuf::Message>(channel, queue, method,
                                                       context, request));
  reader->StartCall();
  grpc::Status status;
  int finished = 0;
  reader->Finish(response, &status, &finished);
  const auto until = std::chrono::steady_clock::now() + poll;
  void* tag = nullptr;
  bool ok = false;
  for (;;) {
    // A deadline already past polls the connection once without sleeping.
    const bool polling = std::chrono::steady_clock::now() < until;
    const auto got =
        queue->AsyncNext(&tag, &ok,
                         polling ? gpr_time_0(GPR_CLOCK_MONOTONIC)
                                 : gpr_inf_future(GPR_CLOCK_MONOTONIC));
    if (got == grpc::CompletionQueue::GOT_EVENT && tag == &finished) break;
    if (got == grpc::CompletionQueue::SHUTDOWN) {
      return grpc::Status(grpc::StatusCode::INTERNAL,
                          "the calling thread's completion queue shut down");
    }
  }
  return status;
}

}  // namespace

absl::Status Client::UnaryAt(grpc::Channel* channel, const CallOptions& call,
                             const char* method,
                             const google::protobuf::Message& request,
                             AnswerReader read) {
  grpc::ClientContext context;
  Prepare(&context, call);
  if (call.canceller != nullptr) call.canceller->Attach(&context);
  // A raw response parsed here, as streams do (StartStream): gRPC's typed
  // call reports a response that does not parse as UNIMPLEMENTED "No
  // message returned".
  grpc::ByteBuffer raw;
  const grpc::internal::RpcMethod rpc(method,
                                      grpc::internal::RpcMethod::NORMAL_RPC);
  const grpc::Status status =
      options_.poll_us > 0
          ? PolledUnaryCall(channel, rpc, &context, request, &raw,
                            std::chrono::microseconds(options_.poll_us))
          : grpc::internal::BlockingUnaryCall<google::protobuf::Message,
                                              grpc::ByteBuffer>(
                channel, rpc, &context, request, &raw);
  if (call.canceller != nullptr) call.canceller->Detach(&context);
  if (!status.ok()) return FromGrpc(status);
  return read(&raw);
}

absl::StatusOr<v1::TransactResponse> Client::Transact(
    const v1::TransactRequest& request, const CallOptions& call) {
  return UnaryReturning<v1::TransactResponse>(
      call, "/mentat.v1.Mentat/Transact", request, Route::kWrite);
}

absl::StatusOr<v1::PullResponse> Client::Pull(const v1::PullRequest& request,
                                              const CallOptions& call) {
  return UnaryReturning<v1::PullResponse>(call, "/mentat.v1.Mentat/Pull",
                                          request);
}

absl::StatusOr<v1::PullManyResponse> Client::PullMany(
    const v1::PullManyRequest& request, const CallOptions& call) {
  return UnaryReturning<v1::PullManyResponse>(
      call, "/mentat.v1.Mentat/PullMany", request);
}

absl::StatusOr<v1::SchemaResponse> Client::Schema(
    const v1::SchemaRequest& request, const CallOptions& call) {
  return UnaryReturning<v1::SchemaResponse>(call, "/mentat.v1.Mentat/Schema",
                                            request);
}

absl::StatusOr<v1::StatsResponse> Client::Stats(const v1::StatsRequest& request,
                                                const CallOptions& call) {
  return UnaryReturning<v1::StatsResponse>(call, "/mentat.v1.Mentat/Stats",
                                           request);
}

absl::StatusOr<v1::ExplainResponse> Client::Explain(
    const v1::ExplainRequest& request, const CallOptions& call) {
  return UnaryReturning<v1::ExplainResponse>(call, "/mentat.v1.Mentat/Explain",
                                             request);
}

absl::StatusOr<v1::CreateDatabaseResponse> Client::CreateDatabase(
    const v1::CreateDatabaseRequest& request, const CallOptions& call) {
  return UnaryReturning<v1::CreateDatabaseResponse>(
      call, "/mentat.v1.Mentat/CreateDatabase", request, Route::kWrite);
}

absl::StatusOr<v1::ListDatabasesResponse> Client::ListDatabases(
    const CallOptions& call) {
  v1::ListDatabasesRequest request;
  return UnaryReturning<v1::ListDatabasesResponse>(
      call, "/mentat.v1.Mentat/ListDatabases", request);
}

absl::StatusOr<v1::DeleteDatabaseResponse> Client::DeleteDatabase(
    const v1::DeleteDatabaseRequest& request, const CallOptions& call) {
  return UnaryReturning<v1::DeleteDatabaseResponse>(
      call, "/mentat.v1.Mentat/DeleteDatabase", request, Route::kWrite);
}

absl::StatusOr<v1::PingResponse> Client::Ping(const CallOptions& call) {
  v1::PingRequest request;
  return UnaryReturning<v1::PingResponse>(call, "/mentat.v1.Mentat/Ping",
                                          request);
}

absl::Status Client::Health(const CallOptions& call) {
  // grpc.health.v1.HealthCheckRequest{service: ""} is the empty message;
  // the response's field 1 (a varint) is the status, SERVING = 1. Sent as
  // raw bytes so that client/ needs no generated health code.
  static const grpc::internal::RpcMethod kCheck(
      "/grpc.health.v1.Health/Check", grpc::internal::RpcMethod::NORMAL_RPC);
  grpc::ClientContext context;
  if (call.timeout.count() > 0) {
    context.set_deadline(std::chrono::system_clock::now() + call.timeout);
  }
  grpc::Slice empty;
  grpc::ByteBuffer request(&empty, 1);
  grpc::ByteBuffer response;
  const grpc::Status status =
      grpc::internal::BlockingUnaryCall<grpc::ByteBuffer, grpc::ByteBuffer>(
          channel_.get(), kCheck, &context, request, &response);
  if (!status.ok()) return FromGrpc(status);
  std::vector<grpc::Slice> slices;
  std::string bytes;
  if (response.Dump(&slices).ok()) {
    for (const grpc::Slice& slice : slices) {
      bytes.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
    }
  }
  int serving_status = 0;  // UNKNOWN
  if (bytes.size() >= 2 && bytes[0] == '\x08') serving_status = bytes[1];
  if (serving_status == 1) return absl::OkStatus();
  return absl::UnavailableError("mentatd at " + options_.address +
                                " is not serving (health status " +
                                std::to_string(serving_status) + ")");
}

absl::StatusOr<v1::BackupResponse> Client::Backup(
    const v1::BackupRequest& request, const CallOptions& call) {
  return UnaryReturning<v1::BackupResponse>(call, "/mentat.v1.Mentat/Backup",
                                            request, Route::kWrite);
}

absl::StatusOr<v1::ImportResponse> Client::Import(
    const std::function<bool(v1::ImportRequest*)>& next,
    const CallOptions& call) {
  grpc::ClientContext context;
  Prepare(&context, call);
  v1::ImportResponse response;
  // To the primary as believed now (an import is not re-sent elsewhere:
  // the caller resumes it from what Stats says was imported).
  const Node primary = PrimaryNode();
  std::unique_ptr<v1::Mentat::Stub> stub =
      primary.channel == channel_ ? nullptr
                                  : v1::Mentat::NewStub(primary.channel);
  std::unique_ptr<grpc::ClientWriter<v1::ImportRequest>> writer =
      (stub != nullptr ? stub.get() : stub_.get())->Import(&context, &response);
  v1::ImportRequest request;
  while (true) {
    request.Clear();
    if (!next(&request)) break;
    // A failed write means the server ended the call; Finish says why.
    if (!writer->Write(request)) break;
  }
  writer->WritesDone();
  grpc::Status status = writer->Finish();
  if (!status.ok()) return FromGrpc(status);
  return response;
}

}  // namespace mentat::client
