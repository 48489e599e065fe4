// Client's streaming calls: Query (QueryFirst, continued as a stream),
// Datoms, TxRange and Subscribe, over raw messages the client parses.

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "arena_lease.h"
#include "mentat/client/client.h"
#include "response_parser.h"
#include "stream_reader.h"

namespace mentat::client {

namespace {

// Streams receive raw messages and parse them here. gRPC's typed reader
// ends a stream at a message that does not parse (one nested deeper than
// protobuf's limit of 100, say) as if the stream were complete, and the
// server's OK then made a truncated result look whole.
std::unique_ptr<StreamReader> StartStream(
    grpc::Channel* channel, const char* method, grpc::ClientContext* context,
    const google::protobuf::Message& request, int poll_us) {
  return StartStreamReader(channel, method, context, request,
                           std::chrono::microseconds(poll_us));
}

// A QueryBatch lent to one QueryBatches call from a pool the calling
// thread keeps, so that its arrays keep their capacity from call to call
// (growing them anew took a fifth of a 1,600-row answer's decoding). A
// batch that grew past kKeepBytes is freed instead of kept. A call made
// inside another's callback gets a batch of its own.
class BatchLease {
 public:
  static constexpr size_t kKeepBytes = 1 << 20;

  BatchLease() {
    std::vector<std::unique_ptr<QueryBatch>>& pool = Pool();
    if (pool.empty()) {
      batch_ = std::make_unique<QueryBatch>();
    } else {
      batch_ = std::move(pool.back());
      pool.pop_back();
    }
  }
  ~BatchLease() {
    if (batch_->memory_bytes() <= kKeepBytes) {
      Pool().push_back(std::move(batch_));
    }
  }
  BatchLease(const BatchLease&) = delete;
  BatchLease& operator=(const BatchLease&) = delete;

  QueryBatch* get() const { return batch_.get(); }

 private:
  static std::vector<std::unique_ptr<QueryBatch>>& Pool() {
    thread_local std::vector<std::unique_ptr<QueryBatch>> pool;
    return pool;
  }
  std::unique_ptr<QueryBatch> batch_;
};

// Parses a raw stream message into *message: onto the lease's arena when
// there is one (the previous message's callback has returned, so its
// memory may be reused and a long stream holds about one message at a
// time), else into the heap message *message points at.
template <typename Response>
bool ParseMessage(grpc::ByteBuffer* raw, ArenaLease* lease,
                  Response** message) {
  if (lease != nullptr) {
    lease->Recycle();
    if constexpr (std::is_same_v<Response, v1::QueryResponse>) {
      *message = lease->query_response();
    } else {
      *message =
          google::protobuf::Arena::CreateMessage<Response>(lease->arena());
    }
  }
  return ParseResponse(raw, *message);
}

}  // namespace

template <typename Request, typename Response, typename Start>
absl::Status Client::Stream(const Request& original, Start start,
                            const std::function<bool(Response*)>& on_batch,
                            const CallOptions& call, bool resumable,
                            ArenaLease* lease, bool columns_seen) {
  constexpr bool kIsBatch = std::is_same_v<Response, QueryBatch>;
  constexpr bool kIsQuery =
      kIsBatch || std::is_same_v<Response, v1::QueryResponse>;
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
    std::unique_ptr<StreamReader> reader = start(&context, *request);
    grpc::ByteBuffer raw;
    Response heap_message;
    Response* message = &heap_message;
    std::optional<BatchLease> batch_lease;
    if constexpr (kIsBatch) message = batch_lease.emplace().get();
    bool stopped = false;
    bool unreadable = false;
    // QueryBatch: the message's bytes (one slice of gRPC's, or a copy).
    grpc::Slice slice;
    std::string scratch;
    std::string why_unreadable;
    while (reader->Read(&raw)) {
      bool parsed;
      if constexpr (kIsBatch) {
        absl::Status s = DecodeResponse(raw, &slice, &scratch, message);
        parsed = s.ok();
        if (!parsed) why_unreadable = std::string(s.message());
      } else {
        parsed = ParseMessage(&raw, lease, &message);
      }
      if (!parsed) {
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
          resumed.set_resume_token(message->resume_token().data(),
                                   message->resume_token().size());
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
      if constexpr (kIsBatch) {
        return absl::InternalError(why_unreadable +
                                   "; the messages before it were delivered");
      } else {
        return absl::InternalError(
            "a " + Response::descriptor()->full_name() +
            " from the server could not be parsed (a value nested deeper "
            "than protobuf's limit of 100, or a corrupt message); the "
            "messages before it were delivered");
      }
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

template <typename Response>
absl::Status Client::QueryFirstThenStream(
    const v1::QueryRequest& request,
    const std::function<bool(Response*)>& on_batch, const CallOptions& call,
    ArenaLease* lease) {
  const auto start_stream = [&](grpc::ClientContext* ctx,
                                const v1::QueryRequest& r) {
    return StartStream(StreamChannel(), "/mentat.v1.Mentat/Query", ctx, r,
                       options_.poll_us);
  };
  // A request that resumes is a stream's business from the start.
  if (!options_.query_first || !request.resume_token().empty() ||
      no_query_first_.load(std::memory_order_relaxed)) {
    return Stream<v1::QueryRequest, Response>(request, start_stream, on_batch,
                                              call, true, lease);
  }
  const uint64_t key = std::max<uint64_t>(
      1, std::hash<std::string_view>()(request.query()) ^
             std::hash<std::string_view>()(request.database()) * 31 ^
             static_cast<uint64_t>(request.basis().kind()) << 56);
  std::atomic<uint64_t>& slot =
      streamed_queries_[key % streamed_queries_.size()];
  if (slot.load(std::memory_order_relaxed) == key) {
    int messages = 0;
    absl::Status s = Stream<v1::QueryRequest, Response>(
        request, start_stream,
        [&](Response* m) {
          ++messages;
          return on_batch(m);
        },
        call, true, lease);
    if (s.ok() && messages <= 1) {
      uint64_t expected = key;
      slot.compare_exchange_strong(expected, 0, std::memory_order_relaxed);
    }
    return s;
  }
  const auto started = std::chrono::steady_clock::now();
  Response heap_first;
  Response* first = &heap_first;
  std::optional<BatchLease> batch_lease;
  // QueryBatch: the reply's bytes, which the batch reads in place.
  grpc::ByteBuffer raw_first;
  grpc::Slice slice;
  std::string scratch;
  absl::Status first_status;
  if constexpr (std::is_same_v<Response, QueryBatch>) {
    first = batch_lease.emplace().get();
    first_status =
        Unary(call, "/mentat.v1.Mentat/QueryFirst", request,
              [&](grpc::ByteBuffer* raw) {
                raw_first = std::move(*raw);
                return DecodeResponse(raw_first, &slice, &scratch, first);
              });
  } else {
    if (lease != nullptr) first = lease->query_response();
    first_status = Unary(call, "/mentat.v1.Mentat/QueryFirst", request,
                         static_cast<google::protobuf::Message*>(first));
  }
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
    return Stream<v1::QueryRequest, Response>(request, start_stream, on_batch,
                                              call, true, lease);
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
    // Not a small query: nothing was sent; the stream runs it (and runs
    // it at once next time).
    slot.store(key, std::memory_order_relaxed);
    return Stream<v1::QueryRequest, Response>(request, start_stream, on_batch,
                                              remaining(), true, lease);
  }
  v1::QueryRequest rest;
  if (more) {
    rest = request;
    rest.set_resume_token(first->resume_token().data(),
                          first->resume_token().size());
  }
  if (!on_batch(first) || !more) return absl::OkStatus();
  return Stream<v1::QueryRequest, Response>(rest, start_stream, on_batch,
                                            remaining(), true, lease,
                                            /*columns_seen=*/true);
}

absl::Status Client::Query(
    const v1::QueryRequest& request,
    const std::function<bool(const v1::QueryResponse&)>& on_batch,
    const CallOptions& call) {
  ArenaLease lease;
  return QueryFirstThenStream<v1::QueryResponse>(
      request, [&](v1::QueryResponse* m) { return on_batch(*m); }, call,
      &lease);
}

absl::Status Client::QueryBatches(
    const v1::QueryRequest& request,
    const std::function<bool(const QueryBatch&)>& on_batch,
    const CallOptions& call) {
  return QueryFirstThenStream<QueryBatch>(
      request, [&](QueryBatch* b) { return on_batch(*b); }, call,
      /*lease=*/nullptr);
}

absl::Status Client::QueryTaking(
    const v1::QueryRequest& request,
    const std::function<bool(v1::QueryResponse*)>& on_batch,
    const CallOptions& call) {
  return QueryFirstThenStream<v1::QueryResponse>(request, on_batch, call,
                                                 /*lease=*/nullptr);
}

absl::Status Client::Datoms(
    const v1::DatomsRequest& request,
    const std::function<bool(const v1::DatomsResponse&)>& on_batch,
    const CallOptions& call) {
  ArenaLease lease;
  return Stream<v1::DatomsRequest, v1::DatomsResponse>(
      request,
      [&](grpc::ClientContext* ctx, const v1::DatomsRequest& r) {
        return StartStream(StreamChannel(), "/mentat.v1.Mentat/Datoms", ctx, r,
                           options_.poll_us);
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
        return StartStream(StreamChannel(), "/mentat.v1.Mentat/TxRange", ctx, r,
                           options_.poll_us);
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
        return StartStream(StreamChannel(), "/mentat.v1.Mentat/Subscribe", ctx,
                           r, options_.poll_us);
      },
      [&, joiner = TransactionJoiner<v1::SubscribeResponse>()](
          v1::SubscribeResponse* message) mutable {
        v1::SubscribeResponse whole;
        return !joiner.Join(*message, &whole) || on_batch(whole);
      },
      call, false, /*lease=*/nullptr);
}

}  // namespace mentat::client
