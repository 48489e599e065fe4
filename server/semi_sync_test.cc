// Semi-synchronous durability (--durability semi-sync, docs/replication.md)
// with real mentatd processes: a primary answers a Transact only once its
// replica holds the transaction (the replica's basis right after the
// answer shows it); with the replica stopped, writes are answered
// DEADLINE_EXCEEDED saying they are committed on the primary only; once
// the replica is back, answers resume. Every wait polls with a deadline.

#include <doctest/doctest.h>

#include <filesystem>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "test_support.h"
#include "testing/mentatd_process.h"

namespace mentat::server::testing {
namespace {

constexpr auto kDeadline = std::chrono::seconds(60);

struct SemiSyncNode {
  SemiSyncNode(const std::string& dir, const std::string& name,
               std::vector<std::string> extra, int incarnation = 0) {
    std::vector<std::string> args = {"--data-dir",
                                     dir + "/" + name,
                                     "--listen",
                                     "127.0.0.1:0",
                                     "--http",
                                     "127.0.0.1:0",
                                     "--sync-commits=false",
                                     "--readers-per-node",
                                     "2",
                                     "--block-cache",
                                     "16M"};
    args.insert(args.end(), extra.begin(), extra.end());
    process = std::make_unique<MentatdProcess>(
        args, std::vector<std::string>{},
        dir + "/" + name + "." + std::to_string(incarnation) + ".log");
    port = process->WaitForPort(std::chrono::seconds(30));
    REQUIRE_MESSAGE(port > 0, process->log());
    address = "127.0.0.1:" + std::to_string(port);
    static const std::regex kHttp(R"(HTTP on port (\d+))");
    std::smatch m;
    const std::string text = process->log();
    REQUIRE(std::regex_search(text, m, kHttp));
    http_port = std::stoi(m[1]);
    stub = pb::Mentat::NewStub(
        grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  }
  grpc::Status Transact(const std::string& edn, pb::TransactResponse* resp) {
    pb::TransactRequest req;
    req.set_tx_data(edn);
    auto ctx = Ctx(20000);
    return stub->Transact(ctx.get(), req, resp);
  }
  pb::StatsResponse Stats() {
    pb::StatsRequest req;
    pb::StatsResponse resp;
    auto ctx = Ctx(10000);
    grpc::Status s = stub->Stats(ctx.get(), req, &resp);
    REQUIRE_MESSAGE(s.ok(), StatusText(s));
    return resp;
  }
  double Metric(const std::string& name) const {
    return MetricValue(HttpGet(http_port, "/metrics"), name);
  }
  std::unique_ptr<MentatdProcess> process;
  int port = 0;
  int http_port = 0;
  std::string address;
  std::unique_ptr<pb::Mentat::Stub> stub;
};

bool Before(std::chrono::steady_clock::time_point until) {
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  return std::chrono::steady_clock::now() < until;
}

// Transacts until the primary answers OK (the first writes may time out
// while the replica bootstraps and connects); the last status.
grpc::Status TransactUntilOk(SemiSyncNode& node, const std::string& edn,
                             pb::TransactResponse* resp) {
  const auto until = std::chrono::steady_clock::now() + kDeadline;
  grpc::Status s;
  do {
    s = node.Transact(edn, resp);
    if (s.ok()) return s;
  } while (Before(until));
  return s;
}

TEST_CASE(
    "semi-sync: a write is answered once the replica holds it; with the "
    "replica down writes time out saying so; acks resume when it is back") {
  TempDir dir;
  std::filesystem::create_directories(dir.path());
  SemiSyncNode primary(
      dir.path(), "p",
      {"--durability", "semi-sync", "--semi-sync-timeout-ms", "1500"});
  auto replica = std::make_unique<SemiSyncNode>(
      dir.path(), "r",
      std::vector<std::string>{"--replica-of", primary.address});

  pb::TransactResponse resp;
  REQUIRE(TransactUntilOk(primary, kPeopleSchema, &resp).ok());
  // Each acknowledged write is on the replica when the answer arrives:
  // its basis, read right after, is the write's tx or later.
  for (int i = 0; i < 5; ++i) {
    grpc::Status s = primary.Transact(People(i * 10, 10), &resp);
    REQUIRE_MESSAGE(s.ok(), StatusText(s));
    CHECK(replica->Stats().basis_tx() >= resp.tx());
  }
  CHECK(
      primary.Metric("mentat_semi_sync_acked_basis_tx{database=\"default\"}") >=
      static_cast<double>(resp.tx()));
  CHECK(primary.Metric("mentat_semi_sync_timeouts_total") == 0);
  CHECK(primary.Metric("mentat_semi_sync_waiting") == 0);
  CHECK(replica->Metric("mentat_replica_acks_total{outcome=\"ok\"}") >= 1);
  const pb::StatsResponse p_stats = primary.Stats();
  CHECK(p_stats.replication().durability() == "semi-sync");
  CHECK(p_stats.replication().semi_sync_acked_tx() >= resp.tx());
  CHECK(p_stats.replication().semi_sync_timeouts() == 0);
  const pb::StatsResponse r_stats = replica->Stats();
  CHECK(r_stats.replication().role() == "replica");
  CHECK(r_stats.replication().primary() == primary.address);
  CHECK(r_stats.replication().primary_basis_tx() >= resp.tx());

  // The replica stops: a write commits on the primary, and its answer
  // says that no replica has it.
  replica->process->Kill();
  replica.reset();
  pb::TransactResponse lost;
  grpc::Status unacked = primary.Transact(People(100, 1), &lost);
  CHECK(unacked.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED);
  CHECK_MESSAGE(
      unacked.error_message().find(
          "committed on this primary but no replica") != std::string::npos,
      StatusText(unacked));
  CHECK(primary.Metric("mentat_semi_sync_timeouts_total") >= 1);
  const int64_t before_restart = primary.Stats().basis_tx();
  CHECK(before_restart > resp.tx());  // committed all the same

  // The replica comes back with its data: writes are answered again, and
  // the replica holds them (and the write it missed).
  replica = std::make_unique<SemiSyncNode>(
      dir.path(), "r",
      std::vector<std::string>{"--replica-of", primary.address}, 1);
  REQUIRE(TransactUntilOk(primary, People(200, 1), &resp).ok());
  CHECK(replica->Stats().basis_tx() >= resp.tx());
  CHECK(replica->Stats().basis_tx() >= before_restart);
}

TEST_CASE("semi-sync: --durability takes async or semi-sync") {
  TempDir dir;
  std::filesystem::create_directories(dir.path());
  MentatdProcess p({"--data-dir", dir.path() + "/n", "--listen", "127.0.0.1:0",
                    "--durability", "sync"},
                   {}, dir.path() + "/n.log");
  CHECK(p.WaitForPort() == 0);
  CHECK(p.log().find("--durability takes async or semi-sync") !=
        std::string::npos);
}

}  // namespace
}  // namespace mentat::server::testing
