// A bulk import (SST ingestion, outside the transactor's commit path) still
// reaches Subscribe streams: they follow the log without gap or repeat.

#include <doctest/doctest.h>

#include "test_support.h"

namespace mentat::server::testing {
namespace {

TEST_CASE("server: subscribers see every transaction of an ingested import") {
  TestServer t;
  CreateDatabase(t, "fresh");
  // Follow new commits only.
  pb::SubscribeRequest sub;
  sub.set_database("fresh");
  grpc::ClientContext sub_ctx;
  // Without the wake-up the stream would wait forever: fail instead.
  sub_ctx.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(20));
  auto stream = t.stub().Subscribe(&sub_ctx, sub);

  std::vector<std::string> txs = {kPeopleSchema};
  for (int i = 0; i < 40; ++i) txs.push_back(People(i * 10, 10));
  pb::ImportResponse response;
  {
    auto ctx = Ctx(60000);
    auto writer = t.stub().Import(ctx.get(), &response);
    pb::ImportRequest req;
    req.set_database("fresh");
    for (const std::string& tx : txs) req.add_tx_data(tx);
    REQUIRE(writer->Write(req));
    writer->WritesDone();
    grpc::Status s = writer->Finish();
    REQUIRE_MESSAGE(s.ok(), StatusText(s));
  }
  CHECK(response.method() == "ingest");
  REQUIRE(response.transactions() == static_cast<int64_t>(txs.size()));

  std::vector<int64_t> seen;
  pb::SubscribeResponse message;
  while (seen.size() < txs.size() && stream->Read(&message)) {
    for (const auto& tx : message.transactions()) seen.push_back(tx.tx());
  }
  REQUIRE(seen.size() == txs.size());
  CHECK(seen.front() == response.first_tx());
  CHECK(seen.back() == response.last_tx());
  for (size_t i = 1; i < seen.size(); ++i) CHECK(seen[i - 1] < seen[i]);
  sub_ctx.TryCancel();
  CHECK(stream->Finish().error_code() == grpc::StatusCode::CANCELLED);
}

}  // namespace
}  // namespace mentat::server::testing
