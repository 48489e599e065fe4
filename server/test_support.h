#ifndef MENTAT_SERVER_TEST_SUPPORT_H_
#define MENTAT_SERVER_TEST_SUPPORT_H_

// For server tests: a mentatd started in-process on an ephemeral port with
// a temporary data directory, a stub to drive it, and terse helpers.
// Test-only, header-only.

#include <doctest/doctest.h>
#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "mentat/server/server.h"
#include "mentat/v1/mentat.grpc.pb.h"

namespace mentat::server::testing {

namespace pb = ::mentat::v1;

// A fresh directory under the system temp dir, removed on destruction.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = (std::filesystem::temp_directory_path() /
             ("mentatd-test-" + std::to_string(::getpid()) + "-" +
              std::to_string(counter++)))
                .string();
    std::filesystem::remove_all(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

class TestServer;
// A stub on a channel of its own (gRPC shares connections between channels
// with equal arguments; a distinct `id` keeps them apart) whose receive
// window does not grow (no BDP probing), as a slow client's would not: a
// stream to it holds what it has not read on the server's side.
std::unique_ptr<pb::Mentat::Stub> OwnStub(TestServer& t, int id);

// Defaults for a test server: ephemeral ports, no fsync (tests do not
// test power loss), few threads.
inline ServerConfig TestConfig(const std::string& data_dir) {
  ServerConfig c;
  c.data_dir = data_dir;
  c.listen = "127.0.0.1:0";
  c.http = "127.0.0.1:0";
  c.readers_per_node = 4;
  c.sync_commits = false;
  c.block_cache_bytes = 16 << 20;
  c.log_level = "warn";
  c.shutdown_grace_ms = 2000;
  c.slow_query_ms = 60000;
  return c;
}

// A running server and a client stub. Restart() keeps the data dir.
class TestServer {
 public:
  // `adjust` may change the test configuration before the start.
  explicit TestServer(
      const std::function<void(ServerConfig*)>& adjust = nullptr)
      : config_(TestConfig(dir_.path())) {
    if (adjust) adjust(&config_);
    Start();
  }
  ~TestServer() { Stop(); }

  void Start() {
    auto server = MentatServer::Start(config_);
    REQUIRE_MESSAGE(server.ok(), server.status().ToString());
    server_ = *std::move(server);
    channel_ =
        grpc::CreateChannel(Address(), grpc::InsecureChannelCredentials());
    stub_ = pb::Mentat::NewStub(channel_);
  }
  void Stop() {
    stub_.reset();
    channel_.reset();
    server_.reset();
  }
  void Restart() {
    Stop();
    Start();
  }

  std::string Address() const {
    return "127.0.0.1:" + std::to_string(server_->port());
  }
  MentatServer& server() { return *server_; }
  pb::Mentat::Stub& stub() { return *stub_; }
  std::shared_ptr<grpc::Channel> channel() { return channel_; }
  const ServerConfig& config() const { return config_; }
  ServerConfig& mutable_config() { return config_; }

 private:
  TempDir dir_;
  ServerConfig config_;
  std::unique_ptr<MentatServer> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<pb::Mentat::Stub> stub_;
};

// A client context with a deadline (tests must not hang).
inline std::unique_ptr<grpc::ClientContext> Ctx(int timeout_ms = 20000) {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() +
                    std::chrono::milliseconds(timeout_ms));
  return ctx;
}

inline std::string StatusText(const grpc::Status& s) {
  return std::to_string(s.error_code()) + ": " + s.error_message();
}

// Transacts EDN tx-data; REQUIREs success.
// Asks the server to create database `name`; its answer.
inline grpc::Status CreateDatabaseStatus(TestServer& t,
                                         const std::string& name) {
  pb::CreateDatabaseRequest req;
  req.set_name(name);
  pb::CreateDatabaseResponse resp;
  auto ctx = Ctx();
  return t.stub().CreateDatabase(ctx.get(), req, &resp);
}

// Creates database `name` (it must not exist).
inline void CreateDatabase(TestServer& t, const std::string& name) {
  grpc::Status s = CreateDatabaseStatus(t, name);
  REQUIRE_MESSAGE(s.ok(), StatusText(s));
}

inline pb::TransactResponse Transact(TestServer& t, const std::string& edn,
                                     const std::string& database = "") {
  pb::TransactRequest req;
  req.set_database(database);
  req.set_tx_data(edn);
  pb::TransactResponse resp;
  auto ctx = Ctx();
  grpc::Status s = t.stub().Transact(ctx.get(), req, &resp);
  REQUIRE_MESSAGE(s.ok(), StatusText(s), " for ", edn);
  return resp;
}

// The status of a Transact expected to fail.
inline grpc::Status TransactStatus(TestServer& t, const std::string& edn,
                                   const std::string& database = "") {
  pb::TransactRequest req;
  req.set_database(database);
  req.set_tx_data(edn);
  pb::TransactResponse resp;
  auto ctx = Ctx();
  return t.stub().Transact(ctx.get(), req, &resp);
}

// Everything a Query stream sent.
struct QueryOutcome {
  grpc::Status status;
  std::vector<pb::QueryResponse> messages;
  std::vector<std::string> columns;
  std::vector<pb::Row> rows;
  int64_t basis_tx = 0;
  std::string last_token;
};

inline QueryOutcome RunQuery(pb::Mentat::Stub& stub,
                             const pb::QueryRequest& req,
                             int timeout_ms = 30000) {
  QueryOutcome out;
  auto ctx = Ctx(timeout_ms);
  auto reader = stub.Query(ctx.get(), req);
  pb::QueryResponse msg;
  while (reader->Read(&msg)) {
    if (msg.columns_size() > 0) {
      out.columns.assign(msg.columns().begin(), msg.columns().end());
    }
    out.basis_tx = msg.basis_tx();
    for (const pb::Row& r : msg.rows()) out.rows.push_back(r);
    if (!msg.resume_token().empty()) out.last_token = msg.resume_token();
    out.messages.push_back(msg);
  }
  out.status = reader->Finish();
  return out;
}

inline QueryOutcome Query(TestServer& t, const std::string& query,
                          const std::vector<std::string>& edn_inputs = {},
                          const std::string& database = "") {
  pb::QueryRequest req;
  req.set_database(database);
  req.set_query(query);
  for (const std::string& in : edn_inputs) req.add_inputs()->set_edn(in);
  return RunQuery(t.stub(), req);
}

// The schema most tests use.
inline constexpr char kPeopleSchema[] = R"([
  {:db/ident :person/name :db/valueType :db.type/string
   :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
  {:db/ident :person/email :db/valueType :db.type/string
   :db/cardinality :db.cardinality/one :db/unique :db.unique/value}
  {:db/ident :person/age :db/valueType :db.type/long
   :db/cardinality :db.cardinality/one}
  {:db/ident :person/friend :db/valueType :db.type/ref
   :db/cardinality :db.cardinality/many}
  {:db/ident :person/tag :db/valueType :db.type/keyword
   :db/cardinality :db.cardinality/many}])";

// n people: "p<i>" named "person <i>", age i % 100.
inline std::string People(int from, int n) {
  std::string edn = "[";
  for (int i = from; i < from + n; ++i) {
    edn += "{:db/id \"p" + std::to_string(i) + "\" :person/name \"person " +
           std::to_string(i) + "\" :person/age " + std::to_string(i % 100) +
           "}";
  }
  edn += "]";
  return edn;
}

// GET http://127.0.0.1:<port><target>; the body, and the status in
// *status.
// (test_support.cc: Boost.Beast is parsed there once, not in every test
// file.)
std::string HttpGet(int port, const std::string& target, int* status = nullptr);

// The value of an unlabelled Prometheus metric ("mentat_running_queries"),
// or -1.
inline double MetricValue(const std::string& exposition,
                          const std::string& name) {
  size_t pos = 0;
  while ((pos = exposition.find(name + " ", pos)) != std::string::npos) {
    if (pos == 0 || exposition[pos - 1] == '\n') {
      return std::stod(exposition.substr(pos + name.size() + 1));
    }
    pos += name.size();
  }
  return -1;
}

inline std::unique_ptr<pb::Mentat::Stub> OwnStub(TestServer& t, int id) {
  grpc::ChannelArguments args;
  args.SetInt("mentat.test.channel", id);
  args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
  return pb::Mentat::NewStub(grpc::CreateCustomChannel(
      t.Address(), grpc::InsecureChannelCredentials(), args));
}

}  // namespace mentat::server::testing

#endif  // MENTAT_SERVER_TEST_SUPPORT_H_
