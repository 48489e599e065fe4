// mentatd as a process: flags, environment, config file, SIGTERM, kill -9,
// unix sockets.

#include <doctest/doctest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "test_support.h"
#include "testing/mentatd_process.h"

namespace mentat::server::testing {
namespace {

std::unique_ptr<pb::Mentat::Stub> StubFor(const std::string& address) {
  return pb::Mentat::NewStub(
      grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
}

grpc::Status TransactVia(pb::Mentat::Stub& stub, const std::string& edn,
                         pb::TransactResponse* resp) {
  pb::TransactRequest req;
  req.set_tx_data(edn);
  auto ctx = Ctx(10000);
  return stub.Transact(ctx.get(), req, resp);
}

TEST_CASE("mentatd: --help, --version, bad flags") {
  TempDir dir;
  {
    MentatdProcess d({"--help"}, {}, dir.path() + ".log");
    int status = d.Wait();
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    CHECK(d.log().find("Usage: mentatd") != std::string::npos);
    CHECK(d.log().find("MENTATD_DATA_DIR") != std::string::npos);
  }
  {
    MentatdProcess d({"--version"}, {}, dir.path() + ".log");
    CHECK(WEXITSTATUS(d.Wait()) == 0);
    CHECK(d.log().find("mentatd ") == 0);
  }
  {
    MentatdProcess d({"--no-such-flag"}, {}, dir.path() + ".log");
    CHECK(WEXITSTATUS(d.Wait()) == 2);
    CHECK(d.log().find("unknown flag --no-such-flag") != std::string::npos);
  }
  std::filesystem::remove(dir.path() + ".log");
}

TEST_CASE("mentatd: environment, config file, SIGTERM exits 0") {
  TempDir dir;
  std::filesystem::create_directories(dir.path());
  const std::string config = dir.path() + "/mentatd.conf";
  {
    std::ofstream out(config);
    out << "# test configuration\nlisten = 127.0.0.1:0\nhttp = \"\"\n"
           "log-format = json\nshutdown-grace-ms = 60000\n";
  }
  MentatdProcess d({"--readers-per-node", "2"},
                   {"MENTATD_DATA_DIR=" + dir.path() + "/data",
                    "MENTATD_CONFIG=" + config, "MENTATD_SYNC_COMMITS=false"},
                   dir.path() + "/log");
  const int port = d.WaitForPort();
  REQUIRE_MESSAGE(port > 0, d.log());
  CHECK(d.log().find("{\"ts\":\"") != std::string::npos);
  CHECK(d.log().find("sync-commits=false") != std::string::npos);
  auto stub = StubFor("127.0.0.1:" + std::to_string(port));
  pb::TransactResponse resp;
  grpc::Status s = TransactVia(*stub, kPeopleSchema, &resp);
  REQUIRE_MESSAGE(s.ok(), StatusText(s));
  CHECK(std::filesystem::exists(dir.path() + "/data/default/CURRENT"));

  // A subscriber is open while the signal arrives: shutdown ends it.
  grpc::ClientContext sub_ctx;
  pb::SubscribeRequest sub;
  sub.set_from_tx(resp.tx());
  auto stream = stub->Subscribe(&sub_ctx, sub);
  pb::SubscribeResponse msg;
  REQUIRE(stream->Read(&msg));  // caught up: the subscription runs
  const auto signalled = std::chrono::steady_clock::now();
  d.Signal(SIGTERM);
  while (stream->Read(&msg)) {
  }
  grpc::Status end = stream->Finish();
  CHECK_MESSAGE(end.error_code() == grpc::StatusCode::UNAVAILABLE,
                StatusText(end));
  const int status = d.Wait();
  // Shutdown must not wait for the subscriber to go away: a wait would
  // last the 60 s grace, while the bound leaves a busy machine room.
  CHECK_MESSAGE(
      std::chrono::steady_clock::now() - signalled < std::chrono::seconds(30),
      d.log());
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(d.log().find("shut down") != std::string::npos);
}

TEST_CASE("mentatd: kill -9 loses no acknowledged transaction") {
  TempDir dir;
  std::filesystem::create_directories(dir.path());
  const std::string data = dir.path() + "/data";
  std::set<int64_t> acknowledged;
  {
    MentatdProcess d({"--data-dir", data, "--listen", "127.0.0.1:0", "--http",
                      "", "--sync-commits=true"},
                     {}, dir.path() + "/log");
    const int port = d.WaitForPort();
    REQUIRE_MESSAGE(port > 0, d.log());
    const std::string address = "127.0.0.1:" + std::to_string(port);
    pb::TransactResponse resp;
    {
      auto stub = StubFor(address);
      REQUIRE(TransactVia(*stub, kPeopleSchema, &resp).ok());
    }
    absl::Mutex mu;
    std::atomic<bool> stop{false};
    std::vector<std::thread> writers;
    for (int w = 0; w < 4; ++w) {
      writers.emplace_back([&, w] {
        auto stub = StubFor(address);
        for (int i = 0; !stop.load(); ++i) {
          pb::TransactResponse r;
          if (TransactVia(*stub, People(w * 1000000 + i, 1), &r).ok()) {
            absl::MutexLock lock(&mu);
            acknowledged.insert(r.tx());
          }
        }
      });
    }
    // Kill once some transactions were acknowledged (however slow the
    // machine), while the writers still run.
    const auto give_up =
        std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < give_up) {
      {
        absl::MutexLock lock(&mu);
        if (acknowledged.size() >= 50) break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    d.Signal(SIGKILL);
    d.Wait();
    stop = true;
    for (auto& w : writers) w.join();
  }
  REQUIRE(acknowledged.size() > 0);
  ServerConfig config = TestConfig(data);
  auto server = MentatServer::Start(config);
  REQUIRE_MESSAGE(server.ok(), server.status().ToString());
  auto stub = StubFor("127.0.0.1:" + std::to_string((*server)->port()));
  pb::TxRangeRequest range;
  auto ctx = Ctx();
  auto reader = stub->TxRange(ctx.get(), range);
  pb::TxRangeResponse msg;
  std::set<int64_t> logged;
  while (reader->Read(&msg)) {
    for (const auto& tx : msg.transactions()) logged.insert(tx.tx());
  }
  REQUIRE(reader->Finish().ok());
  size_t missing = 0;
  for (int64_t tx : acknowledged) missing += logged.count(tx) == 0;
  CHECK(missing == 0);
  MESSAGE("acknowledged before kill -9: ", acknowledged.size());
}

TEST_CASE("mentatd: listens on a unix socket") {
  TempDir dir;
  std::filesystem::create_directories(dir.path());
  const std::string socket = dir.path() + "/mentatd.sock";
  ServerConfig config = TestConfig(dir.path() + "/data");
  config.listen = "unix:" + socket + ",127.0.0.1:0";
  auto server = MentatServer::Start(config);
  REQUIRE_MESSAGE(server.ok(), server.status().ToString());
  CHECK((*server)->port() > 0);
  auto stub = StubFor("unix:" + socket);
  pb::TransactResponse resp;
  grpc::Status s = TransactVia(*stub, kPeopleSchema, &resp);
  CHECK_MESSAGE(s.ok(), StatusText(s));
}

}  // namespace
}  // namespace mentat::server::testing
