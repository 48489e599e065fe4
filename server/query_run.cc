#include "query_run.h"

#include <spdlog/spdlog.h>

#include <string>
#include <utility>
#include <vector>

#include "absl/base/attributes.h"
#include "basis.h"
#include "fingerprint.h"
#include "mentat/base/excerpt.h"
#include "mentat/base/str_cat.h"
#include "message_size.h"
#include "query_limits.h"
#include "query_response_encoder.h"
#include "value_convert.h"
#include "value_limit.h"
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

// Version 3: the rows digest is a StreamFingerprint of the rows' encoded
// bytes back to back (version 2's hashed each row apart; version 1's was
// over their EDN values).
constexpr uint32_t kQueryTokenVersion = 3;

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
  // Only when set, so that tokens of requests without it stay valid
  // across an upgrade.
  if (r.with_tx_data_size() > 0) {
    f.Add(static_cast<uint64_t>(r.with_tx_data_size()));
    for (const std::string& tx_data : r.with_tx_data()) f.Add(tx_data);
  }
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

// Turns the engine's row batches into response messages.
class ResponseSink : public query::RowSink {
 public:
  // `request_digest` of a resumed request, 0 to compute it when a token is
  // first needed (a one-message answer needs none). `inline_attempt`: on
  // the gRPC thread, where a stream may only send one final message; a
  // second message ends the run with too_big_inline() set.
  ResponseSink(QueryRun* run, QueryOutput* output, v1::FindKind kind,
               storage::EntityId basis_tx, storage::EntityId db_tx,
               uint64_t request_digest, const v1::ResumeToken* resume,
               size_t batch_rows, bool inline_attempt);

  absl::Status OnColumns(const std::vector<std::string>& columns) override;
  absl::Status OnRows(std::vector<query::Row>&& rows) override;
  bool TakesValues() const override { return true; }
  absl::Status OnValueRow(const storage::Value* const* cells,
                          size_t width) override;
  // Sends what is pending and checks a resume that ended while skipping.
  [[nodiscard]] absl::Status Finish();

  bool limit_reached() const { return limit_reached_; }
  bool too_big_inline() const { return too_big_inline_; }
  // A QueryFirst reply took its message before the rows ran out.
  bool first_message_taken() const { return first_message_taken_; }
  int64_t rows_sent() const { return sent_; }

 private:
  [[nodiscard]] absl::Status Flush(bool final);
  [[nodiscard]] absl::Status CheckSkipped();
  // A row a resume passes over: its encoded bytes go into the digest.
  [[nodiscard]] absl::Status Skipped();
  // After a row was encoded into pending_ (`row_bytes` of it).
  [[nodiscard]] absl::Status Added(size_t row_bytes);
  // A row over max_row_bytes_: RESOURCE_EXHAUSTED naming it.
  [[nodiscard]] ABSL_ATTRIBUTE_NOINLINE absl::Status RowTooLarge(
      size_t row_bytes) const;

  QueryRun* const run_;
  QueryOutput* const output_;
  const v1::QueryRequest& request_;
  const v1::FindKind kind_;
  const bool inline_attempt_;
  const storage::EntityId basis_tx_;
  const int64_t limit_;
  const size_t batch_rows_;
  // A message also ends at about target_bytes_ (message_size.h).
  const size_t target_bytes_;
  const size_t max_row_bytes_;
  v1::ResumeToken token_;
  int64_t skip_ = 0;
  uint64_t expected_digest_ = 0;
  int64_t sent_ = 0;
  // Over the encoded rows of every message but a one-message answer's
  // (which needs no token), and of the rows a resume skips.
  StreamFingerprint digest_;
  QueryResponseEncoder pending_;
  std::string scratch_;  // a skipped row, encoded for the digest
  bool columns_pending_ = false;
  bool limit_reached_ = false;
  bool too_big_inline_ = false;
  bool first_message_taken_ = false;
  // No message has been sent yet.
  bool first_message_ = true;
};

ResponseSink::ResponseSink(QueryRun* run, QueryOutput* output,
                           v1::FindKind kind, storage::EntityId basis_tx,
                           storage::EntityId db_tx, uint64_t request_digest,
                           const v1::ResumeToken* resume, size_t batch_rows,
                           bool inline_attempt)
    : run_(run),
      output_(output),
      request_(run->request()),
      kind_(kind),
      inline_attempt_(inline_attempt),
      basis_tx_(basis_tx),
      limit_(request_.limit()),
      batch_rows_(batch_rows),
      target_bytes_(TargetMessageBytes(output->sc().config)),
      max_row_bytes_(MaxItemBytes(output->sc().config)) {
  token_.set_version(kQueryTokenVersion);
  token_.set_request_digest(request_digest);
  token_.set_db_tx(db_tx);
  if (resume != nullptr) {
    skip_ = resume->position();
    expected_digest_ = resume->rows_digest();
  }
}

absl::Status ResponseSink::OnColumns(const std::vector<std::string>& columns) {
  // The columns travel with the first rows: a small result is then one
  // message (sent together with the status).
  for (const std::string& c : columns) pending_.AddColumn(c);
  pending_.set_find_kind(kind_);
  columns_pending_ = true;
  return absl::OkStatus();
}

absl::Status ResponseSink::CheckSkipped() {
  if (digest_.value() == expected_digest_) return absl::OkStatus();
  return absl::AbortedError(
      "cannot resume: the query produced its rows in another order than "
      "when the token was issued (the database value was rebuilt and "
      "planned again); run the query again from the start");
}

absl::Status ResponseSink::Skipped() {
  digest_.Append(scratch_);
  ++sent_;
  if (--skip_ == 0) return CheckSkipped();
  return absl::OkStatus();
}

absl::Status ResponseSink::OnRows(std::vector<query::Row>&& rows) {
  for (query::Row& row : rows) {
    if (skip_ > 0) {
      scratch_.clear();
      QueryResponseEncoder::EncodeRow(row, &scratch_);
      absl::Status s = Skipped();
      if (!s.ok()) return s;
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
    absl::Status s = Added(pending_.AddRow(row));
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status ResponseSink::OnValueRow(const storage::Value* const* cells,
                                      size_t width) {
  // The same bytes as OnRows writes for these values' EDN values
  // (wire_encoding_test), so a resume token's digest holds across both.
  if (skip_ > 0) {
    scratch_.clear();
    QueryResponseEncoder::EncodeValueRow(cells, width, &scratch_);
    return Skipped();
  }
  if (limit_ > 0 && sent_ >= limit_) {
    limit_reached_ = true;
    return absl::CancelledError("limit reached");
  }
  return Added(pending_.AddValueRow(cells, width));
}

// Once per row of most answers: inline, with the rare refusal out of line.
inline absl::Status ResponseSink::Added(size_t row_bytes) {
  if (row_bytes > max_row_bytes_) [[unlikely]] {
    return RowTooLarge(row_bytes);
  }
  ++sent_;
  if (static_cast<size_t>(pending_.rows()) >= batch_rows_ ||
      pending_.rows_bytes().size() >= target_bytes_) {
    return Flush(/*final=*/false);
  }
  return absl::OkStatus();
}

absl::Status ResponseSink::RowTooLarge(size_t row_bytes) const {
  return absl::ResourceExhaustedError(StrCat(
      "row ", sent_ + 1, " of the result holds about ", row_bytes,
      " bytes, more than the largest message the server sends (",
      max_row_bytes_,
      " bytes with --max-message-bytes); find fewer large values per row"));
}

absl::Status ResponseSink::Flush(bool final) {
  if (pending_.rows() == 0 && !columns_pending_) return absl::OkStatus();
  const bool first_only = output_->first_message_only();
  if (!final && inline_attempt_ && !first_only) {
    // More than one message: the reader runs it (nothing was sent).
    too_big_inline_ = true;
    return absl::CancelledError("too big to answer inline");
  }
  // A result of one message needs no resuming (nor a token, nor the
  // request's digest); a longer one keeps its database value for the
  // resume window (one lock per long stream, none per small query).
  const bool one_message = final && first_message_;
  first_message_ = false;
  if (!final) run_->RetainDb();
  columns_pending_ = false;
  std::string token;
  if (!one_message) {
    if (token_.request_digest() == 0) {
      token_.set_request_digest(RequestDigest(request_));
    }
    digest_.Append(pending_.rows_bytes());
    token_.set_position(sent_);
    token_.set_rows_digest(digest_.value());
    token = token_.SerializeAsString();
  }
  output_->sc().metrics.AddRowsStreamed(
      first_only ? Method::kQueryFirst : Method::kQuery, pending_.rows());
  // Rendered (and emptied) before Send, which parks while the client does
  // not read: a parked query holds its serialized messages and little else.
  grpc::ByteBuffer buffer;
  const bool more = first_only && !final;
  pending_.Render(basis_tx_, token, sent_, more, &buffer);
  // A deleted database ends its queries (NOT_FOUND), as the proto says.
  absl::Status s = run_->CheckLive();
  if (s.ok()) s = output_->Send(std::move(buffer), final || first_only);
  if (s.ok() && more) {
    // The reply is complete; the engine stops here.
    first_message_taken_ = true;
    return absl::CancelledError("the first message was taken");
  }
  return s;
}

absl::Status ResponseSink::Finish() {
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

}  // namespace

QueryRun::QueryRun(QueryOutput* output, v1::QueryRequest request,
                   std::shared_ptr<Database> database)
    : output_(output),
      request_(std::move(request)),
      database_(std::move(database)) {}

void QueryRun::RetainDb() {
  if (retained_ || db_ == nullptr) return;
  retained_ = true;
  database_->Retain(db_);
}

absl::Status QueryRun::Run(bool inline_attempt, bool* too_big_inline) {
  *too_big_inline = false;
  const auto started = std::chrono::steady_clock::now();
  ServiceContext& sc = output_->sc();
  const ServerConfig& config = sc.config;
  if (output_->cancel_flag()->load(std::memory_order_acquire)) {
    return absl::CancelledError("the client cancelled");
  }

  v1::ResumeToken token;
  const bool resuming = !request_.resume_token().empty();
  if (resuming && inline_attempt) {
    *too_big_inline = true;  // it skips rows: not a small answer
    return absl::OkStatus();
  }
  if (inline_attempt && request_.with_tx_data_size() > 0 &&
      !output_->first_message_only()) {
    // A stream's inline attempt is on the gRPC thread: speculative
    // transactions are applied on a reader (QueryFirst runs there).
    *too_big_inline = true;
    return absl::OkStatus();
  }
  const uint64_t digest = resuming ? RequestDigest(request_) : 0;
  if (resuming) {
    if (!token.ParseFromString(request_.resume_token())) {
      return absl::InvalidArgumentError("resume_token is not a valid token");
    }
    if (token.version() != kQueryTokenVersion) {
      return absl::InvalidArgumentError(StrCat(
          "resume_token is of version ", token.version(),
          ", this server's are ", kQueryTokenVersion,
          " (made before an upgrade?): run the query again from the start"));
    }
    if (token.request_digest() != digest) {
      return absl::InvalidArgumentError(
          "resume_token belongs to another request (database, query, inputs, "
          "basis and with_tx_data must be those of the original)");
    }
  }
  // A resume applies the with_tx_data again to the same committed value:
  // the same ids (the clock's instant aside).
  auto resolved =
      ResolveBasis(*database_, request_.basis(), resuming ? token.db_tx() : 0,
                   WithTxData{&request_.with_tx_data(), MaxValueBytes(config)});
  if (!resolved.ok()) return resolved.status();
  db_ = resolved->committed;

  auto inputs = ConvertInputs(request_.inputs());
  if (!inputs.ok()) return inputs.status();
  // The engine parses the text once (cached) and takes the rules input out.
  auto prepared =
      sc.engine.PrepareCall(request_.query(), resolved->view, &*inputs);
  if (!prepared.ok()) return prepared.status();
  if (inline_attempt &&
      !((*prepared)->shape().estimated_rows <= kInlineEstimate)) {
    *too_big_inline = true;
    return absl::OkStatus();
  }

  QueryLimits limits(config, started, output_->deadline(),
                     request_.timeout_ms(), output_->cancel_flag(), "query");
  query::QueryOptions& options = limits.mutable_options();
  size_t batch_rows = static_cast<size_t>(config.batch_rows);
  if (request_.batch_rows() > 0) {
    batch_rows = std::min<size_t>(request_.batch_rows(), 100000);
  }
  // The engine hands over at most 1,000 rows (or 256 KiB of values) at a
  // time, whatever the message size asked for: a query whose client does
  // not read parks holding one such batch, and 100,000-row batches made
  // each unread stream hold about 45 MB. ResponseSink joins them into
  // messages of `batch_rows` rows (or TargetMessageBytes).
  options.batch_rows = std::min<size_t>(batch_rows, 1000);
  options.batch_bytes = TargetMessageBytes(config);
  const uint64_t scan_limit = options.max_rows_scanned;
  const bool capped =
      inline_attempt && (scan_limit == 0 || scan_limit > kInlineScan);
  if (capped) options.max_rows_scanned = kInlineScan;

  ResponseSink sink(this, output_, ToProto((*prepared)->shape().kind),
                    resolved->basis_tx, resolved->basis_tx, digest,
                    resuming ? &token : nullptr, batch_rows, inline_attempt);
  absl::Status s =
      sc.engine.Execute(**prepared, resolved->view, *inputs, options, &sink);
  if (sink.first_message_taken()) {
    s = absl::OkStatus();  // a QueryFirst reply, complete
  } else {
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
  }

  const auto elapsed = std::chrono::steady_clock::now() - started;
  const int64_t ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count();
  if (ms >= config.slow_query_ms) {
    sc.metrics.AddSlowQuery();
    spdlog::warn(
        "slow query: {} ms, {} rows, database {}, basis {}, status {}: {}", ms,
        sink.rows_sent(), database_->name(), resolved->basis_tx,
        absl::StatusCodeToString(s.code()), Abbreviate(request_.query(), 300));
  }
  return s;
}

}  // namespace mentat::server
