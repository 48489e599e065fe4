// mentatd as a process: flags, environment, config file, SIGTERM, kill -9,
// unix sockets.

#include <doctest/doctest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <fstream>
#include <mutex>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "test_support.h"

extern char** environ;

namespace mentat::server::testing {
namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A mentatd child process with stdout and stderr in a file.
class Daemon {
 public:
  Daemon(std::vector<std::string> args, std::vector<std::string> env,
         const std::string& log_path)
      : log_path_(log_path) {
    std::vector<std::string> argv_s = {MENTATD_BINARY};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<std::string> env_s;
    for (char** e = environ; *e != nullptr; ++e) {
      if (std::string_view(*e).starts_with("MENTATD_")) continue;
      env_s.push_back(*e);
    }
    env_s.insert(env_s.end(), env.begin(), env.end());
    std::vector<char*> envp;
    for (auto& e : env_s) envp.push_back(e.data());
    envp.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, log_path.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    REQUIRE(posix_spawn(&pid_, MENTATD_BINARY, &actions, nullptr, argv.data(),
                        envp.data()) == 0);
    posix_spawn_file_actions_destroy(&actions);
  }
  ~Daemon() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      Wait();
    }
  }

  // The gRPC port from the startup line, or 0 once the process exited or
  // after 10 seconds.
  int WaitForPort() {
    static const std::regex kPort(R"(serving gRPC on \S+ \(port (\d+)\))");
    for (int i = 0; i < 1000; ++i) {
      std::smatch m;
      const std::string log = ReadAll(log_path_);
      if (std::regex_search(log, m, kPort)) return std::stoi(m[1]);
      if (log.find("serving gRPC on") != std::string::npos) return -1;
      int status;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = 0;
        exit_status_ = status;
        return 0;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return 0;
  }
  bool WaitForLog(const std::string& text) {
    for (int i = 0; i < 1000; ++i) {
      if (ReadAll(log_path_).find(text) != std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }
  void Signal(int sig) { kill(pid_, sig); }
  // The exit status (as waitpid reports it).
  int Wait() {
    if (pid_ > 0) {
      waitpid(pid_, &exit_status_, 0);
      pid_ = 0;
    }
    return exit_status_;
  }
  std::string log() const { return ReadAll(log_path_); }

 private:
  std::string log_path_;
  pid_t pid_ = 0;
  int exit_status_ = 0;
};

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
    Daemon d({"--help"}, {}, dir.path() + ".log");
    int status = d.Wait();
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    CHECK(d.log().find("Usage: mentatd") != std::string::npos);
    CHECK(d.log().find("MENTATD_DATA_DIR") != std::string::npos);
  }
  {
    Daemon d({"--version"}, {}, dir.path() + ".log");
    CHECK(WEXITSTATUS(d.Wait()) == 0);
    CHECK(d.log().find("mentatd ") == 0);
  }
  {
    Daemon d({"--no-such-flag"}, {}, dir.path() + ".log");
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
           "log-format = json\n";
  }
  Daemon d({"--readers-per-node", "2"},
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
  CHECK_MESSAGE(
      std::chrono::steady_clock::now() - signalled < std::chrono::seconds(3),
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
    Daemon d({"--data-dir", data, "--listen", "127.0.0.1:0", "--http", "",
              "--sync-commits=true"},
             {}, dir.path() + "/log");
    const int port = d.WaitForPort();
    REQUIRE_MESSAGE(port > 0, d.log());
    const std::string address = "127.0.0.1:" + std::to_string(port);
    pb::TransactResponse resp;
    {
      auto stub = StubFor(address);
      REQUIRE(TransactVia(*stub, kPeopleSchema, &resp).ok());
    }
    std::mutex mu;
    std::atomic<bool> stop{false};
    std::vector<std::thread> writers;
    for (int w = 0; w < 4; ++w) {
      writers.emplace_back([&, w] {
        auto stub = StubFor(address);
        for (int i = 0; !stop.load(); ++i) {
          pb::TransactResponse r;
          if (TransactVia(*stub, People(w * 1000000 + i, 1), &r).ok()) {
            std::lock_guard<std::mutex> lock(mu);
            acknowledged.insert(r.tx());
          }
        }
      });
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
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
