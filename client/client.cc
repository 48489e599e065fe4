#include "mentat/client/client.h"

#include <grpcpp/grpcpp.h>
#include <grpcpp/impl/client_unary_call.h>
#include <grpcpp/support/proto_buffer_reader.h>

#include <algorithm>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>
#include <type_traits>

#include "absl/synchronization/mutex.h"
#include "arena_lease.h"

namespace mentat::client {

namespace {

// Streams receive raw messages and parse them here. gRPC's typed reader
// ends a stream at a message that does not parse (one nested deeper than
// protobuf's limit of 100, say) as if the stream were complete, and the
// server's OK then made a truncated result look whole.
std::unique_ptr<grpc::ClientReader<grpc::ByteBuffer>> StartStream(
    grpc::Channel* channel, const char* method, grpc::ClientContext* context,
    const google::protobuf::Message& request) {
  const grpc::internal::RpcMethod rpc(
      method, grpc::internal::RpcMethod::SERVER_STREAMING);
  return std::unique_ptr<grpc::ClientReader<grpc::ByteBuffer>>(
      grpc::internal::ClientReaderFactory<grpc::ByteBuffer>::Create(
          channel, rpc, context, request));
}

bool ParseMessage(grpc::ByteBuffer* buffer, google::protobuf::Message* out) {
  grpc::ProtoBufferReader reader(buffer);
  return out->ParseFromZeroCopyStream(&reader);
}

}  // namespace

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
    if (!part.empty()) nodes.push_back(Node{std::string(part), nullptr});
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

std::shared_ptr<grpc::Channel> Client::MakeChannel(
    const std::string& address) const {
  grpc::ChannelArguments args;
  // Results stream in batches, but a single pull or transaction report can
  // be large; the server enforces its own limit.
  args.SetMaxReceiveMessageSize(-1);
  args.SetMaxSendMessageSize(-1);
  return grpc::CreateCustomChannel(address, credentials_, args);
}

Client::Client(ClientOptions options,
               std::shared_ptr<grpc::ChannelCredentials> credentials,
               std::vector<Node> nodes)
    : options_(std::move(options)),
      credentials_(std::move(credentials)),
      single_node_(nodes.size() == 1) {
  for (Node& n : nodes) n.channel = MakeChannel(n.address);
  channel_ = nodes.front().channel;
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
  if (single_node_) return channel_.get();
  absl::MutexLock lock(&mu_);
  if (nodes_.size() == 1) return nodes_.front().channel.get();
  return nodes_[next_read_.fetch_add(1, std::memory_order_relaxed) %
                nodes_.size()]
      .channel.get();
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
  nodes_.push_back(Node{address, MakeChannel(address)});
  primary_ = nodes_.size() - 1;
  return nodes_.back().channel.get();
}

void Client::PrimaryFailed(const std::string& address) {
  absl::MutexLock lock(&mu_);
  if (nodes_[primary_].address == address) {
    primary_ = (primary_ + 1) % nodes_.size();
  }
}

namespace {

// The primary a node names when it refuses a write: "... send writes to
// the primary at HOST:PORT"; "" when the message names none.
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

}  // namespace

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

absl::Status Client::Unary(const CallOptions& call, const char* method,
                           const google::protobuf::Message& request,
                           google::protobuf::Message* response, Route route) {
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
  absl::Status s =
      UnaryAt(channel, call, "/mentat.v1.Mentat/Stats", request, &response);
  if (!s.ok()) return s;
  return response;
}

absl::Status Client::UnaryAt(grpc::Channel* channel, const CallOptions& call,
                             const char* method,
                             const google::protobuf::Message& request,
                             google::protobuf::Message* response) {
  grpc::ClientContext context;
  Prepare(&context, call);
  if (call.canceller != nullptr) call.canceller->Attach(&context);
  // A raw response parsed here, as streams do (StartStream): gRPC's typed
  // call reports a response that does not parse as UNIMPLEMENTED "No
  // message returned".
  grpc::ByteBuffer raw;
  const grpc::Status status = grpc::internal::BlockingUnaryCall<
      google::protobuf::Message, grpc::ByteBuffer>(
      channel,
      grpc::internal::RpcMethod(method, grpc::internal::RpcMethod::NORMAL_RPC),
      &context, request, &raw);
  if (call.canceller != nullptr) call.canceller->Detach(&context);
  if (!status.ok()) return FromGrpc(status);
  if (!ParseMessage(&raw, response)) {
    return absl::InternalError(
        "the " + response->GetTypeName() +
        " from the server could not be parsed (a value nested deeper than "
        "protobuf's limit of 100, or a corrupt message)");
  }
  return absl::OkStatus();
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

template <typename Request, typename Response, typename Start>
absl::Status Client::Stream(const Request& original, Start start,
                            const std::function<bool(Response*)>& on_batch,
                            const CallOptions& call, bool resumable,
                            ArenaLease* lease, bool columns_seen) {
  constexpr bool kIsQuery = std::is_same_v<Response, v1::QueryResponse>;
  constexpr bool kHasToken =
      kIsQuery || std::is_same_v<Response, v1::DatomsResponse>;
  // One deadline for the whole stream, however often it resumes.
  const auto deadline = std::chrono::system_clock::now() + call.timeout;
  int attempts_left = resumable ? call.resume_attempts : 0;
  std::chrono::milliseconds backoff(100);
  bool seen_first = columns_seen;
  // The request as sent: the caller's, until a resume token comes (a small
  // result has none), then a copy that carries it.
  const Request* request = &original;
  Request resumed;
  for (;;) {
    grpc::ClientContext context;
    CallOptions attempt = call;
    attempt.timeout = std::chrono::milliseconds(0);
    Prepare(&context, attempt);
    if (call.timeout.count() > 0) context.set_deadline(deadline);
    if (call.canceller != nullptr) call.canceller->Attach(&context);
    std::unique_ptr<grpc::ClientReader<grpc::ByteBuffer>> reader =
        start(&context, *request);
    grpc::ByteBuffer raw;
    Response heap_message;
    Response* message = &heap_message;
    bool stopped = false;
    bool unreadable = false;
    while (reader->Read(&raw)) {
      if (lease != nullptr) {
        // The previous message's callback has returned: its memory may be
        // reused, so a long stream holds about one message at a time.
        lease->Recycle();
        if constexpr (kIsQuery) {
          message = lease->query_response();
        } else {
          message =
              google::protobuf::Arena::CreateMessage<Response>(lease->arena());
        }
      }
      if (!ParseMessage(&raw, message)) {
        unreadable = true;
        context.TryCancel();
        while (reader->Read(&raw)) {
        }
        break;
      }
      if constexpr (kHasToken) {
        if (!message->resume_token().empty()) {
          if (request != &resumed) {
            resumed = original;
            request = &resumed;
          }
          resumed.set_resume_token(message->resume_token());
        }
      }
      if constexpr (kIsQuery) {
        // A resumed stream announces its columns again.
        if (seen_first) message->clear_columns();
      }
      seen_first = true;
      if (!on_batch(message)) {
        stopped = true;
        context.TryCancel();
        while (reader->Read(&raw)) {
        }
        break;
      }
    }
    const grpc::Status status = reader->Finish();
    if (call.canceller != nullptr) call.canceller->Detach(&context);
    if (unreadable) {
      return absl::InternalError(
          "a " + Response::descriptor()->full_name() +
          " from the server could not be parsed (a value nested deeper than "
          "protobuf's limit of 100, or a corrupt message); the messages "
          "before it were delivered");
    }
    if (stopped || status.ok()) return absl::OkStatus();
    const bool cancelled =
        call.canceller != nullptr && call.canceller->cancelled();
    if (status.error_code() == grpc::StatusCode::UNAVAILABLE && !cancelled &&
        attempts_left > 0) {
      --attempts_left;
      if (call.resumes != nullptr) ++*call.resumes;
      std::this_thread::sleep_for(backoff);
      backoff = std::min(backoff * 2, std::chrono::milliseconds(2000));
      continue;
    }
    return FromGrpc(status);
  }
}

absl::Status Client::QueryFirstThenStream(
    const v1::QueryRequest& request,
    const std::function<bool(v1::QueryResponse*)>& on_batch,
    const CallOptions& call, ArenaLease* lease) {
  const auto start_stream = [&](grpc::ClientContext* ctx,
                                const v1::QueryRequest& r) {
    return StartStream(ReadChannel(), "/mentat.v1.Mentat/Query", ctx, r);
  };
  // A request that resumes is a stream's business from the start.
  if (!options_.query_first || !request.resume_token().empty() ||
      no_query_first_.load(std::memory_order_relaxed)) {
    return Stream<v1::QueryRequest, v1::QueryResponse>(
        request, start_stream, on_batch, call, true, lease);
  }
  const auto started = std::chrono::steady_clock::now();
  v1::QueryResponse heap_first;
  v1::QueryResponse* first =
      lease == nullptr ? &heap_first : lease->query_response();
  const absl::Status first_status =
      Unary(call, "/mentat.v1.Mentat/QueryFirst", request, first);
  if (!first_status.ok()) {
    const absl::StatusCode code = first_status.code();
    const bool cancelled =
        call.canceller != nullptr && call.canceller->cancelled();
    if (code == absl::StatusCode::kUnimplemented) {
      no_query_first_.store(true, std::memory_order_relaxed);
    } else if (code != absl::StatusCode::kUnavailable || cancelled ||
               call.resume_attempts <= 0) {
      return first_status;
    }
    // An older server, or a broken connection: the stream (which retries
    // UNAVAILABLE with backoff) answers from the start.
    return Stream<v1::QueryRequest, v1::QueryResponse>(
        request, start_stream, on_batch, call, true, lease);
  }
  // The stream that continues runs under what is left of the deadline.
  const auto remaining = [&] {
    CallOptions rest = call;
    if (call.timeout.count() > 0) {
      const auto spent = std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::steady_clock::now() - started);
      rest.timeout =
          std::max(call.timeout - spent, std::chrono::milliseconds(1));
    }
    return rest;
  };
  const bool more = first->more();
  if (more && first->resume_token().empty()) {
    // Not a small query: nothing was sent; the stream runs it.
    return Stream<v1::QueryRequest, v1::QueryResponse>(
        request, start_stream, on_batch, remaining(), true, lease);
  }
  v1::QueryRequest rest;
  if (more) {
    rest = request;
    rest.set_resume_token(first->resume_token());
  }
  if (!on_batch(first) || !more) return absl::OkStatus();
  return Stream<v1::QueryRequest, v1::QueryResponse>(
      rest, start_stream, on_batch, remaining(), true, lease,
      /*columns_seen=*/true);
}

absl::Status Client::Query(
    const v1::QueryRequest& request,
    const std::function<bool(const v1::QueryResponse&)>& on_batch,
    const CallOptions& call) {
  ArenaLease lease;
  return QueryFirstThenStream(
      request, [&](v1::QueryResponse* m) { return on_batch(*m); }, call,
      &lease);
}

absl::Status Client::QueryTaking(
    const v1::QueryRequest& request,
    const std::function<bool(v1::QueryResponse*)>& on_batch,
    const CallOptions& call) {
  return QueryFirstThenStream(request, on_batch, call, /*lease=*/nullptr);
}

absl::Status Client::Datoms(
    const v1::DatomsRequest& request,
    const std::function<bool(const v1::DatomsResponse&)>& on_batch,
    const CallOptions& call) {
  ArenaLease lease;
  return Stream<v1::DatomsRequest, v1::DatomsResponse>(
      request,
      [&](grpc::ClientContext* ctx, const v1::DatomsRequest& r) {
        return StartStream(ReadChannel(), "/mentat.v1.Mentat/Datoms", ctx, r);
      },
      [&](v1::DatomsResponse* m) { return on_batch(*m); }, call, true, &lease);
}

namespace {

// Joins the parts of transactions the server split across messages
// (Transaction.continued), so that callers see each transaction whole: a
// message passes on every transaction it completes, and a part waits for
// the rest.
template <typename Response>
class TransactionJoiner {
 public:
  // Fills *out with `in`'s whole transactions (the parts held back from
  // earlier messages joined in); false when it completes none.
  bool Join(const Response& in, Response* out) {
    *out = in;
    out->clear_transactions();
    for (const v1::Transaction& t : in.transactions()) {
      if (partial_.has_value() && partial_->tx() != t.tx()) {
        // The rest never came (not a server of this repository): pass the
        // part on as it is.
        *out->add_transactions() = *std::move(partial_);
        partial_.reset();
      }
      if (!partial_.has_value()) {
        if (!t.continued()) {
          *out->add_transactions() = t;
          continue;
        }
        partial_.emplace();
        partial_->set_tx(t.tx());
        partial_->set_tx_instant_micros(t.tx_instant_micros());
      }
      for (const v1::Datom& d : t.datoms()) *partial_->add_datoms() = d;
      if (!t.continued()) {
        *out->add_transactions() = *std::move(partial_);
        partial_.reset();
      }
    }
    return out->transactions_size() > 0;
  }

 private:
  std::optional<v1::Transaction> partial_;
};

}  // namespace

absl::Status Client::TxRange(
    const v1::TxRangeRequest& request,
    const std::function<bool(const v1::TxRangeResponse&)>& on_batch,
    const CallOptions& call) {
  return Stream<v1::TxRangeRequest, v1::TxRangeResponse>(
      request,
      [&](grpc::ClientContext* ctx, const v1::TxRangeRequest& r) {
        return StartStream(ReadChannel(), "/mentat.v1.Mentat/TxRange", ctx, r);
      },
      [&, joiner = TransactionJoiner<v1::TxRangeResponse>()](
          v1::TxRangeResponse* message) mutable {
        v1::TxRangeResponse whole;
        return !joiner.Join(*message, &whole) || on_batch(whole);
      },
      call, false, /*lease=*/nullptr);
}

absl::Status Client::Subscribe(
    const v1::SubscribeRequest& request,
    const std::function<bool(const v1::SubscribeResponse&)>& on_batch,
    const CallOptions& call) {
  return Stream<v1::SubscribeRequest, v1::SubscribeResponse>(
      request,
      [&](grpc::ClientContext* ctx, const v1::SubscribeRequest& r) {
        return StartStream(ReadChannel(), "/mentat.v1.Mentat/Subscribe", ctx,
                           r);
      },
      [&, joiner = TransactionJoiner<v1::SubscribeResponse>()](
          v1::SubscribeResponse* message) mutable {
        v1::SubscribeResponse whole;
        return !joiner.Join(*message, &whole) || on_batch(whole);
      },
      call, false, /*lease=*/nullptr);
}

}  // namespace mentat::client
