// A query that QueryFirst turns away as not small goes to the Query stream
// at once the next time, and back to QueryFirst once its answer fits one
// message. The server is a stand-in that counts the calls.

#include <doctest/doctest.h>
#include <grpcpp/grpcpp.h>

#include <atomic>
#include <memory>
#include <string>

#include "mentat/client/client.h"
#include "stand_in_server.h"

namespace mentat::client {
namespace {

class CountingService final : public v1::Mentat::Service {
 public:
  // Messages the Query stream answers with (one row each).
  std::atomic<int> stream_messages{2};
  std::atomic<int> query_first_calls{0};
  std::atomic<int> query_calls{0};

  grpc::Status QueryFirst(grpc::ServerContext*, const v1::QueryRequest*,
                          v1::QueryResponse* response) override {
    ++query_first_calls;
    response->set_more(true);  // not a small query: no rows, no token
    return grpc::Status::OK;
  }
  grpc::Status Query(grpc::ServerContext*, const v1::QueryRequest*,
                     grpc::ServerWriter<v1::QueryResponse>* writer) override {
    ++query_calls;
    for (int i = 0; i < stream_messages; ++i) {
      v1::QueryResponse m;
      if (i == 0) m.add_columns("?x");
      m.add_rows()->add_values()->set_long_value(i);
      writer->Write(m);
    }
    return grpc::Status::OK;
  }
};

TEST_CASE("client: a query QueryFirst turned away goes to the stream next") {
  CountingService service;
  testing::StandInServer stand_in(&service);
  Client* client = stand_in.client.get();
  CallOptions call;
  call.timeout = std::chrono::milliseconds(30000);

  v1::QueryRequest big;
  big.set_query("[:find ?x :where [_ :a/b ?x]]");
  const auto rows_of = [&](const v1::QueryRequest& q) {
    int rows = 0;
    absl::Status s = client->QueryBatches(
        q,
        [&](const QueryBatch& b) {
          rows += b.rows_size();
          return true;
        },
        call);
    REQUIRE_MESSAGE(s.ok(), s.ToString());
    return rows;
  };

  SUBCASE("asked once, then streamed at once") {
    CHECK(rows_of(big) == 2);
    CHECK(service.query_first_calls == 1);
    CHECK(service.query_calls == 1);
    CHECK(rows_of(big) == 2);
    CHECK(rows_of(big) == 2);
    CHECK(service.query_first_calls == 1);
    CHECK(service.query_calls == 3);
    // Another query (or database, or basis) is asked about on its own.
    v1::QueryRequest other = big;
    other.mutable_basis()->set_kind(v1::Basis::SINCE);
    CHECK(rows_of(other) == 2);
    CHECK(service.query_first_calls == 2);
  }

  SUBCASE("an answer of one message sends the next to QueryFirst again") {
    CHECK(rows_of(big) == 2);
    service.stream_messages = 1;
    CHECK(rows_of(big) == 1);  // streamed at once: one message
    CHECK(service.query_first_calls == 1);
    CHECK(rows_of(big) == 1);  // asked again
    CHECK(service.query_first_calls == 2);
    CHECK(service.query_calls == 3);
  }
  stand_in.server->Shutdown();
}

}  // namespace
}  // namespace mentat::client
