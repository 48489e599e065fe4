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
// wakes them for each call. `*threads` (if set): how many there are.
int64_t CallbackQueueSwitches(pid_t pid, int* threads = nullptr) {
  int64_t switches = 0;
  if (threads != nullptr) *threads = 0;
  const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  for (const auto& task : std::filesystem::directory_iterator(tasks)) {
    std::ifstream comm(task.path() / "comm");
    std::string name;
    std::getline(comm, name);
    if (name != "nexting_thread") continue;
    if (threads != nullptr) ++*threads;
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

// One call of `method` on `stub`, which must succeed.
template <typename Request, typename Response>
void RequireOk(pb::Mentat::Stub& stub,
               grpc::Status (pb::Mentat::Stub::*method)(grpc::ClientContext*,
                                                        const Request&,
                                                        Response*),
               const Request& request) {
  auto ctx = Ctx();
  Response response;
  const grpc::Status s = (stub.*method)(ctx.get(), request, &response);
  REQUIRE_MESSAGE(s.ok(), StatusText(s));
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
  // The threads this test watches (else it would measure nothing).
  int callback_threads = 0;
  (void)CallbackQueueSwitches(d.pid(), &callback_threads);
  REQUIRE(callback_threads > 0);
  constexpr int kPings = 300;
  for (int c = 0; c < 7; ++c) {
    // A channel argument of its own: a connection of its own.
    grpc::ChannelArguments args;
    args.SetInt("mentat.test.channel", c);
    auto stub = pb::Mentat::NewStub(
        grpc::CreateCustomChannel("127.0.0.1:" + std::to_string(port),
                                  grpc::InsecureChannelCredentials(), args));
    RequireOk(*stub, &pb::Mentat::Stub::Ping, pb::PingRequest());
    // What a client may ask on connecting, and an Explain: async methods
    // too, so that gRPC's callback queue never polls this connection.
    RequireOk(*stub, &pb::Mentat::Stub::Schema, pb::SchemaRequest());
    RequireOk(*stub, &pb::Mentat::Stub::Stats, pb::StatsRequest());
    RequireOk(*stub, &pb::Mentat::Stub::ListDatabases,
              pb::ListDatabasesRequest());
    pb::ExplainRequest explain;
    explain.set_query("[:find ?e :where [?e :db/ident :db/ident]]");
    RequireOk(*stub, &pb::Mentat::Stub::Explain, explain);
    const int64_t before = CallbackQueueSwitches(d.pid());
    for (int i = 0; i < kPings; ++i) {
      RequireOk(*stub, &pb::Mentat::Stub::Ping, pb::PingRequest());
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
