// Ping: the token is checked, no database is touched, the version comes
// back, and the call is counted like every other.

#include <doctest/doctest.h>

#include "test_support.h"

namespace mentat::server::testing {
namespace {

grpc::Status Ping(TestServer& t, pb::PingResponse* response,
                  const std::string& token = "") {
  auto ctx = Ctx();
  if (!token.empty()) ctx->AddMetadata("authorization", "Bearer " + token);
  return t.stub().Ping(ctx.get(), pb::PingRequest(), response);
}

TEST_CASE("server: ping answers with the version") {
  TestServer t;
  pb::PingResponse pong;
  grpc::Status s = Ping(t, &pong);
  REQUIRE_MESSAGE(s.ok(), StatusText(s));
  CHECK(pong.server_version() == VersionString());
  // No database is involved: a server whose only database was deleted
  // still answers.
  pb::DeleteDatabaseRequest del;
  del.set_name("default");
  pb::DeleteDatabaseResponse deleted;
  auto ctx = Ctx();
  REQUIRE(t.stub().DeleteDatabase(ctx.get(), del, &deleted).ok());
  CHECK(Ping(t, &pong).ok());
  int status = 0;
  const std::string m = HttpGet(t.server().http_port(), "/metrics", &status);
  CHECK(m.find("mentat_rpc_requests_total{method=\"Ping\",code=\"OK\"} 2") !=
        std::string::npos);
}

TEST_CASE("server: ping checks the bearer token") {
  TestServer t([](ServerConfig* c) { c->auth_token = "s3cret"; });
  pb::PingResponse pong;
  CHECK(Ping(t, &pong).error_code() == grpc::StatusCode::UNAUTHENTICATED);
  CHECK(Ping(t, &pong, "nope").error_code() ==
        grpc::StatusCode::UNAUTHENTICATED);
  CHECK(pong.server_version().empty());
  grpc::Status s = Ping(t, &pong, "s3cret");
  REQUIRE_MESSAGE(s.ok(), StatusText(s));
  CHECK(pong.server_version() == VersionString());
}

}  // namespace
}  // namespace mentat::server::testing
