// mentatd under kill -9: several clients transact (each transaction
// carries a unique number on two entities, four datoms, and a request id);
// the server gets SIGKILL at a random moment; it restarts on the same data
// directory and the test checks that every acknowledged transaction is
// there whole, that none is there in part, that the log and the basis agree
// with the indexes, and that retrying an unanswered request id replays the
// transaction if it committed and commits it if it did not.
//
// MENTAT_SERVER_CRASH_ITERATIONS sets the number of kills (default 5).

#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "test_support.h"
#include "testing/mentatd_process.h"

namespace mentat::server::testing {
namespace {

constexpr char kCrashSchema[] = R"([
  {:db/ident :crash/seq :db/valueType :db.type/long
   :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
  {:db/ident :crash/twin :db/valueType :db.type/long
   :db/cardinality :db.cardinality/one}
  {:db/ident :crash/echo :db/valueType :db.type/long
   :db/cardinality :db.cardinality/one}
  {:db/ident :crash/of :db/valueType :db.type/ref
   :db/cardinality :db.cardinality/one}])";

// Transaction n: two entities, four datoms, all carrying n.
std::string CrashTx(int64_t n) {
  const std::string s = std::to_string(n);
  return "[{:db/id \"a\" :crash/seq " + s + " :crash/twin " + s +
         "} {:db/id \"b\" :crash/echo " + s + " :crash/of \"a\"}]";
}

grpc::Status TransactN(pb::Mentat::Stub& stub, int64_t n,
                       pb::TransactResponse* resp, int timeout_ms = 10000) {
  pb::TransactRequest req;
  req.set_tx_data(CrashTx(n));
  req.set_request_id("crash-" + std::to_string(n));
  auto ctx = Ctx(timeout_ms);
  return stub.Transact(ctx.get(), req, resp);
}

// An entity id or a long, however a result column carries it.
int64_t Id(const pb::Value& v) {
  return v.kind_case() == pb::Value::kRef ? v.ref() : v.long_value();
}

// Rows of a query against `stub`; REQUIREs success.
std::vector<pb::Row> Rows(pb::Mentat::Stub& stub, const std::string& query) {
  pb::QueryRequest req;
  req.set_query(query);
  QueryOutcome out = RunQuery(stub, req, 60000);
  REQUIRE_MESSAGE(out.status.ok(), StatusText(out.status), " for ", query);
  return out.rows;
}

// What the database holds after a restart.
struct Contents {
  std::map<int64_t, int64_t> tx_of_seq;  // n -> tx of its :crash/seq
  int partial = 0;                       // transactions present in part
  int64_t basis = 0;
};

Contents Inspect(pb::Mentat::Stub& stub) {
  Contents c;
  std::map<int64_t, std::pair<int64_t, int64_t>> seq;  // e -> (n, tx)
  for (const pb::Row& r :
       Rows(stub, "[:find ?e ?n ?tx :where [?e :crash/seq ?n ?tx]]")) {
    seq[Id(r.values(0))] = {Id(r.values(1)), Id(r.values(2))};
  }
  std::map<int64_t, int64_t> twin;  // e -> n
  for (const pb::Row& r :
       Rows(stub, "[:find ?e ?n :where [?e :crash/twin ?n]]")) {
    twin[Id(r.values(0))] = Id(r.values(1));
  }
  std::map<int64_t, std::pair<int64_t, int64_t>> echo;  // n -> (f, tx)
  for (const pb::Row& r :
       Rows(stub, "[:find ?f ?n ?tx :where [?f :crash/echo ?n ?tx]]")) {
    const int64_t n = Id(r.values(1));
    if (echo.contains(n)) c.partial++;  // a transaction applied twice
    echo[n] = {Id(r.values(0)), Id(r.values(2))};
  }
  std::map<int64_t, int64_t> of;  // f -> e
  for (const pb::Row& r :
       Rows(stub, "[:find ?f ?e :where [?f :crash/of ?e]]")) {
    of[Id(r.values(0))] = Id(r.values(1));
  }
  if (twin.size() != seq.size() || echo.size() != seq.size() ||
      of.size() != seq.size()) {
    c.partial++;
  }
  for (const auto& [e, n_tx] : seq) {
    const auto [n, tx] = n_tx;
    c.tx_of_seq[n] = tx;
    auto t = twin.find(e);
    auto x = echo.find(n);
    if (t == twin.end() || t->second != n || x == echo.end() ||
        x->second.second != tx || !of.contains(x->second.first) ||
        of[x->second.first] != e) {
      c.partial++;
    }
  }
  pb::QueryRequest basis_req;
  basis_req.set_query("[:find ?e . :where [?e :db/ident :crash/seq]]");
  c.basis = RunQuery(stub, basis_req).basis_tx;
  return c;
}

// Checks the log from `from_tx` on: every transaction wrote exactly the
// four datoms of one crash transaction (besides its own tx datoms), and
// the last one is the basis. Returns the number of transactions read.
int CheckLog(pb::Mentat::Stub& stub, int64_t from_tx, int64_t basis, int* bad) {
  pb::TxRangeRequest range;
  range.set_from_tx(from_tx);
  auto ctx = Ctx(60000);
  auto reader = stub.TxRange(ctx.get(), range);
  pb::TxRangeResponse msg;
  int count = 0;
  int64_t last = 0;
  while (reader->Read(&msg)) {
    for (const pb::Transaction& tx : msg.transactions()) {
      count++;
      last = tx.tx();
      int user = 0;
      std::set<int64_t> values;
      for (const pb::Datom& d : tx.datoms()) {
        if (d.e() == tx.tx()) continue;
        user++;
        if (d.v().kind_case() == pb::Value::kLongValue) {
          values.insert(d.v().long_value());
        }
        if (!d.added()) (*bad)++;
      }
      if (user != 4 || values.size() != 1) (*bad)++;
    }
  }
  grpc::Status s = reader->Finish();
  REQUIRE_MESSAGE(s.ok(), StatusText(s));
  if (count > 0 && last != basis) (*bad)++;
  return count;
}

TEST_CASE("mentatd: kill -9 under a transact load, restart, verify") {
  const char* env = std::getenv("MENTAT_SERVER_CRASH_ITERATIONS");
  const int iterations = env != nullptr ? std::atoi(env) : 5;
  TempDir dir;
  std::filesystem::create_directories(dir.path());
  const std::string data = dir.path() + "/data";
  const std::string log = dir.path() + "/log";
  std::mt19937 rng(20261130);

  // n -> tx of every acknowledged transaction, over all iterations.
  std::map<int64_t, int64_t> acknowledged;
  std::set<int64_t> unanswered;  // sent, no answer before the kill
  int64_t next = 1;
  int64_t verified_basis = 0;
  size_t total_acks = 0, lost = 0, partial = 0, bad_log = 0, replays = 0,
         recommitted = 0, unexpected = 0;

  for (int i = 0; i <= iterations; ++i) {
    CAPTURE(i);
    MentatdProcess daemon(
        {"--data-dir", data, "--listen", "127.0.0.1:0", "--http", "",
         "--sync-commits=true", "--readers-per-node", "2"},
        {}, log);
    const int port = daemon.WaitForPort(std::chrono::seconds(20));
    REQUIRE_MESSAGE(port > 0, daemon.log());
    const std::string address = "127.0.0.1:" + std::to_string(port);
    auto stub = pb::Mentat::NewStub(
        grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
    if (i == 0) {
      pb::TransactRequest req;
      req.set_tx_data(kCrashSchema);
      pb::TransactResponse resp;
      auto ctx = Ctx();
      grpc::Status s = stub->Transact(ctx.get(), req, &resp);
      REQUIRE_MESSAGE(s.ok(), StatusText(s));
      verified_basis = resp.tx();
    } else {
      // Verify what the previous run left.
      Contents c = Inspect(*stub);
      partial += c.partial;
      for (const auto& [n, tx] : acknowledged) {
        auto it = c.tx_of_seq.find(n);
        if (it == c.tx_of_seq.end() || it->second != tx) lost++;
      }
      int bad = 0;
      CheckLog(*stub, verified_basis + 1, c.basis, &bad);
      bad_log += bad;
      CHECK(c.basis >= verified_basis);
      // Retry every unanswered request id: a committed one replays with
      // the tx it committed as, a lost one commits now.
      for (int64_t n : unanswered) {
        pb::TransactResponse resp;
        grpc::Status s = TransactN(*stub, n, &resp);
        REQUIRE_MESSAGE(s.ok(), StatusText(s));
        auto it = c.tx_of_seq.find(n);
        if (it != c.tx_of_seq.end()) {
          replays++;
          CHECK(resp.replayed());
          CHECK(resp.tx() == it->second);
        } else {
          recommitted++;
          CHECK(!resp.replayed());
        }
        acknowledged[n] = resp.tx();
      }
      unanswered.clear();
      pb::QueryRequest basis_req;
      basis_req.set_query("[:find ?e . :where [?e :db/ident :crash/seq]]");
      verified_basis = RunQuery(*stub, basis_req).basis_tx;
      CHECK(lost == 0);
      CHECK(partial == 0);
      CHECK(bad_log == 0);
    }
    if (i == iterations) break;

    // The load: four writers on their own connections, until the kill.
    absl::Mutex mu;
    std::atomic<int64_t> counter{next};
    std::vector<std::thread> writers;
    for (int w = 0; w < 4; ++w) {
      writers.emplace_back([&] {
        auto own = pb::Mentat::NewStub(
            grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
        for (;;) {
          const int64_t n = counter.fetch_add(1);
          pb::TransactResponse resp;
          grpc::Status s = TransactN(*own, n, &resp);
          absl::MutexLock lock(&mu);
          if (s.ok()) {
            acknowledged[n] = resp.tx();
            total_acks++;
            continue;
          }
          unanswered.insert(n);
          // After the kill every call fails UNAVAILABLE; anything else
          // is a server answer this test does not expect.
          if (s.error_code() != grpc::StatusCode::UNAVAILABLE) {
            unexpected++;
            MESSAGE("unexpected: ", StatusText(s));
          }
          return;
        }
      });
    }
    const int run_ms = std::uniform_int_distribution<int>(20, 600)(rng);
    std::this_thread::sleep_for(std::chrono::milliseconds(run_ms));
    daemon.Kill();
    for (auto& w : writers) w.join();
    next = counter.load();
  }
  CHECK(unexpected == 0);
  CHECK(total_acks > 0);
  MESSAGE("server crash loop: ", iterations, " kills, ", total_acks,
          " acknowledged transactions, ", lost, " lost, ", partial,
          " partial, ", bad_log,
          " bad log entries; unanswered at the kill: ", replays,
          " had committed (replayed), ", recommitted,
          " had not (committed on retry)");
}

TEST_CASE("mentatd: a deleted database stays deleted after kill -9") {
  TempDir dir;
  std::filesystem::create_directories(dir.path());
  const std::string data = dir.path() + "/data";
  const std::string log = dir.path() + "/log";
  const std::vector<std::string> args = {
      "--data-dir", data,          "--listen",           "127.0.0.1:0",
      "--http",     "127.0.0.1:0", "--sync-commits=true"};
  auto list = [](pb::Mentat::Stub& stub) {
    pb::ListDatabasesRequest req;
    pb::ListDatabasesResponse resp;
    auto ctx = Ctx();
    grpc::Status s = stub.ListDatabases(ctx.get(), req, &resp);
    REQUIRE_MESSAGE(s.ok(), StatusText(s));
    std::vector<std::string> names;
    for (const auto& d : resp.databases()) names.push_back(d.name());
    return names;
  };
  {
    MentatdProcess daemon(args, {}, log);
    const int port = daemon.WaitForPort(std::chrono::seconds(20));
    REQUIRE_MESSAGE(port > 0, daemon.log());
    auto stub = pb::Mentat::NewStub(
        grpc::CreateChannel("127.0.0.1:" + std::to_string(port),
                            grpc::InsecureChannelCredentials()));
    pb::CreateDatabaseRequest create;
    create.set_name("sales");
    pb::CreateDatabaseResponse created;
    auto ctx = Ctx();
    grpc::Status s = stub->CreateDatabase(ctx.get(), create, &created);
    REQUIRE_MESSAGE(s.ok(), StatusText(s));
    // 2,000 entities, and a query that holds the database while it counts
    // their 2000^3 combinations (until the kill): a Query stream of
    // "sales" is running when it is deleted.
    std::string many = "[";
    for (int i = 1; i <= 2000; ++i) {
      many += "{:crash/seq " + std::to_string(i) + "}";
    }
    many += "]";
    for (const std::string& tx : {std::string(kCrashSchema), many}) {
      pb::TransactRequest req;
      req.set_database("sales");
      req.set_tx_data(tx);
      pb::TransactResponse resp;
      auto tctx = Ctx();
      s = stub->Transact(tctx.get(), req, &resp);
      REQUIRE_MESSAGE(s.ok(), StatusText(s));
    }
    pb::QueryRequest query;
    query.set_database("sales");
    query.set_query(
        "[:find (count ?a) . :where [?a :crash/seq _] [?b :crash/seq _] "
        "[?c :crash/seq _]]");
    auto qctx = Ctx(120000);
    auto stream = stub->Query(qctx.get(), query);
    // Running once the server counts it (it holds the database from then
    // on).
    std::smatch m;
    const std::string startup = daemon.log();
    REQUIRE(std::regex_search(startup, m, std::regex(R"(HTTP on port (\d+))")));
    const int http = std::stoi(m[1]);
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (MetricValue(HttpGet(http, "/metrics"), "mentat_running_queries") <
               1 &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    REQUIRE(MetricValue(HttpGet(http, "/metrics"), "mentat_running_queries") ==
            1);

    pb::DeleteDatabaseRequest del;
    del.set_name("sales");
    pb::DeleteDatabaseResponse deleted;
    auto dctx = Ctx();
    s = stub->DeleteDatabase(dctx.get(), del, &deleted);
    REQUIRE_MESSAGE(s.ok(), StatusText(s));
    CHECK(list(*stub) == std::vector<std::string>{"default"});
    // The query still holds it: its files are there at the kill.
    CHECK(std::filesystem::exists(data + "/sales/CURRENT"));
    daemon.Kill();
    qctx->TryCancel();
  }
  MentatdProcess daemon(args, {}, log);
  const int port = daemon.WaitForPort(std::chrono::seconds(20));
  REQUIRE_MESSAGE(port > 0, daemon.log());
  auto stub = pb::Mentat::NewStub(grpc::CreateChannel(
      "127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials()));
  CHECK(list(*stub) == std::vector<std::string>{"default"});
  pb::QueryRequest query;
  query.set_database("sales");
  query.set_query("[:find ?e :where [?e :crash/seq _]]");
  CHECK(RunQuery(*stub, query).status.error_code() ==
        grpc::StatusCode::NOT_FOUND);
  CHECK(!std::filesystem::exists(data + "/sales"));
  CHECK(!std::filesystem::exists(data + "/sales.deleted"));
}

}  // namespace
}  // namespace mentat::server::testing
