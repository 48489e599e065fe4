// Query (a server stream of row batches, resumable), QueryFirst (the same
// query in one unary call: the whole answer, or its first message) and
// Explain (whose profile runs obey the same limits as Query).
//
// A small query runs inline on the gRPC thread (--inline-point-reads): see
// query_run.h. Otherwise a query runs on one reader thread from start to
// end. A stream's rows reach the client through
// StreamReactor::PushBlocking: with two messages waiting the thread parks
// until gRPC has sent one, so memory stays at a few batches whatever the
// result's size, and a slow client slows its own query only. A QueryFirst
// run stops at its first message.
//
// Resuming re-runs the query on the same database value and skips the
// rows already sent. That is exact because the engine is deterministic:
// the same plan on the same Db yields the same rows in the same order. The
// server keeps the Db of recent streams (Database::Retain) so a resumed
// query reads the very same value and statistics; when the value is gone
// (a restart), LATEST and AS_OF reads are rebuilt as of the token's db_tx,
// and a fingerprint of the skipped rows proves the order held (ABORTED if
// not).

#include <memory>
#include <optional>

#include "basis.h"
#include "call.h"
#include "mentat/base/str_cat.h"
#include "query_limits.h"
#include "query_run.h"
#include "service.h"
#include "stream_reactor.h"
#include "value_convert.h"

namespace mentat::server {

namespace {

// A Query stream.
class QueryReactor final : public StreamReactor, public QueryOutput {
 public:
  QueryReactor(ServiceContext& sc, grpc::CallbackServerContext* ctx)
      : StreamReactor(sc, Method::kQuery, ctx) {}

  void Start(v1::QueryRequest request, std::shared_ptr<Database> database) {
    // Held until the run ends: its last message ends the stream, and gRPC
    // may then run OnDone (dropping its own reference) on another thread
    // while Run is still returning. Started after a basis wait, on a
    // reader, nothing else holds the reactor.
    Ref();
    run_.emplace(this, std::move(request), std::move(database));
    if (sc().config.inline_point_reads) {
      bool too_big = false;
      absl::Status s = run_->Run(/*inline_attempt=*/true, &too_big);
      if (!too_big) {
        ReleaseQuerySlot(sc().metrics);
        Done(s);
        Unref();
        return;
      }
    }
    sc().readers.Post([this] {
      bool unused = false;
      absl::Status s = run_->Run(/*inline_attempt=*/false, &unused);
      ReleaseQuerySlot(sc().metrics);
      Done(s);
      Unref();
    });
  }

  ServiceContext& sc() const override { return StreamReactor::sc(); }
  std::chrono::steady_clock::time_point deadline() const override {
    return StreamReactor::deadline();
  }
  const std::atomic<bool>* cancel_flag() const override {
    return StreamReactor::cancel_flag();
  }
  bool first_message_only() const override { return false; }
  absl::Status Send(grpc::ByteBuffer buffer, bool last) override {
    if (last) {
      Push(std::move(buffer), /*last=*/true);
      return absl::OkStatus();
    }
    return PushBlocking(std::move(buffer));
  }

 private:
  std::optional<QueryRun> run_;
};

// A QueryFirst call: one bounded run (as an inline attempt: a small scan
// budget, few expected rows), whose first message is the reply. A query
// past those bounds is answered at once with `more` and no token, and the
// client runs it as a Query stream: QueryFirst never does a big query's
// work twice, and never holds a big answer.
class QueryFirstCall final : public QueryOutput {
 public:
  QueryFirstCall(const UnaryCall& call, v1::QueryRequest request,
                 std::shared_ptr<Database> database)
      : call_(call),
        deadline_(SteadyDeadline(call.context())),
        run_(this, std::move(request), std::move(database)) {}

  // Runs on the calling thread (--inline-point-reads) or a reader, and
  // finishes the call. Holds a slot (TakeQuerySlot), which it gives back.
  static void Start(std::shared_ptr<QueryFirstCall> self) {
    ServiceContext& sc = self->call_.sc();
    // Speculative transactions (with_tx_data) are applied on a reader.
    if (sc.config.inline_point_reads &&
        self->run_.request().with_tx_data_size() == 0) {
      self->RunAndFinish();
      return;
    }
    sc.readers.Post([self = std::move(self)] { self->RunAndFinish(); });
  }

  ServiceContext& sc() const override { return call_.sc(); }
  std::chrono::steady_clock::time_point deadline() const override {
    return deadline_;
  }
  const std::atomic<bool>* cancel_flag() const override {
    return call_.cancel_flag();
  }
  bool first_message_only() const override { return true; }
  absl::Status Send(grpc::ByteBuffer buffer, bool) override {
    reply_ = std::move(buffer);
    return absl::OkStatus();
  }

 private:
  void RunAndFinish() {
    bool too_big = false;
    const absl::Status s = run_.Run(/*inline_attempt=*/true, &too_big);
    ReleaseQuerySlot(call_.sc().metrics);
    if (!s.ok()) {
      call_.Finish(s);
    } else if (too_big || !reply_.has_value()) {
      // Not a small query (nothing was sent): the client streams it. Or a
      // resumed request with no rows left: an empty answer.
      v1::QueryResponse reply;
      reply.set_more(too_big);
      call_.Finish(absl::OkStatus(), &reply);
    } else {
      call_.FinishSerialized(*std::move(reply_));
    }
  }

  const UnaryCall call_;
  const std::chrono::steady_clock::time_point deadline_;
  QueryRun run_;
  std::optional<grpc::ByteBuffer> reply_;
};

// Admit, parse, find the database.
[[nodiscard]] absl::StatusOr<std::shared_ptr<Database>> BeginQuery(
    ServiceContext& sc, const grpc::ServerContextBase* ctx, const Buf* req,
    v1::QueryRequest* request) {
  absl::Status s = Admit(sc, ctx);
  if (s.ok()) s = ParseRequest(*req, request);
  if (!s.ok()) return s;
  return sc.registry.Get(request->database());
}

}  // namespace

Writer* HandleQuery(ServiceContext& sc, Ctx* ctx, const Buf* req) {
  auto* reactor = new QueryReactor(sc, ctx);
  v1::QueryRequest request;
  auto database = BeginQuery(sc, ctx, req, &request);
  if (!database.ok()) {
    reactor->Done(database.status());
    return reactor;
  }
  // Read-your-writes: the query starts once the database has the basis
  // (and takes its slot then, so that waiting holds none).
  const int64_t min_basis = request.min_basis_tx();
  auto shared = std::make_shared<v1::QueryRequest>(std::move(request));
  AfterMinBasis(
      sc, *database, min_basis, SteadyDeadline(ctx),
      [&sc, reactor, shared, database = *database](absl::Status ready) {
        if (ready.ok()) ready = TakeQuerySlot(sc.config, sc.metrics);
        if (!ready.ok()) return reactor->Done(ready);
        reactor->Start(std::move(*shared), database);
      });
  return reactor;
}

void ServeQueryFirst(const UnaryCall& call, const Buf* req) {
  ServiceContext& sc = call.sc();
  v1::QueryRequest request;
  auto database = BeginQuery(sc, call.context(), req, &request);
  if (!database.ok()) return call.Finish(database.status());
  if (!request.resume_token().empty()) {
    return call.Finish(absl::InvalidArgumentError(
        "QueryFirst does not resume: send the resume_token to Query with the "
        "same request"));
  }
  const int64_t min_basis = request.min_basis_tx();
  auto first =
      std::make_shared<QueryFirstCall>(call, std::move(request), *database);
  // Read-your-writes, as Query.
  AfterMinBasis(sc, *database, min_basis, SteadyDeadline(call.context()),
                [&sc, call, first](absl::Status ready) {
                  if (ready.ok()) ready = TakeQuerySlot(sc.config, sc.metrics);
                  if (!ready.ok()) return call.Finish(ready);
                  QueryFirstCall::Start(first);
                });
}

// Explain. With `profile` the query runs, so it runs as Query does: it
// takes one of the --max-concurrent-queries slots (RESOURCE_EXHAUSTED when
// none is free), and the engine stops it at the call's deadline, when the
// client cancels, or past the per-query memory budget.
void ServeExplain(const UnaryCall& call, const Buf* req) {
  ServiceContext& sc = call.sc();
  auto request = std::make_shared<v1::ExplainRequest>();
  absl::Status s = call.Begin(req, request.get());
  if (!s.ok()) return call.Finish(s);
  auto database = sc.registry.Get(request->database());
  if (!database.ok()) return call.Finish(database.status());
  const bool profile = request->profile();
  if (profile) {
    s = TakeQuerySlot(sc.config, sc.metrics);
    if (!s.ok()) return call.Finish(s);
  }
  std::shared_ptr<Database> db = *std::move(database);
  auto explain = [call, request, profile, database = db] {
    ServiceContext& sc = call.sc();
    auto run = [&]() -> absl::StatusOr<v1::ExplainResponse> {
      absl::Status s = call.StillWanted();
      if (!s.ok()) return s;
      auto resolved = ResolveBasis(
          *database, request->basis(), 0,
          WithTxData{&request->with_tx_data(), MaxValueBytes(sc.config)});
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
  AfterMinBasis(sc, db, request->min_basis_tx(), SteadyDeadline(call.context()),
                [call, explain, profile](absl::Status ready) {
                  if (!ready.ok()) {
                    if (profile) ReleaseQuerySlot(call.sc().metrics);
                    return call.Finish(ready);
                  }
                  call.sc().readers.Post(explain);
                });
}

}  // namespace mentat::server
