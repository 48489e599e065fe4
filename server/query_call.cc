// Query (a server stream of row batches, resumable) and Explain (whose
// profile runs obey the same limits as Query).
//
// A small query runs inline on the gRPC thread (--inline-point-reads):
// when the planner expects few rows, the first attempt runs here with a
// small scan budget and may only produce a one-message answer. A query
// that turns out bigger (its scan budget spent, or a second message
// needed) has sent nothing yet; it runs again on a reader from the start,
// which the engine's determinism makes exact. Otherwise a query runs on
// one reader thread from start to end. Its rows reach the
// client through StreamReactor::PushBlocking: with two messages waiting the
// thread parks until gRPC has sent one, so memory stays at a few batches
// whatever the result's size, and a slow client slows its own query only.
//
// Resuming re-runs the query on the same database value and skips the
// rows already sent. That is exact because the engine is deterministic:
// the same plan on the same Db yields the same rows in the same order. The
// server keeps the Db of recent streams (Database::Retain) so a resumed
// query reads the very same value and statistics; when the value is gone
// (a restart), LATEST and AS_OF reads are rebuilt as of the token's db_tx,
// and a fingerprint of the skipped rows proves the order held (ABORTED if
// not).

#include <spdlog/spdlog.h>

#include <memory>

#include "basis.h"
#include "call.h"
#include "fingerprint.h"
#include "mentat/base/excerpt.h"
#include "mentat/base/str_cat.h"
#include "message_size.h"
#include "query_limits.h"
#include "service.h"
#include "stream_reactor.h"
#include "value_convert.h"
#include "wire_encoding.h"
#include "wire_nesting.h"

namespace mentat::server {

namespace {

v1::FindKind ToProto(query::FindSpec::Kind kind) {
  switch (kind) {
    case query::FindSpec::Kind::kRelation:
      return v1::FIND_RELATION;
    case query::FindSpec::Kind::kCollection:
      return v1::FIND_COLLECTION;
    case query::FindSpec::Kind::kTuple:
      return v1::FIND_TUPLE;
    case query::FindSpec::Kind::kScalar:
      return v1::FIND_SCALAR;
  }
  return v1::FIND_RELATION;
}

// The inputs as EDN, every one after the query's sources in :in order.
[[nodiscard]] absl::StatusOr<std::vector<edn::EdnValue>> ConvertInputs(
    const google::protobuf::RepeatedPtrField<v1::Input>& inputs) {
  std::vector<edn::EdnValue> values;
  values.reserve(inputs.size());
  for (int i = 0; i < inputs.size(); ++i) {
    auto v = InputToEdn(inputs[i], StrCat("input ", i + 1));
    if (!v.ok()) return v.status();
    values.push_back(*std::move(v));
  }
  return values;
}

// Version 2: the rows digest is over the rows' encoded bytes (version 1's
// was over their EDN values).
constexpr uint32_t kQueryTokenVersion = 2;

// The request's fingerprint: what a resume token must match.
uint64_t RequestDigest(const v1::QueryRequest& r) {
  Fingerprint f;
  f.Add(r.database().empty() ? std::string_view("default") : r.database());
  f.Add(r.query());
  f.Add(static_cast<uint64_t>(r.inputs_size()));
  for (const v1::Input& in : r.inputs()) f.Add(in.SerializeAsString());
  f.Add(static_cast<uint64_t>(r.basis().kind()));
  f.Add(static_cast<uint64_t>(r.basis().point_case()));
  f.Add(static_cast<uint64_t>(r.basis().tx()));
  f.Add(static_cast<uint64_t>(r.basis().instant_micros()));
  return f.value();
}

// The query text for the slow-query log: an excerpt, on one line.
std::string Abbreviate(std::string_view text, size_t max) {
  std::string out = Excerpt(text, max);
  for (char& c : out) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  return out;
}

class QueryReactor;

// Turns the engine's row batches into stream messages.
class StreamSink : public query::RowSink {
 public:
  // `request_digest` of a resumed request, 0 to compute it when a token is
  // first needed (a one-message answer needs none). `inline_attempt`: on
  // the gRPC thread, where only one final message may be sent; a second
  // message ends the run with too_big_inline() set.
  StreamSink(QueryReactor* reactor, const v1::QueryRequest& request,
             v1::FindKind kind, storage::EntityId basis_tx,
             storage::EntityId db_tx, uint64_t request_digest,
             const v1::ResumeToken* resume, size_t batch_rows,
             bool inline_attempt);

  [[nodiscard]] absl::Status OnColumns(
      const std::vector<std::string>& columns) override;
  [[nodiscard]] absl::Status OnRows(std::vector<query::Row>&& rows) override;
  // Sends what is pending and checks a resume that ended while skipping.
  [[nodiscard]] absl::Status Finish();

  bool limit_reached() const { return limit_reached_; }
  bool too_big_inline() const { return too_big_inline_; }
  int64_t rows_sent() const { return sent_; }

 private:
  [[nodiscard]] absl::Status Flush(bool final);
  [[nodiscard]] absl::Status CheckSkipped();

  QueryReactor* reactor_;
  const v1::QueryRequest& request_;
  const v1::FindKind kind_;
  const bool inline_attempt_;
  const storage::EntityId basis_tx_;
  const int64_t limit_;
  const size_t batch_rows_;
  // A message also ends at about target_bytes_ (message_size.h).
  const size_t target_bytes_;
  const size_t max_row_bytes_;
  size_t pending_bytes_ = 0;
  v1::ResumeToken token_;
  int64_t skip_ = 0;
  uint64_t expected_digest_ = 0;
  int64_t sent_ = 0;
  // Over the encoded rows of every message but a one-message answer's
  // (which needs no token), and of the rows a resume skips.
  Fingerprint digest_;
  QueryResponseEncoder pending_;
  std::string scratch_;  // a skipped row, encoded for the digest
  bool columns_pending_ = false;
  bool limit_reached_ = false;
  bool too_big_inline_ = false;
  // No message has been sent yet.
  bool first_message_ = true;
};

class QueryReactor : public StreamReactor {
 public:
  QueryReactor(ServiceContext& sc, grpc::CallbackServerContext* ctx)
      : StreamReactor(sc, Method::kQuery, ctx) {}

  void Start(v1::QueryRequest request, std::shared_ptr<Database> database) {
    request_ = std::move(request);
    database_ = std::move(database);
    if (sc().config.inline_point_reads) {
      bool too_big = false;
      absl::Status s = Run(/*inline_attempt=*/true, &too_big);
      if (!too_big) {
        ReleaseQuerySlot(sc().metrics);
        Done(s);
        return;
      }
    }
    Ref();
    sc().readers.Post([this] {
      bool unused = false;
      absl::Status s = Run(/*inline_attempt=*/false, &unused);
      ReleaseQuerySlot(sc().metrics);
      Done(s);
      Unref();
    });
  }

  // Sends a serialized message; the `last` one also ends the stream with
  // OK.
  [[nodiscard]] absl::Status Send(grpc::ByteBuffer buffer, bool last) {
    // A deleted database ends its streams (NOT_FOUND), as the proto says.
    absl::Status s = database_->CheckLive();
    if (!s.ok()) return s;
    if (last) {
      Push(std::move(buffer), /*last=*/true);
      return absl::OkStatus();
    }
    return PushBlocking(std::move(buffer));
  }

  void RetainDb() {
    if (retained_ || db_ == nullptr) return;
    retained_ = true;
    database_->Retain(db_);
  }

 private:
  // One run of the query. `inline_attempt`: on the gRPC thread, where it
  // gives up (sets `*too_big_inline`, sends nothing) when the plan expects
  // many rows, past kInlineScan datoms and rows, or past one message.
  [[nodiscard]] absl::Status Run(bool inline_attempt, bool* too_big_inline);

  v1::QueryRequest request_;
  std::shared_ptr<Database> database_;
  std::shared_ptr<const storage::Db> db_;
  bool retained_ = false;
};

StreamSink::StreamSink(QueryReactor* reactor, const v1::QueryRequest& request,
                       v1::FindKind kind, storage::EntityId basis_tx,
                       storage::EntityId db_tx, uint64_t request_digest,
                       const v1::ResumeToken* resume, size_t batch_rows,
                       bool inline_attempt)
    : reactor_(reactor),
      request_(request),
      kind_(kind),
      inline_attempt_(inline_attempt),
      basis_tx_(basis_tx),
      limit_(request.limit()),
      batch_rows_(batch_rows),
      target_bytes_(TargetMessageBytes(reactor->sc().config)),
      max_row_bytes_(MaxItemBytes(reactor->sc().config)) {
  token_.set_version(kQueryTokenVersion);
  token_.set_request_digest(request_digest);
  token_.set_db_tx(db_tx);
  if (resume != nullptr) {
    skip_ = resume->position();
    expected_digest_ = resume->rows_digest();
  }
}

absl::Status StreamSink::OnColumns(const std::vector<std::string>& columns) {
  // The columns travel with the first rows: a small result is then one
  // message (sent together with the status).
  for (const std::string& c : columns) pending_.AddColumn(c);
  pending_.set_find_kind(kind_);
  columns_pending_ = true;
  return absl::OkStatus();
}

absl::Status StreamSink::CheckSkipped() {
  if (digest_.value() == expected_digest_) return absl::OkStatus();
  return absl::AbortedError(
      "cannot resume: the query produced its rows in another order than "
      "when the token was issued (the database value was rebuilt and "
      "planned again); run the query again from the start");
}

absl::Status StreamSink::OnRows(std::vector<query::Row>&& rows) {
  for (query::Row& row : rows) {
    if (skip_ > 0) {
      scratch_.clear();
      QueryResponseEncoder::EncodeRow(row, &scratch_);
      digest_.Add(scratch_);
      ++sent_;
      if (--skip_ == 0) {
        absl::Status s = CheckSkipped();
        if (!s.ok()) return s;
      }
      continue;
    }
    if (limit_ > 0 && sent_ >= limit_) {
      limit_reached_ = true;
      return absl::CancelledError("limit reached");
    }
    for (const edn::EdnValue& v : row) {
      if (!v.is_collection() && !v.is_tagged()) continue;
      // A Row holds the values: one level below the response.
      absl::Status deep =
          CheckWireNesting(v, 1, StrCat("the value of row ", sent_ + 1));
      if (!deep.ok()) return deep;
    }
    // Encoded straight into the message's bytes (no Value objects).
    const size_t row_bytes = pending_.AddRow(row);
    if (row_bytes > max_row_bytes_) {
      return absl::ResourceExhaustedError(StrCat(
          "row ", sent_ + 1, " of the result holds about ", row_bytes,
          " bytes, more than the largest message the server sends (",
          max_row_bytes_,
          " bytes with --max-message-bytes); find fewer large values per row"));
    }
    ++sent_;
    pending_bytes_ += row_bytes;
    if (static_cast<size_t>(pending_.rows()) >= batch_rows_ ||
        pending_bytes_ >= target_bytes_) {
      absl::Status s = Flush(/*final=*/false);
      if (!s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

absl::Status StreamSink::Flush(bool final) {
  if (pending_.rows() == 0 && !columns_pending_) return absl::OkStatus();
  if (!final && inline_attempt_) {
    // More than one message: the reader runs it (nothing was sent).
    too_big_inline_ = true;
    return absl::CancelledError("too big to answer inline");
  }
  // A result of one message needs no resuming (nor a token, nor the
  // request's digest); a longer one keeps its database value for the
  // resume window (one lock per long stream, none per small query).
  const bool one_message = final && first_message_;
  first_message_ = false;
  if (!final) reactor_->RetainDb();
  columns_pending_ = false;
  std::string token;
  if (!one_message) {
    if (token_.request_digest() == 0) {
      token_.set_request_digest(RequestDigest(request_));
    }
    for (int i = 0; i < pending_.rows(); ++i) digest_.Add(pending_.row(i));
    token_.set_position(sent_);
    token_.set_rows_digest(digest_.value());
    token = token_.SerializeAsString();
  }
  reactor_->sc().metrics.AddRowsStreamed(Method::kQuery, pending_.rows());
  // Rendered (and emptied) before Send, which parks while the client does
  // not read: a parked query holds its serialized messages and little else.
  grpc::ByteBuffer buffer;
  pending_.Render(basis_tx_, token, sent_, &buffer);
  pending_bytes_ = 0;
  return reactor_->Send(std::move(buffer), final);
}

absl::Status StreamSink::Finish() {
  if (skip_ > 0) {
    return absl::AbortedError(
        StrCat("cannot resume: the query now has ", sent_,
               " rows, fewer than the token's position; run it again from the "
               "start"));
  }
  return Flush(/*final=*/true);
}

// A query runs inline only while it stays this small (datoms and rows
// stepped through), and only when the planner expects at most
// kInlineEstimate rows: about what a hand-off to a reader costs.
constexpr uint64_t kInlineScan = 4096;
constexpr double kInlineEstimate = 1024;

absl::Status QueryReactor::Run(bool inline_attempt, bool* too_big_inline) {
  *too_big_inline = false;
  const auto started = std::chrono::steady_clock::now();
  const ServerConfig& config = sc().config;
  if (cancelled()) return absl::CancelledError("the client cancelled");

  v1::ResumeToken token;
  const bool resuming = !request_.resume_token().empty();
  if (resuming && inline_attempt) {
    *too_big_inline = true;  // it skips rows: not a small answer
    return absl::OkStatus();
  }
  const uint64_t digest = resuming ? RequestDigest(request_) : 0;
  if (resuming) {
    if (!token.ParseFromString(request_.resume_token()) ||
        token.version() != kQueryTokenVersion) {
      return absl::InvalidArgumentError("resume_token is not a valid token");
    }
    if (token.request_digest() != digest) {
      return absl::InvalidArgumentError(
          "resume_token belongs to another request (database, query, inputs "
          "and basis must be those of the original)");
    }
  }
  auto resolved =
      ResolveBasis(*database_, request_.basis(), resuming ? token.db_tx() : 0);
  if (!resolved.ok()) return resolved.status();
  db_ = resolved->db;

  auto inputs = ConvertInputs(request_.inputs());
  if (!inputs.ok()) return inputs.status();
  // The engine parses the text once (cached) and takes the rules input out.
  auto prepared =
      sc().engine.PrepareCall(request_.query(), resolved->view, &*inputs);
  if (!prepared.ok()) return prepared.status();
  if (inline_attempt &&
      !((*prepared)->shape().estimated_rows <= kInlineEstimate)) {
    *too_big_inline = true;
    return absl::OkStatus();
  }

  QueryLimits limits(config, started, deadline(), request_.timeout_ms(),
                     cancel_flag(), "query");
  query::QueryOptions& options = limits.mutable_options();
  size_t batch_rows = static_cast<size_t>(config.batch_rows);
  if (request_.batch_rows() > 0) {
    batch_rows = std::min<size_t>(request_.batch_rows(), 100000);
  }
  // The engine hands over at most 1,000 rows (or 256 KiB of values) at a
  // time, whatever the message size asked for: a query whose client does
  // not read parks holding one such batch, and 100,000-row batches made
  // each unread stream hold about 45 MB. StreamSink joins them into
  // messages of `batch_rows` rows (or TargetMessageBytes).
  options.batch_rows = std::min<size_t>(batch_rows, 1000);
  options.batch_bytes = TargetMessageBytes(config);
  const uint64_t scan_limit = options.max_rows_scanned;
  const bool capped =
      inline_attempt && (scan_limit == 0 || scan_limit > kInlineScan);
  if (capped) options.max_rows_scanned = kInlineScan;

  StreamSink sink(this, request_, ToProto((*prepared)->shape().kind),
                  resolved->basis_tx, resolved->basis_tx, digest,
                  resuming ? &token : nullptr, batch_rows, inline_attempt);
  absl::Status s =
      sc().engine.Execute(**prepared, resolved->view, *inputs, options, &sink);
  if (sink.too_big_inline() ||
      (capped && s.code() == absl::StatusCode::kResourceExhausted)) {
    // Nothing was sent: the reader runs it from the start. (A
    // ResourceExhausted of another limit comes back from there.)
    *too_big_inline = true;
    return absl::OkStatus();
  }
  if (sink.limit_reached()) s = absl::OkStatus();
  if (s.ok()) s = sink.Finish();
  s = limits.Outcome(s);

  const auto elapsed = std::chrono::steady_clock::now() - started;
  const int64_t ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count();
  if (ms >= config.slow_query_ms) {
    sc().metrics.AddSlowQuery();
    spdlog::warn(
        "slow query: {} ms, {} rows, database {}, basis {}, status {}: {}", ms,
        sink.rows_sent(), database_->name(), resolved->basis_tx,
        absl::StatusCodeToString(s.code()), Abbreviate(request_.query(), 300));
  }
  return s;
}

}  // namespace

Writer* HandleQuery(ServiceContext& sc, Ctx* ctx, const Buf* req) {
  auto* reactor = new QueryReactor(sc, ctx);
  v1::QueryRequest request;
  absl::Status s = Admit(sc, ctx);
  if (s.ok()) s = ParseRequest(*req, &request);
  std::shared_ptr<Database> database;
  if (s.ok()) {
    auto db = sc.registry.Get(request.database());
    if (db.ok()) {
      database = *std::move(db);
    } else {
      s = db.status();
    }
  }
  if (!s.ok()) {
    reactor->Done(s);
    return reactor;
  }
  // Read-your-writes: the query starts once the database has the basis
  // (and takes its slot then, so that waiting holds none).
  const int64_t min_basis = request.min_basis_tx();
  auto shared = std::make_shared<v1::QueryRequest>(std::move(request));
  AfterMinBasis(sc, database, min_basis, SteadyDeadline(ctx),
                [&sc, reactor, shared, database](absl::Status ready) {
                  if (ready.ok()) ready = TakeQuerySlot(sc.config, sc.metrics);
                  if (!ready.ok()) return reactor->Done(ready);
                  reactor->Start(std::move(*shared), database);
                });
  return reactor;
}

// Explain. With `profile` the query runs, so it runs as Query does: it
// takes one of the --max-concurrent-queries slots (RESOURCE_EXHAUSTED when
// none is free), and the engine stops it at the call's deadline, when the
// client cancels, or past the per-query memory budget.
Unary* HandleExplain(ServiceContext& sc, Ctx* ctx, const Buf* req, Buf* resp) {
  UnaryCall call(sc, Method::kExplain, ctx, resp);
  auto request = std::make_shared<v1::ExplainRequest>();
  absl::Status s = call.Begin(req, request.get());
  if (!s.ok()) return FinishNow(call, s);
  auto database = sc.registry.Get(request->database());
  if (!database.ok()) return FinishNow(call, database.status());
  const bool profile = request->profile();
  if (profile) {
    s = TakeQuerySlot(sc.config, sc.metrics);
    if (!s.ok()) return FinishNow(call, s);
  }
  std::shared_ptr<Database> db = *std::move(database);
  auto explain = [call, request, profile, database = db] {
    ServiceContext& sc = call.sc();
    auto run = [&]() -> absl::StatusOr<v1::ExplainResponse> {
      absl::Status s = call.StillWanted();
      if (!s.ok()) return s;
      auto resolved = ResolveBasis(*database, request->basis());
      if (!resolved.ok()) return resolved.status();
      std::vector<edn::EdnValue> inputs;
      for (int i = 0; i < request->inputs_size(); ++i) {
        auto v = InputToEdn(request->inputs(i), StrCat("input ", i + 1));
        if (!v.ok()) return v.status();
        inputs.push_back(*std::move(v));
      }
      QueryLimits limits(sc.config, call.start(),
                         SteadyDeadline(call.context()), 0, call.cancel_flag(),
                         "query");
      auto plan = sc.engine.Explain(request->query(), resolved->view, inputs,
                                    profile, limits.options());
      if (!plan.ok()) return limits.Outcome(plan.status());
      v1::ExplainResponse response;
      response.set_plan(*std::move(plan));
      response.set_basis_tx(resolved->basis_tx);
      return response;
    };
    absl::StatusOr<v1::ExplainResponse> response = run();
    if (profile) ReleaseQuerySlot(sc.metrics);
    if (response.ok()) {
      call.Finish(absl::OkStatus(), &*response);
    } else {
      call.Finish(response.status());
    }
  };
  // Read-your-writes: the plan is made once the database has the basis.
  AfterMinBasis(sc, db, request->min_basis_tx(), SteadyDeadline(ctx),
                [call, explain, profile](absl::Status ready) {
                  if (!ready.ok()) {
                    if (profile) ReleaseQuerySlot(call.sc().metrics);
                    return call.Finish(ready);
                  }
                  call.sc().readers.Post(explain);
                });
  return call.reactor();
}

}  // namespace mentat::server
