// A response the client cannot parse (nested deeper than protobuf's
// limit) is an error, never an OK with nothing in it. gRPC's typed calls
// report such a unary response as UNIMPLEMENTED "No message returned", and
// end a stream at it as if it were complete, so a query looked successful
// with its rows missing. The server here is a stand-in that sends what an
// older mentatd did.

#include <doctest/doctest.h>
#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "mentat/client/client.h"
#include "stand_in_server.h"

namespace mentat::client {
namespace {

// A map holding a map ... `levels` deep: 3 messages a level.
void DeepValue(int levels, v1::Value* out) {
  for (int i = 0; i < levels; ++i) {
    v1::MapEntry* e = out->mutable_map()->add_entries();
    e->mutable_key()->set_keyword("a/next");
    out = e->mutable_value();
  }
  out->set_long_value(1);
}

class DeepService final : public v1::Mentat::Service {
 public:
  grpc::Status Pull(grpc::ServerContext*, const v1::PullRequest*,
                    v1::PullResponse* response) override {
    DeepValue(40, response->mutable_result());
    return grpc::Status::OK;
  }
  grpc::Status Query(grpc::ServerContext*, const v1::QueryRequest*,
                     grpc::ServerWriter<v1::QueryResponse>* writer) override {
    v1::QueryResponse first;
    first.add_columns("?x");
    first.add_rows()->add_values()->set_long_value(7);
    writer->Write(first);
    v1::QueryResponse deep;
    DeepValue(40, deep.add_rows()->add_values());
    writer->Write(deep);
    return grpc::Status::OK;
  }
};

TEST_CASE("client: a response that cannot be parsed is an error") {
  DeepService service;
  testing::StandInServer stand_in(&service);
  Client* client = stand_in.client.get();
  CallOptions call;
  call.timeout = std::chrono::milliseconds(30000);

  absl::StatusOr<v1::PullResponse> pulled =
      client->Pull(v1::PullRequest(), call);
  REQUIRE_FALSE(pulled.ok());
  CHECK(pulled.status().code() == absl::StatusCode::kInternal);
  CHECK_MESSAGE(std::string(pulled.status().message())
                        .find("mentat.v1.PullResponse from the server could "
                              "not be parsed") != std::string::npos,
                pulled.status().ToString());

  int rows = 0;
  absl::Status streamed = client->Query(
      v1::QueryRequest(),
      [&](const v1::QueryResponse& batch) {
        rows += batch.rows_size();
        return true;
      },
      call);
  CHECK(rows == 1);
  CHECK(streamed.code() == absl::StatusCode::kInternal);
  CHECK_MESSAGE(std::string(streamed.message())
                        .find("mentat.v1.QueryResponse from the server could "
                              "not be parsed") != std::string::npos,
                streamed.ToString());

  // QueryBatches reads the bytes itself, with protobuf's limit: the same.
  rows = 0;
  absl::Status decoded = client->QueryBatches(
      v1::QueryRequest(),
      [&](const QueryBatch& batch) {
        rows += batch.rows_size();
        return true;
      },
      call);
  CHECK(rows == 1);
  CHECK(decoded.code() == absl::StatusCode::kInternal);
  CHECK_MESSAGE(
      std::string(decoded.message()).find("values nested over 100 deep") !=
          std::string::npos,
      decoded.ToString());
  stand_in.server->Shutdown();
}

}  // namespace
}  // namespace mentat::client
