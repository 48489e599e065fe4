#ifndef MENTAT_SERVER_QUERY_RUN_H_
#define MENTAT_SERVER_QUERY_RUN_H_

// One run of a query for Query (a stream of messages) and QueryFirst (one
// message): resolve the basis, prepare the query (the engine caches the
// parse), execute it under the call's limits, and encode its rows straight
// into response messages, which go to a QueryOutput.
//
// A run may be an inline attempt, on the gRPC thread: it gives up (sets
// *too_big_inline, having sent nothing) when the planner expects many rows,
// past a small scan budget, or, for a stream, past one message. The caller
// then runs it again on a reader from the start, which the engine's
// determinism makes exact. Resuming (a request with a resume token) re-runs
// the query on the same database value and skips the rows already sent;
// see ResumeToken in mentat.proto.

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <memory>

#include "absl/status/status.h"
#include "database.h"
#include "mentat/v1/mentat.pb.h"
#include "service_context.h"

namespace mentat::server {

// Where a run's messages go: a Query stream or a QueryFirst reply.
class QueryOutput {
 public:
  virtual ~QueryOutput() = default;

  virtual ServiceContext& sc() const = 0;
  // The call's deadline on the steady clock (time_point::max() if none).
  virtual std::chrono::steady_clock::time_point deadline() const = 0;
  // Set when the client cancels; the engine polls it.
  virtual const std::atomic<bool>* cancel_flag() const = 0;
  // True for a QueryFirst reply: it takes one message, the first, and a
  // run stops once that message is taken (with `more` set when rows were
  // left).
  virtual bool first_message_only() const = 0;
  // Takes one encoded message; `last` is the answer's last message (for a
  // QueryFirst reply, every message it takes is). A stream may park here
  // while the client does not read.
  [[nodiscard]] virtual absl::Status Send(grpc::ByteBuffer message,
                                          bool last) = 0;
};

class QueryRun {
 public:
  // `database` is the request's; `output` outlives the run.
  QueryRun(QueryOutput* output, v1::QueryRequest request,
           std::shared_ptr<Database> database);

  // One run (see above). OK with *too_big_inline set: nothing was sent,
  // run again with inline_attempt false.
  [[nodiscard]] absl::Status Run(bool inline_attempt, bool* too_big_inline);

  const v1::QueryRequest& request() const { return request_; }
  // The database value the run read, kept for the resume window
  // (Database::Retain) when the answer takes more than one message. Once.
  void RetainDb();
  // NotFound once the request's database was deleted.
  [[nodiscard]] absl::Status CheckLive() const {
    return database_->CheckLive();
  }

 private:
  QueryOutput* const output_;
  const v1::QueryRequest request_;
  const std::shared_ptr<Database> database_;
  std::shared_ptr<const storage::Db> db_;
  bool retained_ = false;
};

}  // namespace mentat::server

#endif  // MENTAT_SERVER_QUERY_RUN_H_
