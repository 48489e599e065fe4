// Pull, PullMany and pulls in queries stop at the call's deadline, the
// server's default time limit, the size cap and a client's cancel, and the
// server goes on serving (its only reader is free again); results nested
// deeper than clients can parse are refused with a clear error.

#include <doctest/doctest.h>

#include <string>
#include <thread>

#include "test_support.h"

namespace mentat::server::testing {
namespace {

constexpr char kNodeSchema[] = R"([
  {:db/ident :node/name :db/valueType :db.type/string
   :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
  {:db/ident :node/edge :db/valueType :db.type/ref
   :db/cardinality :db.cardinality/many}
  {:db/ident :node/next :db/valueType :db.type/ref
   :db/cardinality :db.cardinality/one}])";

// 40 levels of two nodes, each linked to both nodes below: 2^40 paths.
void LoadDenseDag(TestServer& t) {
  Transact(t, kNodeSchema);
  std::string tx = "[";
  for (int l = 0; l < 40; ++l) {
    for (int k = 0; k < 2; ++k) {
      tx += "{:db/id \"n" + std::to_string(l) + "-" + std::to_string(k) +
            "\" :node/name \"n" + std::to_string(l) + "-" + std::to_string(k) +
            "\"";
      if (l + 1 < 40) {
        tx += " :node/edge [\"n" + std::to_string(l + 1) + "-0\" \"n" +
              std::to_string(l + 1) + "-1\"]";
      }
      tx += "}";
    }
  }
  Transact(t, tx + "]");
}

// c0 -> c1 -> ... -> c59 through :node/edge and :node/next.
void LoadChain(TestServer& t) {
  Transact(t, kNodeSchema);
  std::string tx = "[";
  for (int i = 0; i < 60; ++i) {
    const std::string me = "\"c" + std::to_string(i) + "\"";
    tx += "{:db/id " + me + " :node/name " + me;
    if (i + 1 < 60) {
      const std::string next = "\"c" + std::to_string(i + 1) + "\"";
      tx += " :node/edge [" + next + "] :node/next " + next;
    }
    tx += "}";
  }
  Transact(t, tx + "]");
}

pb::PullRequest PullOf(const std::string& pattern, const std::string& name) {
  pb::PullRequest req;
  req.set_pattern(pattern);
  auto* lookup = req.mutable_entity()->mutable_lookup();
  lookup->set_attribute("node/name");
  lookup->mutable_value()->set_string_value(name);
  return req;
}

grpc::Status RunPull(TestServer& t, const pb::PullRequest& req,
                     grpc::ClientContext* ctx, pb::PullResponse* out) {
  return t.stub().Pull(ctx, req, out);
}

grpc::Status PullStatus(TestServer& t, const std::string& pattern,
                        const std::string& name, int timeout_ms = 60000,
                        pb::PullResponse* out = nullptr) {
  pb::PullResponse resp;
  auto ctx = Ctx(timeout_ms);
  return RunPull(t, PullOf(pattern, name), ctx.get(),
                 out != nullptr ? out : &resp);
}

bool Contains(const grpc::Status& s, const std::string& text) {
  return s.error_message().find(text) != std::string::npos;
}

// The server answers a small query on its only reader (a runaway pull
// would hold it). Its own deadline is generous for a busy machine.
void CheckStillServing(TestServer& t) {
  pb::QueryRequest req;
  req.set_query("[:find (count ?e) . :where [?e :node/name _]]");
  QueryOutcome q = RunQuery(t.stub(), req, 30000);
  REQUIRE_MESSAGE(q.status.ok(), StatusText(q.status));
  REQUIRE(q.rows.size() == 1);
  CHECK(q.rows[0].values(0).long_value() == 80);
}

constexpr char kExploding[] = "[:node/name {:node/edge ...}]";

TEST_CASE("server: a pull over a dense DAG stops at its limits") {
  // One reader, so a pull that kept running would hold it; the cap at its
  // default (256M) unless a case lowers it.
  TestServer t([](ServerConfig* c) {
    c->readers_per_node = 1;
    c->query_timeout_ms = 300;
  });
  LoadDenseDag(t);

  SUBCASE("the call's deadline") {
    pb::PullResponse resp;
    auto ctx = Ctx(300);
    grpc::Status s = RunPull(t, PullOf(kExploding, "n0-0"), ctx.get(), &resp);
    CHECK_MESSAGE(s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED,
                  StatusText(s));
  }
  SUBCASE("the server's time limit, for a call without a deadline") {
    pb::PullResponse resp;
    grpc::ClientContext ctx;
    grpc::Status s = RunPull(t, PullOf(kExploding, "n0-0"), &ctx, &resp);
    CHECK_MESSAGE(s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED,
                  StatusText(s));
    CHECK_MESSAGE(Contains(s,
                           "the pull ran past the server's time limit of "
                           "300 ms for calls without a deadline "
                           "(--query-timeout-ms)"),
                  StatusText(s));
  }
  SUBCASE("a client's cancel") {
    pb::PullResponse resp;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() +
                     std::chrono::seconds(60));
    grpc::Status s;
    std::thread call(
        [&] { s = RunPull(t, PullOf(kExploding, "n0-0"), &ctx, &resp); });
    // The pull never ends by itself; cancel it while it runs.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ctx.TryCancel();
    call.join();
    CHECK(s.error_code() == grpc::StatusCode::CANCELLED);
  }
  SUBCASE("PullMany") {
    pb::PullManyRequest req;
    req.set_pattern(kExploding);
    req.add_entities()->set_ident("db/ident");
    auto* lookup = req.add_entities()->mutable_lookup();
    lookup->set_attribute("node/name");
    lookup->mutable_value()->set_string_value("n0-0");
    pb::PullManyResponse resp;
    auto ctx = Ctx(60000);
    grpc::Status s = t.stub().PullMany(ctx.get(), req, &resp);
    // The call asked for 60 s, longer than the server's default: granted,
    // so the size cap stops it first.
    CHECK_MESSAGE(s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED,
                  StatusText(s));
    CHECK_MESSAGE(Contains(s, "--pull-max-bytes"), StatusText(s));
  }
  SUBCASE("a pull in a query") {
    pb::QueryRequest req;
    req.set_query(
        "[:find (pull ?e [:node/name {:node/edge ...}]) :where "
        "[?e :node/name \"n0-0\"]]");
    req.set_timeout_ms(300);
    QueryOutcome q = RunQuery(t.stub(), req, 60000);
    CHECK_MESSAGE(q.status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED,
                  StatusText(q.status));
  }
  CheckStillServing(t);
}

TEST_CASE("server: the pull size cap answers RESOURCE_EXHAUSTED") {
  TestServer t([](ServerConfig* c) {
    c->readers_per_node = 1;
    c->pull_max_bytes = 1 << 20;
  });
  LoadDenseDag(t);
  grpc::Status s = PullStatus(t, kExploding, "n0-0");
  CHECK_MESSAGE(s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED,
                StatusText(s));
  CHECK_MESSAGE(Contains(s,
                         "grew past its size cap of 1048576 bytes "
                         "(--pull-max-bytes)"),
                StatusText(s));
  // A bounded pull of the same graph is answered.
  pb::PullResponse resp;
  s = PullStatus(t, "[:node/name {:node/edge 3}]", "n0-0", 60000, &resp);
  CHECK_MESSAGE(s.ok(), StatusText(s));
  CHECK(resp.result().map().entries_size() == 2);
  CheckStillServing(t);
}

TEST_CASE("server: results nested deeper than clients parse are refused") {
  TestServer t;
  LoadChain(t);
  // Through a many-valued ref each level costs five protobuf messages: 20
  // levels are over protobuf's limit of 100, 15 are not.
  grpc::Status s = PullStatus(t, "[:node/name {:node/edge 20}]", "c0");
  CHECK_MESSAGE(s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED,
                StatusText(s));
  CHECK_MESSAGE(Contains(s,
                         "the pull result nests too deep to send: maps 21 "
                         "deep"),
                StatusText(s));
  pb::PullResponse resp;
  s = PullStatus(t, "[:node/name {:node/edge 15}]", "c0", 60000, &resp);
  CHECK_MESSAGE(s.ok(), StatusText(s));
  CHECK(resp.result().map().entries_size() == 2);
  // A single-valued ref costs three: 32 levels (33 maps) are the most.
  s = PullStatus(t, "[:node/name {:node/next 32}]", "c0");
  CHECK_MESSAGE(s.ok(), StatusText(s));
  s = PullStatus(t, "[:node/name {:node/next ...}]", "c0");
  CHECK_MESSAGE(s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED,
                StatusText(s));

  // PullMany and queries say the same.
  pb::PullManyRequest many;
  many.set_pattern("[:node/name {:node/edge 20}]");
  many.add_entities()->set_id(1);
  auto* lookup = many.add_entities()->mutable_lookup();
  lookup->set_attribute("node/name");
  lookup->mutable_value()->set_string_value("c0");
  pb::PullManyResponse many_resp;
  auto ctx = Ctx();
  s = t.stub().PullMany(ctx.get(), many, &many_resp);
  CHECK_MESSAGE(s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED,
                StatusText(s));
  CHECK_MESSAGE(Contains(s, "the pull result of entity 2 nests too deep"),
                StatusText(s));
  QueryOutcome q =
      Query(t,
            "[:find ?n (pull ?e [:node/name {:node/edge 20}]) :where "
            "[?e :node/name ?n] [(= ?n \"c0\")]]");
  CHECK_MESSAGE(q.status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED,
                StatusText(q.status));
  CHECK_MESSAGE(Contains(q.status, "the value of row 1 nests too deep"),
                StatusText(q.status));
}

}  // namespace
}  // namespace mentat::server::testing
