#ifndef MENTAT_CLIENT_CLIENT_H_
#define MENTAT_CLIENT_CLIENT_H_

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/security/credentials.h"
#include "mentat/client/query_batch.h"
#include "mentat/v1/mentat.grpc.pb.h"

namespace mentat::client {

class ArenaLease;  // arena_lease.h, private to the client

// How to reach a mentatd.
struct ClientOptions {
  // "host:port", or "unix:/path/to.sock"; or a cluster's nodes separated
  // by commas ("a:7878,b:7878,c:7878"): reads then go to any node that
  // answers, writes to the primary (see Client).
  std::string address = "127.0.0.1:7878";
  // Sent as "authorization: Bearer <token>" on every call; empty for none.
  std::string token;
  // TLS: with `tls` (or a CA file) the channel is encrypted; the server's
  // certificate is checked against `tls_ca_file` (PEM), or the system's
  // roots when that is empty.
  bool tls = false;
  std::string tls_ca_file;
  // Query and QueryTaking ask QueryFirst (one unary call) before they open
  // a Query stream; false sends every query to the stream at once (so
  // that a benchmark can compare the two).
  bool query_first = true;
  // A connection of this client's own. By default gRPC shares one
  // connection among the channels of a process that go to the same
  // address with the same settings, so two Clients of one process (a
  // writer's and a reader's) would read their answers off one socket.
  bool own_connection = false;
  // Microseconds a unary call (Ping, QueryFirst, Pull, Transact, ...)
  // polls for its answer, and a stream (Query, Datoms, TxRange,
  // Subscribe) for each of its messages and its end, before the calling
  // thread sleeps; 0 sleeps at once. A thread that sleeps takes tens of
  // microseconds to wake on a VM, a good part of a small read's round trip;
  // polling spends up to this much of a CPU per call instead, so it suits a
  // client with a core to spare and a few calling threads, not one with many.
  // Default: 0.
  int poll_us = 0;
};

// Cancels calls from another thread (a Ctrl-C handler's watcher): Cancel()
// stops the calls in flight with ClientContext::TryCancel, and every later
// call made with this canceller. Thread-safe; one canceller may serve
// several concurrent calls.
class Canceller {
 public:
  void Cancel();
  bool cancelled() const;

 private:
  friend class Client;
  // Registers the context of a starting call; cancels it at once if
  // Cancel() already ran.
  void Attach(grpc::ClientContext* context);
  void Detach(grpc::ClientContext* context);

  mutable absl::Mutex mu_;
  // The calls in flight (several when one canceller covers concurrent
  // calls, as an import's).
  std::vector<grpc::ClientContext*> contexts_ ABSL_GUARDED_BY(mu_);
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
};

// Per-call settings.
struct CallOptions {
  // A deadline for the whole call; zero for none.
  std::chrono::milliseconds timeout{0};
  // Not owned; may be null.
  Canceller* canceller = nullptr;
  // Query and Datoms: how often a stream that broke (UNAVAILABLE) is
  // continued from its last resume token before the error is returned.
  int resume_attempts = 3;
  // If set, counts the times a stream was resumed (for callers that report
  // it, and tests). Not owned.
  int* resumes = nullptr;
};

// A thin client over the generated mentat.v1 stub: one channel, typed
// requests and responses from the proto, errors as absl::Status (gRPC's
// codes map one to one, with the server's message). Streams deliver their
// messages to a callback, which returns false to stop the stream early.
//
// Over a cluster (several addresses): reads (Query, Pull, Datoms, ...)
// go to the nodes in turn, and one that is UNAVAILABLE (down, or behind a
// read's min_basis_tx) passes the read to the next. Writes (Transact,
// Import, CreateDatabase, DeleteDatabase, Backup) go to the node believed
// to be the primary (at first the first address that is not known to be
// down); a node that refuses a write naming the primary ("send writes to
// the primary at HOST:PORT") makes that node the primary and the write is
// sent there once more (the refusal means nothing was written). A write
// that fails otherwise is not retried (it may have committed: retry it
// with a request_id), but the next write tries the next node.
//
// Thread-safe: any number of threads may make calls at once.
class Client {
 public:
  // Opens a channel (lazily: this does not contact the server). Fails only
  // for an unreadable TLS CA file.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<Client>> Connect(
      const ClientOptions& options);
  // Waits for the asynchronous calls still in flight (TransactAsync,
  // PingAsync, QueryFirstAsync) to end.
  ~Client();

  // Waits up to `timeout` for the channel to connect; UNAVAILABLE if it
  // does not.
  [[nodiscard]] absl::Status WaitForConnected(
      std::chrono::milliseconds timeout);
  // Like WaitForConnected, but gives up at the first failed attempt
  // (connection refused, no such socket, a TLS handshake that fails)
  // instead of retrying until `timeout`: for a user waiting at a prompt.
  [[nodiscard]] absl::Status ConnectOnce(std::chrono::milliseconds timeout);

  const ClientOptions& options() const { return options_; }

  // The nodes this client knows: the addresses it was given, then any
  // primary a node named that was not among them.
  std::vector<std::string> addresses() const;
  // The address writes go to now.
  std::string primary() const;
  // Stats of one node (`address`, one of addresses()), for a view of the
  // cluster (the shell's .cluster).
  [[nodiscard]] absl::StatusOr<v1::StatsResponse> StatsAt(
      const std::string& address, const v1::StatsRequest& request,
      const CallOptions& call = {});

  [[nodiscard]] absl::StatusOr<v1::TransactResponse> Transact(
      const v1::TransactRequest& request, const CallOptions& call = {});
  [[nodiscard]] absl::StatusOr<v1::PullResponse> Pull(
      const v1::PullRequest& request, const CallOptions& call = {});
  [[nodiscard]] absl::StatusOr<v1::PullManyResponse> PullMany(
      const v1::PullManyRequest& request, const CallOptions& call = {});
  [[nodiscard]] absl::StatusOr<v1::SchemaResponse> Schema(
      const v1::SchemaRequest& request, const CallOptions& call = {});
  [[nodiscard]] absl::StatusOr<v1::StatsResponse> Stats(
      const v1::StatsRequest& request, const CallOptions& call = {});
  [[nodiscard]] absl::StatusOr<v1::ExplainResponse> Explain(
      const v1::ExplainRequest& request, const CallOptions& call = {});
  [[nodiscard]] absl::StatusOr<v1::CreateDatabaseResponse> CreateDatabase(
      const v1::CreateDatabaseRequest& request, const CallOptions& call = {});
  [[nodiscard]] absl::StatusOr<v1::ListDatabasesResponse> ListDatabases(
      const CallOptions& call = {});
  [[nodiscard]] absl::StatusOr<v1::DeleteDatabaseResponse> DeleteDatabase(
      const v1::DeleteDatabaseRequest& request, const CallOptions& call = {});
  [[nodiscard]] absl::StatusOr<v1::BackupResponse> Backup(
      const v1::BackupRequest& request, const CallOptions& call = {});
  // The cheapest RPC: checks the token, touches no database; the response
  // carries the server's version. The floor under every other call.
  [[nodiscard]] absl::StatusOr<v1::PingResponse> Ping(
      const CallOptions& call = {});

  // Transact and Ping without waiting for the answer: the call is started
  // and `done` runs once, later, on one of gRPC's threads, with the answer
  // or the error. Routed as Transact and Ping are (a write refused by a
  // node naming the primary is sent there once more). For a caller with
  // many calls in flight and no thread for each (a load generator, a
  // server of its own): a blocked thread per call costs the client more
  // CPU than the server's answer. `done` should not block (it holds up
  // the answers of other calls), may start further calls, and must not
  // destroy the Client. Destroying the Client waits until every call it
  // started has ended and its `done` has returned.
  template <typename Response>
  using Done = std::function<void(absl::StatusOr<Response>)>;
  void TransactAsync(const v1::TransactRequest& request,
                     Done<v1::TransactResponse> done,
                     const CallOptions& call = {});
  void PingAsync(Done<v1::PingResponse> done, const CallOptions& call = {});
  // One QueryFirst call without waiting: `done` gets the server's reply
  // decoded as a QueryBatch (valid until `done` returns) or the error. A
  // reply whose more() is set does not hold the whole answer: with a
  // resume_token() the rest follows from it, without one (a query the
  // server does not judge small) nothing was sent; either way the caller
  // goes on with QueryBatches, which a gRPC thread must not wait for.
  // For many small queries in flight (mentat-bench's read mix).
  void QueryFirstAsync(const v1::QueryRequest& request,
                       Done<const QueryBatch*> done,
                       const CallOptions& call = {});

  // The standard grpc.health.v1 Check of the whole server (no token
  // needed): OK when it answers SERVING, UNAVAILABLE when it answers
  // anything else, the call's error when it cannot be reached.
  [[nodiscard]] absl::Status Health(const CallOptions& call = {});

  // Streams a bulk import. `next` fills the next message (the database is
  // read from the first) and returns false when there are no more; it
  // runs on the calling thread, so it may read a file as it goes. Not
  // retried: a broken import is resumed by the caller from what `Stats`
  // says was imported.
  [[nodiscard]] absl::StatusOr<v1::ImportResponse> Import(
      const std::function<bool(v1::ImportRequest*)>& next,
      const CallOptions& call = {});

  // Runs a query and hands its batches to `on_batch`. Most answers come
  // whole in one unary call (QueryFirst); a longer one continues as a
  // Query stream from the first message's resume token. A stream that
  // breaks is continued from the last resume token (see
  // CallOptions::resume_attempts), so `on_batch` sees every row once; the
  // columns and find kind come only in the first message it sees. OK when
  // the answer ended or `on_batch` returned false.
  //
  // Ownership: each message is parsed onto a protobuf arena that the
  // calling thread lends this call (no heap object per Row and Value). The
  // message and everything reached from it (rows, values, strings) are
  // valid until `on_batch` returns; then they are destroyed, and the
  // arena's memory is reused by the next message and by later calls on
  // the thread. Copy what must outlive the callback, or use QueryTaking.
  // `on_batch` may make calls of its own (they get another arena).
  [[nodiscard]] absl::Status Query(
      const v1::QueryRequest& request,
      const std::function<bool(const v1::QueryResponse&)>& on_batch,
      const CallOptions& call = {});

  // As Query, but `on_batch` gets the message itself and may take its
  // contents (Swap the rows out): the client does not read it again. The
  // message is on the heap (no arena), so its rows move into any heap
  // RepeatedPtrField without a copy of each, and what was taken is the
  // caller's for as long as it likes. For callers that keep the rows.
  [[nodiscard]] absl::Status QueryTaking(
      const v1::QueryRequest& request,
      const std::function<bool(v1::QueryResponse*)>& on_batch,
      const CallOptions& call = {});

  // As Query, but each message is decoded straight from the bytes gRPC
  // received into a QueryBatch (query_batch.h): no message objects, no
  // copies of strings, one flat array of values per message. The cheapest
  // way to read an answer. The batch, and every value and string taken
  // from it, is valid until `on_batch` returns. A message that cannot be
  // decoded ends the call with INTERNAL (the batches before it were
  // delivered). `on_batch` may make calls of its own.
  [[nodiscard]] absl::Status QueryBatches(
      const v1::QueryRequest& request,
      const std::function<bool(const QueryBatch&)>& on_batch,
      const CallOptions& call = {});

  // Raw index access, resumable like Query. Each message lives on an arena
  // as Query's do: valid until `on_batch` returns.
  [[nodiscard]] absl::Status Datoms(
      const v1::DatomsRequest& request,
      const std::function<bool(const v1::DatomsResponse&)>& on_batch,
      const CallOptions& call = {});

  // The transaction log between two transactions. Each message `on_batch`
  // sees holds whole transactions: the parts of a transaction the server
  // split across messages (Transaction.continued) are joined first.
  [[nodiscard]] absl::Status TxRange(
      const v1::TxRangeRequest& request,
      const std::function<bool(const v1::TxRangeResponse&)>& on_batch,
      const CallOptions& call = {});

  // Live transactions, whole as in TxRange; runs until `on_batch` returns
  // false, the call is cancelled (CANCELLED) or the server ends it.
  [[nodiscard]] absl::Status Subscribe(
      const v1::SubscribeRequest& request,
      const std::function<bool(const v1::SubscribeResponse&)>& on_batch,
      const CallOptions& call = {});

 private:
  enum class Route { kRead, kWrite };
  struct Node {
    std::string address;
    std::shared_ptr<grpc::Channel> channel;
    // Streams' (Query, Datoms, TxRange, Subscribe): a connection of their
    // own, made when the first stream starts. On a connection that has
    // carried one stream, mentatd's callback-API threads poll for every
    // call after it, and its unary calls took twice as long.
    std::shared_ptr<grpc::Channel> stream_channel;
  };
  Client(ClientOptions options,
         std::shared_ptr<grpc::ChannelCredentials> credentials,
         std::vector<Node> nodes);
  void Prepare(grpc::ClientContext* context, const CallOptions& call) const;
  // Reads a unary call's answer from its raw bytes (which it may keep);
  // an error is the call's.
  using AnswerReader = absl::FunctionRef<absl::Status(grpc::ByteBuffer*)>;
  // A unary call of `method` ("/mentat.v1.Mentat/Pull") at one channel;
  // the answer goes to `read`.
  [[nodiscard]] absl::Status UnaryAt(grpc::Channel* channel,
                                     const CallOptions& call,
                                     const char* method,
                                     const google::protobuf::Message& request,
                                     AnswerReader read);
  // The same, routed: a read to the nodes in turn, a write to the primary
  // (following a refusal that names it).
  [[nodiscard]] absl::Status Unary(const CallOptions& call, const char* method,
                                   const google::protobuf::Message& request,
                                   AnswerReader read,
                                   Route route = Route::kRead);
  // Unary, the answer parsed into *response (on the heap or its arena).
  [[nodiscard]] absl::Status Unary(const CallOptions& call, const char* method,
                                   const google::protobuf::Message& request,
                                   google::protobuf::Message* response,
                                   Route route = Route::kRead);
  // Unary, answered with a heap message of its own.
  template <typename Response>
  [[nodiscard]] absl::StatusOr<Response> UnaryReturning(
      const CallOptions& call, const char* method,
      const google::protobuf::Message& request, Route route = Route::kRead);
  // An asynchronous unary call (TransactAsync, PingAsync); client_async.cc.
  template <typename Response>
  struct PendingUnary;
  template <typename Response>
  void StartUnary(std::unique_ptr<PendingUnary<Response>> pending,
                  const google::protobuf::Message& request);
  template <typename Response>
  void FinishUnary(std::unique_ptr<PendingUnary<Response>> pending,
                   const grpc::Status& status);
  template <typename Response>
  void UnaryAsync(const char* method, const google::protobuf::Message& request,
                  Route route, Done<Response> done, const CallOptions& call);
  // Counts a call StartUnary started out, once gRPC has let go of it.
  void AsyncCallEnded();
  // The channel of the next node for a read (round robin).
  grpc::Channel* ReadChannel();
  // The same node choice, for a stream.
  grpc::Channel* StreamChannel();
  // The next node's channel `which` (round robin); `single` with one
  // address.
  grpc::Channel* NextReadChannel(std::shared_ptr<grpc::Channel> Node::*which,
                                 grpc::Channel& single);
  // The primary's node as believed now, skipping nodes whose channel is
  // known to be down.
  Node PrimaryNode();
  // Makes `address` the primary (added to the nodes if new); its channel.
  grpc::Channel* SetPrimary(const std::string& address);
  // After a write failed at `address` for a reason other than a named
  // primary: the next write tries the next node.
  void PrimaryFailed(const std::string& address);
  // `streams`: a channel on a connection of its own (Node::stream_channel).
  std::shared_ptr<grpc::Channel> MakeChannel(const std::string& address,
                                             bool streams = false) const;
  Node MakeNode(const std::string& address) const;
  // `lease`: each message is parsed onto its arena, which is reset before
  // the next (null: one heap message, reused). `columns_seen`: the caller
  // has had the columns already (a Query that continues a QueryFirst
  // reply), so every message's are dropped. Response may be QueryBatch:
  // each message is then decoded from its bytes (no lease).
  template <typename Request, typename Response, typename Start>
  [[nodiscard]] absl::Status Stream(
      const Request& request, Start start,
      const std::function<bool(Response*)>& on_batch, const CallOptions& call,
      bool resumable, ArenaLease* lease, bool columns_seen = false);
  // Query (with `lease`), QueryTaking (without) and QueryBatches (Response
  // QueryBatch): QueryFirst, continued with Query when its reply says more.
  template <typename Response>
  [[nodiscard]] absl::Status QueryFirstThenStream(
      const v1::QueryRequest& request,
      const std::function<bool(Response*)>& on_batch, const CallOptions& call,
      ArenaLease* lease);

  ClientOptions options_;
  std::shared_ptr<grpc::ChannelCredentials> credentials_;
  // The first node's channel (single-node calls: Health, the connection
  // checks on one address).
  std::shared_ptr<grpc::Channel> channel_;
  std::shared_ptr<grpc::Channel> stream_channel_;  // the first node's
  // Given one address: every call goes to channel_ (no node is ever
  // added: only a write refused by one of several nodes names another),
  // so calls skip mu_, which every client thread would otherwise share.
  const bool single_node_;
  mutable absl::Mutex mu_;
  // Never shrinks, so channels handed out stay valid for the client's life.
  std::vector<Node> nodes_ ABSL_GUARDED_BY(mu_);
  size_t primary_ ABSL_GUARDED_BY(mu_) = 0;
  std::atomic<size_t> next_read_{0};
  std::unique_ptr<v1::Mentat::Stub> stub_;
  // Set when the server answered QueryFirst with UNIMPLEMENTED (a server
  // older than the RPC): queries then go to the Query stream directly.
  std::atomic<bool> no_query_first_{false};
  // Queries QueryFirst turned away as not small (a hash of the database,
  // the basis kind and the text; 0: none), in a table indexed by the
  // hash: the next such query goes to the stream at once instead of
  // paying a unary call that answers nothing. A slot is cleared when a
  // streamed answer comes in one message (QueryFirst may answer it whole
  // now). Lock-free: a lookup is one load, shared by all threads.
  std::array<std::atomic<uint64_t>, 64> streamed_queries_{};
  // Asynchronous calls started and not yet ended (~Client waits for 0).
  absl::Mutex async_mu_;
  int async_calls_ ABSL_GUARDED_BY(async_mu_) = 0;
};

// gRPC status to absl::Status: same code, same message.
[[nodiscard]] absl::Status FromGrpc(const grpc::Status& status);

}  // namespace mentat::client

#endif  // MENTAT_CLIENT_CLIENT_H_
