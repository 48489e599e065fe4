// Query (a server stream of row batches, resumable) and Explain (whose
// profile runs obey the same limits as Query).
//
// A query runs on one reader thread from start to end. Its rows reach the
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

#include "absl/container/flat_hash_map.h"
#include "basis.h"
#include "call.h"
#include "fingerprint.h"
#include "mentat/query/parser.h"
#include "mentat/storage/excerpt.h"
#include "mentat/storage/str_cat.h"
#include "message_size.h"
#include "query_limits.h"
#include "service.h"
#include "stream_reactor.h"
#include "value_convert.h"
#include "wire_nesting.h"

namespace mentat::server {

namespace {

// What the server needs to know of a query's text beyond what the engine
// takes: the find spec's shape and where the rules input sits.
struct QueryShape {
  query::FindSpec::Kind kind = query::FindSpec::Kind::kRelation;
  int inputs = 0;        // :in entries after the sources
  int rules_index = -1;  // among those, the `%` one
};

// Parsing a query's text costs a few microseconds; a small cache per reader
// thread avoids it for repeated queries without any shared lock.
absl::StatusOr<QueryShape> ShapeOf(const std::string& text) {
  thread_local absl::flat_hash_map<std::string, QueryShape> cache;
  if (auto it = cache.find(text); it != cache.end()) return it->second;
  auto parsed = query::ParseQuery(text);
  if (!parsed.ok()) return parsed.status();
  QueryShape shape;
  shape.kind = parsed->find.kind;
  for (const query::InputSpec& in : parsed->inputs) {
    if (in.kind == query::InputSpec::Kind::kSource) continue;
    if (in.kind == query::InputSpec::Kind::kRules) {
      shape.rules_index = shape.inputs;
    }
    ++shape.inputs;
  }
  if (cache.size() >= 512) cache.clear();
  cache.emplace(text, shape);
  return shape;
}

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

// The inputs as EDN, and the rules input taken out of them.
struct QueryInputs {
  std::vector<edn::EdnValue> values;
  std::optional<edn::EdnValue> rules;
};

absl::StatusOr<QueryInputs> ConvertInputs(
    const google::protobuf::RepeatedPtrField<v1::Input>& inputs,
    const QueryShape& shape) {
  if (inputs.size() != shape.inputs) {
    return absl::InvalidArgumentError(
        StrCat("the query's :in takes ", shape.inputs,
               " input(s) after its sources, the request has ", inputs.size()));
  }
  QueryInputs out;
  out.values.reserve(inputs.size());
  for (int i = 0; i < inputs.size(); ++i) {
    auto v = InputToEdn(inputs[i], StrCat("input ", i + 1));
    if (!v.ok()) return v.status();
    if (i == shape.rules_index) {
      out.rules = *std::move(v);
    } else {
      out.values.push_back(*std::move(v));
    }
  }
  return out;
}

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

// A message's rows whose objects StreamSink keeps for the next message.
constexpr int kReusedRows = 4096;

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
  StreamSink(QueryReactor* reactor, const v1::QueryRequest& request,
             v1::FindKind kind, storage::EntityId basis_tx,
             storage::EntityId db_tx, uint64_t request_digest,
             const v1::ResumeToken* resume, size_t batch_rows);

  absl::Status OnColumns(const std::vector<std::string>& columns) override;
  absl::Status OnRows(std::vector<query::Row>&& rows) override;
  // Sends what is pending and checks a resume that ended while skipping.
  absl::Status Finish();

  bool limit_reached() const { return limit_reached_; }
  int64_t rows_sent() const { return sent_; }

 private:
  absl::Status Flush(bool final);
  absl::Status CheckSkipped();

  QueryReactor* reactor_;
  const v1::FindKind kind_;
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
  Fingerprint digest_;
  v1::QueryResponse pending_;
  bool columns_pending_ = false;
  bool limit_reached_ = false;
};

class QueryReactor : public StreamReactor {
 public:
  QueryReactor(ServiceContext& sc, grpc::CallbackServerContext* ctx)
      : StreamReactor(sc, Method::kQuery, ctx) {}

  void Start(v1::QueryRequest request, std::shared_ptr<Database> database) {
    request_ = std::move(request);
    database_ = std::move(database);
    Ref();
    sc().readers.Post([this] {
      absl::Status s = Run();
      sc().metrics.running_queries.fetch_sub(1, std::memory_order_relaxed);
      Done(s);
      Unref();
    });
  }

  // Sends a serialized message; the `last` one also ends the stream with
  // OK.
  absl::Status Send(grpc::ByteBuffer buffer, bool last) {
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
  absl::Status Run();

  v1::QueryRequest request_;
  std::shared_ptr<Database> database_;
  std::shared_ptr<const storage::Db> db_;
  bool retained_ = false;
};

StreamSink::StreamSink(QueryReactor* reactor, const v1::QueryRequest& request,
                       v1::FindKind kind, storage::EntityId basis_tx,
                       storage::EntityId db_tx, uint64_t request_digest,
                       const v1::ResumeToken* resume, size_t batch_rows)
    : reactor_(reactor),
      kind_(kind),
      basis_tx_(basis_tx),
      limit_(request.limit()),
      batch_rows_(batch_rows),
      target_bytes_(TargetMessageBytes(reactor->sc().config)),
      max_row_bytes_(MaxItemBytes(reactor->sc().config)) {
  token_.set_version(1);
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
  for (const std::string& c : columns) pending_.add_columns(c);
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
      digest_.Add(row.size());
      for (const edn::EdnValue& v : row) digest_.Add(v);
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
    size_t row_bytes = 4;
    for (const edn::EdnValue& v : row) row_bytes += ApproxProtoBytes(v);
    if (row_bytes > max_row_bytes_) {
      return absl::ResourceExhaustedError(StrCat(
          "row ", sent_ + 1, " of the result holds about ", row_bytes,
          " bytes, more than the largest message the server sends (",
          max_row_bytes_,
          " bytes with --max-message-bytes); find fewer large values per row"));
    }
    digest_.Add(row.size());
    v1::Row* out = pending_.add_rows();
    out->mutable_values()->Reserve(static_cast<int>(row.size()));
    for (const edn::EdnValue& v : row) {
      digest_.Add(v);
      // A Row holds the values: one level below the response.
      absl::Status deep =
          CheckWireNesting(v, 1, StrCat("the value of row ", sent_ + 1));
      if (!deep.ok()) return deep;
      EdnToProto(v, out->add_values());
    }
    ++sent_;
    pending_bytes_ += row_bytes;
    if (static_cast<size_t>(pending_.rows_size()) >= batch_rows_ ||
        pending_bytes_ >= target_bytes_) {
      absl::Status s = Flush(/*final=*/false);
      if (!s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

absl::Status StreamSink::Flush(bool final) {
  if (pending_.rows_size() == 0 && !columns_pending_) return absl::OkStatus();
  // A result of one message needs no resuming; a longer one keeps its
  // database value for the resume window (one lock per long stream, none
  // per small query).
  if (!final) reactor_->RetainDb();
  columns_pending_ = false;
  token_.set_position(sent_);
  token_.set_rows_digest(digest_.value());
  pending_.set_resume_token(token_.SerializeAsString());
  pending_.set_rows_so_far(sent_);
  pending_.set_basis_tx(basis_tx_);
  reactor_->sc().metrics.AddRowsStreamed(Method::kQuery, pending_.rows_size());
  grpc::ByteBuffer buffer;
  absl::Status s = SerializeResponse(pending_, &buffer);
  if (!s.ok()) return s;
  // Emptied before Send, which parks while the client does not read: a
  // parked query holds its serialized messages and little else. Clear()
  // keeps the rows' objects for the next message; past a few thousand rows
  // they are freed instead.
  if (pending_.rows_size() > kReusedRows) {
    pending_ = v1::QueryResponse();
  } else {
    pending_.Clear();
  }
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

absl::Status QueryReactor::Run() {
  const auto started = std::chrono::steady_clock::now();
  const ServerConfig& config = sc().config;
  if (cancelled()) return absl::CancelledError("the client cancelled");

  const uint64_t digest = RequestDigest(request_);
  v1::ResumeToken token;
  const bool resuming = !request_.resume_token().empty();
  if (resuming) {
    if (!token.ParseFromString(request_.resume_token()) ||
        token.version() != 1) {
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

  auto shape = ShapeOf(request_.query());
  if (!shape.ok()) return shape.status();
  auto inputs = ConvertInputs(request_.inputs(), *shape);
  if (!inputs.ok()) return inputs.status();

  auto prepared = sc().engine.Prepare(
      request_.query(), resolved->view,
      inputs->rules.has_value() ? &*inputs->rules : nullptr);
  if (!prepared.ok()) return prepared.status();

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

  StreamSink sink(this, request_, ToProto(shape->kind), resolved->basis_tx,
                  resolved->basis_tx, digest, resuming ? &token : nullptr,
                  batch_rows);
  absl::Status s = sc().engine.Execute(**prepared, resolved->view,
                                       inputs->values, options, &sink);
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
  if (s.ok()) {
    const int64_t running =
        sc.metrics.running_queries.fetch_add(1, std::memory_order_relaxed);
    if (running >= sc.config.max_concurrent_queries) {
      sc.metrics.running_queries.fetch_sub(1, std::memory_order_relaxed);
      s = absl::ResourceExhaustedError(StrCat(
          "the server runs its maximum of ", sc.config.max_concurrent_queries,
          " concurrent queries; retry later"));
    }
  }
  if (!s.ok()) {
    reactor->Done(s);
    return reactor;
  }
  reactor->Start(std::move(request), std::move(database));
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
    const int64_t running =
        sc.metrics.running_queries.fetch_add(1, std::memory_order_relaxed);
    if (running >= sc.config.max_concurrent_queries) {
      sc.metrics.running_queries.fetch_sub(1, std::memory_order_relaxed);
      return FinishNow(call, absl::ResourceExhaustedError(
                                 StrCat("the server runs its maximum of ",
                                        sc.config.max_concurrent_queries,
                                        " concurrent queries; retry later")));
    }
  }
  sc.readers.Post([call, request, profile, database = *std::move(database)] {
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
    if (profile) {
      sc.metrics.running_queries.fetch_sub(1, std::memory_order_relaxed);
    }
    if (response.ok()) {
      call.Finish(absl::OkStatus(), &*response);
    } else {
      call.Finish(response.status());
    }
  });
  return call.reactor();
}

}  // namespace mentat::server
