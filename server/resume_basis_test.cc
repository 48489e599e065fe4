// Resuming SINCE and HISTORY query streams. Their database value cannot be
// rebuilt from a newer one (unlike LATEST and AS_OF, read as of the
// token's basis), so a resume works while the server still holds the
// value, or when nothing was committed since, and is refused with
// FAILED_PRECONDITION otherwise (a restart with writes after it): never
// wrong rows.

#include <doctest/doctest.h>

#include <set>

#include "test_support.h"

namespace mentat::server::testing {
namespace {

// The first batch of a stream, then the stream is dropped.
std::pair<std::vector<pb::Row>, std::string> FirstBatch(
    pb::Mentat::Stub& stub, const pb::QueryRequest& req) {
  grpc::ClientContext ctx;
  auto reader = stub.Query(&ctx, req);
  pb::QueryResponse msg;
  std::vector<pb::Row> rows;
  std::string token;
  while (reader->Read(&msg)) {
    if (msg.rows_size() == 0) continue;
    rows.assign(msg.rows().begin(), msg.rows().end());
    token = msg.resume_token();
    break;
  }
  ctx.TryCancel();
  reader->Finish().IgnoreError();
  return {rows, token};
}

std::multiset<std::string> Keys(const std::vector<pb::Row>& a,
                                const std::vector<pb::Row>& b = {}) {
  std::multiset<std::string> out;
  for (const pb::Row& r : a) out.insert(r.SerializeAsString());
  for (const pb::Row& r : b) out.insert(r.SerializeAsString());
  return out;
}

TEST_CASE("server: resuming SINCE and HISTORY streams across restarts") {
  TestServer t;
  Transact(t, kPeopleSchema);
  const pb::TransactResponse first = Transact(t, People(0, 1000));
  Transact(t, People(1000, 1500));
  // Changes, so that history holds retractions too.
  Transact(t, R"([{:person/name "person 1" :person/age 77}
                  {:person/name "person 1001" :person/age 78}])");

  // The three ways a resume can go, for one request.
  auto resume = [&](pb::QueryRequest req) {
    req.set_batch_rows(500);
    QueryOutcome all = RunQuery(t.stub(), req);
    REQUIRE_MESSAGE(all.status.ok(), StatusText(all.status));
    REQUIRE(all.rows.size() > 1000);

    auto [head, token] = FirstBatch(t.stub(), req);
    REQUIRE(head.size() == 500);
    pb::QueryRequest again = req;
    again.set_resume_token(token);

    SUBCASE("while the value is held, writes or not") {
      Transact(t, People(5000, 10));
      QueryOutcome rest = RunQuery(t.stub(), again);
      REQUIRE_MESSAGE(rest.status.ok(), StatusText(rest.status));
      CHECK(Keys(head, rest.rows) == Keys(all.rows));
    }
    SUBCASE("after a restart with nothing committed since") {
      t.Restart();
      QueryOutcome rest = RunQuery(t.stub(), again);
      REQUIRE_MESSAGE(rest.status.ok(), StatusText(rest.status));
      CHECK(Keys(head, rest.rows) == Keys(all.rows));
      CHECK(rest.basis_tx == all.basis_tx);
    }
    SUBCASE("after a restart with a commit since: refused") {
      t.Restart();
      Transact(t, People(6000, 10));
      QueryOutcome rest = RunQuery(t.stub(), again);
      CHECK(rest.status.error_code() == grpc::StatusCode::FAILED_PRECONDITION);
      CHECK(rest.rows.empty());
      CHECK_MESSAGE(rest.status.error_message().find(
                        std::to_string(all.basis_tx)) != std::string::npos,
                    rest.status.error_message());
      CHECK_MESSAGE(rest.status.error_message().find("no longer held") !=
                        std::string::npos,
                    rest.status.error_message());
      // LATEST is rebuilt exactly, for comparison.
      pb::QueryRequest latest;
      latest.set_query("[:find ?e ?a :where [?e :person/age ?a]]");
      latest.set_batch_rows(500);
      latest.mutable_basis()->set_db_tx(all.basis_tx);
      QueryOutcome pinned = RunQuery(t.stub(), latest);
      CHECK(pinned.status.ok());
      CHECK(pinned.rows.size() == 2500);
    }
  };

  SUBCASE("since") {
    pb::QueryRequest req;
    req.set_query("[:find ?e ?a :where [?e :person/age ?a]]");
    req.mutable_basis()->set_kind(pb::Basis::SINCE);
    req.mutable_basis()->set_tx(first.tx());
    resume(req);
  }
  SUBCASE("history") {
    pb::QueryRequest req;
    req.set_query(
        "[:find ?e ?a ?tx ?added :where [?e :person/age ?a ?tx ?added]]");
    req.mutable_basis()->set_kind(pb::Basis::HISTORY);
    resume(req);
  }
}

}  // namespace
}  // namespace mentat::server::testing
