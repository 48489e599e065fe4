// mentatd binds every client connection to a completion queue of its own
// (GrpcListener::Options::queue_turns): whatever its place among the
// connections, none has its calls read by gRPC's callback-API threads and
// handed over, a hop that made every third connection's point reads
// slower. Every unary method is an async method too (the test makes some
// on each connection first): one callback-API call would have the
// callback threads poll the connection from then on.

#include <doctest/doctest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <string>

#include "placeholder_connection.h"
#include "test_support.h"
#include "testing/mentatd_process.h"

namespace mentat::server::testing {
namespace {

// Context switches of the threads gRPC runs for its callback API's
// completion queue ("nexting_thread") in process `pid`. They sleep in
// poll() between the calls they read: a connection bound to their queue
// wakes them for each call.
int64_t CallbackQueueSwitches(pid_t pid) {
  int64_t switches = 0;
  const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  for (const auto& task : std::filesystem::directory_iterator(tasks)) {
    std::ifstream comm(task.path() / "comm");
    std::string name;
    std::getline(comm, name);
    if (name != "nexting_thread") continue;
    std::ifstream status(task.path() / "status");
    std::string line;
    while (std::getline(status, line)) {
      if (line.starts_with("voluntary_ctxt_switches:")) {
        switches += std::stoll(line.substr(line.find(':') + 1));
      }
    }
  }
  return switches;
}

TEST_CASE("mentatd: no connection's calls go through gRPC's callback threads") {
  TempDir dir;
  std::filesystem::create_directories(dir.path());
  // Two unary threads: gRPC takes three queues in turn, the callback
  // API's first.
  MentatdProcess d({"--data-dir", dir.path() + "/data", "--listen",
                    "127.0.0.1:0", "--http", "", "--unary-threads", "2",
                    "--grpc-poll-strategy", "poll", "--sync-commits=false"},
                   {}, dir.path() + "/log");
  const int port = d.WaitForPort();
  REQUIRE_MESSAGE(port > 0, d.log());
  REQUIRE(CallbackQueueSwitches(d.pid()) >= 0);
  constexpr int kPings = 300;
  for (int c = 0; c < 7; ++c) {
    // A channel argument of its own: a connection of its own.
    grpc::ChannelArguments args;
    args.SetInt("mentat.test.channel", c);
    auto stub = pb::Mentat::NewStub(
        grpc::CreateCustomChannel("127.0.0.1:" + std::to_string(port),
                                  grpc::InsecureChannelCredentials(), args));
    pb::PingResponse pong;
    {
      auto ctx = Ctx();
      const grpc::Status s = stub->Ping(ctx.get(), pb::PingRequest(), &pong);
      REQUIRE_MESSAGE(s.ok(), StatusText(s));
    }
    // What a client may ask on connecting, and an Explain: async methods
    // too, so that gRPC's callback queue never polls this connection.
    {
      auto ctx = Ctx();
      pb::SchemaResponse schema;
      const grpc::Status s =
          stub->Schema(ctx.get(), pb::SchemaRequest(), &schema);
      REQUIRE_MESSAGE(s.ok(), StatusText(s));
    }
    {
      auto ctx = Ctx();
      pb::StatsResponse stats;
      const grpc::Status s = stub->Stats(ctx.get(), pb::StatsRequest(), &stats);
      REQUIRE_MESSAGE(s.ok(), StatusText(s));
    }
    {
      auto ctx = Ctx();
      pb::ListDatabasesResponse dbs;
      const grpc::Status s =
          stub->ListDatabases(ctx.get(), pb::ListDatabasesRequest(), &dbs);
      REQUIRE_MESSAGE(s.ok(), StatusText(s));
    }
    {
      auto ctx = Ctx();
      pb::ExplainRequest request;
      request.set_query("[:find ?e :where [?e :db/ident :db/ident]]");
      pb::ExplainResponse plan;
      const grpc::Status s = stub->Explain(ctx.get(), request, &plan);
      REQUIRE_MESSAGE(s.ok(), StatusText(s));
    }
    const int64_t before = CallbackQueueSwitches(d.pid());
    for (int i = 0; i < kPings; ++i) {
      auto ctx = Ctx();
      const grpc::Status s = stub->Ping(ctx.get(), pb::PingRequest(), &pong);
      REQUIRE_MESSAGE(s.ok(), StatusText(s));
    }
    const int64_t woke = CallbackQueueSwitches(d.pid()) - before;
    // Bound to the callback queue, its threads wake about twice a call;
    // otherwise only for their own timeouts (about once a second each).
    CHECK_MESSAGE(woke < kPings / 3, "connection ", c, ": gRPC's callback ",
                  "threads woke ", woke, " times during ", kPings, " pings");
  }
}

TEST_CASE("placeholder connections: connected, then reset") {
  auto placeholders = PlaceholderConnections::Open();
  REQUIRE_MESSAGE(placeholders.ok(), placeholders.status().ToString());
  for (int i = 0; i < 3; ++i) {
    const PlaceholderConnections::Ends ends = (*placeholders)->Make();
    REQUIRE(ends.server >= 0);
    REQUIRE(ends.client >= 0);
    // gRPC asks the server end for its peer before it takes it.
    sockaddr_storage peer;
    socklen_t length = sizeof peer;
    CHECK(::getpeername(ends.server, reinterpret_cast<sockaddr*>(&peer),
                        &length) == 0);
    PlaceholderConnections::Reset(ends.client);
    // The server end reads the end of the connection, not silence.
    pollfd p{ends.server, POLLIN, 0};
    REQUIRE(::poll(&p, 1, 10000) == 1);
    char byte;
    const ssize_t n = ::recv(ends.server, &byte, 1, 0);
    CHECK((n == 0 || (n < 0 && errno == ECONNRESET)));
    ::close(ends.server);
  }
}

}  // namespace
}  // namespace mentat::server::testing
