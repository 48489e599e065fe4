// mentatd out of file descriptors: connections beyond what the descriptor
// limit allows are refused at once (not left hanging), /healthz says so,
// and once the connections close, new ones are served again. gRPC 1.51's
// own listener stopped for good at the first EMFILE.

#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <regex>
#include <thread>

#include "test_support.h"
#include "testing/mentatd_process.h"

namespace mentat::server::testing {
namespace {

// A channel of its own (no connection shared with other channels), so
// that each attempt connects afresh instead of waiting out a reconnect
// backoff.
std::unique_ptr<pb::Mentat::Stub> FreshStub(int port) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  return pb::Mentat::NewStub(
      grpc::CreateCustomChannel("127.0.0.1:" + std::to_string(port),
                                grpc::InsecureChannelCredentials(), args));
}

grpc::Status ListDatabases(int port, int timeout_ms) {
  auto stub = FreshStub(port);
  pb::ListDatabasesRequest req;
  pb::ListDatabasesResponse resp;
  auto ctx = Ctx(timeout_ms);
  return stub->ListDatabases(ctx.get(), req, &resp);
}

// An idle TCP connection to 127.0.0.1:port; -1 if connect failed.
int IdleConnection(int port);

// /healthz: the status code (0 when there was no answer within 5 seconds:
// a server whose HTTP listener stopped accepts connections into the
// backlog and never answers) and the body.
int Health(int port, std::string* body) {
  body->clear();
  const int fd = IdleConnection(port);
  if (fd < 0) return 0;
  timeval timeout{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  const std::string request =
      "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: "
      "close\r\n\r\n";
  std::string response;
  if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
      static_cast<ssize_t>(request.size())) {
    char buf[4096];
    ssize_t n;
    while ((n = ::recv(fd, buf, sizeof buf, 0)) > 0) response.append(buf, n);
  }
  ::close(fd);
  std::smatch m;
  if (!std::regex_search(response, m, std::regex(R"(^HTTP/1\.\d (\d+))"))) {
    *body = "no answer";
    return 0;
  }
  const size_t end = response.find("\r\n\r\n");
  if (end != std::string::npos) *body = response.substr(end + 4);
  return std::stoi(m[1]);
}

// An idle TCP connection to 127.0.0.1:port; -1 if connect failed.
int IdleConnection(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

TEST_CASE(
    "mentatd: out of descriptors, extra connections are refused and the "
    "listener recovers") {
  TempDir dir;
  const std::string log = dir.path() + ".log";
  // Soft and hard limit 256: mentatd cannot raise it.
  MentatdProcess d(
      {"--data-dir", dir.path() + "/data", "--listen", "127.0.0.1:0", "--http",
       "127.0.0.1:0", "--readers-per-node", "2"},
      {}, log, /*fd_limit=*/256);
  const int port = d.WaitForPort(std::chrono::seconds(30));
  REQUIRE(port > 0);
  std::smatch m;
  const std::string startup = d.log();
  REQUIRE(std::regex_search(startup, m, std::regex(R"(HTTP on port (\d+))")));
  const int http = std::stoi(m[1]);
  CHECK(startup.find("descriptor limit 256") != std::string::npos);
  grpc::Status s = ListDatabases(port, 10000);
  REQUIRE_MESSAGE(s.ok(), StatusText(s));

  // More idle connections than the process has descriptors. The kernel
  // completes every handshake; mentatd takes what its limit allows.
  std::vector<int> idle;
  for (int i = 0; i < 300; ++i) {
    const int fd = IdleConnection(port);
    if (fd >= 0) idle.push_back(fd);
  }
  MESSAGE(idle.size(), " idle connections open");
  CHECK(idle.size() >= 250);

  // While they are open: /healthz tells the truth, and a new call is
  // refused at once rather than left waiting. A descriptor mentatd frees
  // meanwhile (a file RocksDB closes, /healthz's own connection) serves
  // the next connection, rightly: then more idle connections take it and
  // the call is tried again.
  std::string body;
  int code = 0;
  bool refused = false;
  bool saw_503 = false;
  for (int attempt = 0; attempt < 5 && !refused; ++attempt) {
    if (attempt > 0) {
      for (int i = 0; i < 20; ++i) {
        const int fd = IdleConnection(port);
        if (fd >= 0) idle.push_back(fd);
      }
    }
    // Until mentatd has taken the connections waiting for it.
    const auto until =
        std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < until) {
      code = Health(http, &body);
      if (code == 503) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    MESSAGE("/healthz while out of descriptors: ", code, " ", body);
    // A descriptor stayed free (then "ok" is the truth): more connections
    // take it first.
    if (code != 503) continue;
    saw_503 = true;
    CHECK_MESSAGE(body.find("descriptors") != std::string::npos, body);
    const auto call_start = std::chrono::steady_clock::now();
    s = ListDatabases(port, 20000);
    const auto call_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::steady_clock::now() - call_start)
                             .count();
    MESSAGE("a call while out of descriptors: ", StatusText(s), " after ",
            call_ms, " ms");
    // Served (a descriptor came free) or refused; never left to time out.
    CHECK_MESSAGE((s.ok() || s.error_code() == grpc::StatusCode::UNAVAILABLE),
                  StatusText(s));
    refused = s.error_code() == grpc::StatusCode::UNAVAILABLE;
  }
  CHECK(saw_503);
  CHECK(refused);

  // Once the connections close, new calls are served again.
  for (int fd : idle) ::close(fd);
  bool served = false;
  const auto recover_until =
      std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!served && std::chrono::steady_clock::now() < recover_until) {
    s = ListDatabases(port, 2000);
    served = s.ok();
    if (!served) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  CHECK_MESSAGE(served, StatusText(s));
  code = Health(http, &body);
  CHECK_MESSAGE(code == 200, code, " ", body);
  CHECK(d.log().find("refusing connections on 127.0.0.1:0") !=
        std::string::npos);
  d.Signal(SIGTERM);
  const int status = d.Wait();
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  std::filesystem::remove(log);
}

}  // namespace
}  // namespace mentat::server::testing
