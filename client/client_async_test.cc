// TransactAsync, PingAsync and QueryFirstAsync against a live mentatd:
// many calls in flight with no thread each, answers that start the next
// call, errors, and a write a replica refuses followed to the primary it
// names.

#include <doctest/doctest.h>

#include <functional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "mentat/client/client.h"

#ifdef MENTATD_BINARY

#include "live_server.h"

namespace mentat::client {
namespace {

using testing::Connected;
using testing::TestServer;

// Counts answers in; Wait returns once `n` came.
class Answers {
 public:
  void Add(absl::Status status, int64_t tx) {
    absl::MutexLock lock(&mu_);
    if (!status.ok()) errors_.push_back(status.ToString());
    if (tx != 0) txs_.insert(tx);
    count_++;
  }
  void Wait(int n) {
    absl::MutexLock lock(&mu_);
    auto enough = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return count_ >= n;
    };
    mu_.Await(absl::Condition(&enough));
  }
  std::vector<std::string> errors() {
    absl::MutexLock lock(&mu_);
    return errors_;
  }
  std::set<int64_t> txs() {
    absl::MutexLock lock(&mu_);
    return txs_;
  }

 private:
  absl::Mutex mu_;
  int count_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::string> errors_ ABSL_GUARDED_BY(mu_);
  std::set<int64_t> txs_ ABSL_GUARDED_BY(mu_);
};

int64_t CountValues(Client& client, const std::string& attribute) {
  v1::QueryRequest query;
  query.set_query("[:find (count ?v) . :where [_ " + attribute + " ?v]]");
  int64_t n = 0;  // (count ...) of nothing is no row
  absl::Status s = client.Query(query, [&](const v1::QueryResponse& m) {
    for (const auto& row : m.rows()) n = row.values(0).long_value();
    return true;
  });
  REQUIRE_MESSAGE(s.ok(), std::string(s.message()));
  return n;
}

TEST_CASE("client: async calls, many in flight, each answered once") {
  TestServer server;
  std::unique_ptr<Client> client = Connected(server);
  v1::TransactRequest schema;
  schema.set_tx_data(
      "[{:db/ident :a/v :db/valueType :db.type/long "
      ":db/cardinality :db.cardinality/one}]");
  REQUIRE(client->Transact(schema).ok());

  SUBCASE("64 transactions at once commit, each in its own transaction") {
    constexpr int kCalls = 64;
    Answers answers;
    for (int i = 0; i < kCalls; ++i) {
      v1::TransactRequest request;
      request.set_tx_data("[{:a/v " + std::to_string(i) + "}]");
      client->TransactAsync(request,
                            [&](absl::StatusOr<v1::TransactResponse> r) {
                              answers.Add(r.status(), r.ok() ? r->tx() : 0);
                            });
    }
    answers.Wait(kCalls);
    CHECK(answers.errors().empty());
    CHECK(answers.txs().size() == kCalls);
    CHECK(CountValues(*client, ":a/v") == kCalls);
  }

  SUBCASE("an answer may start the next call: 200 in a chain") {
    constexpr int kChain = 200;
    Answers answers;
    std::function<void(int)> next = [&](int i) {
      v1::TransactRequest request;
      request.set_tx_data("[{:a/v " + std::to_string(1000 + i) + "}]");
      client->TransactAsync(request,
                            [&, i](absl::StatusOr<v1::TransactResponse> r) {
                              // Before Add: the waiter may return (and `next`
                              // go) after it.
                              if (r.ok() && i + 1 < kChain) next(i + 1);
                              answers.Add(r.status(), r.ok() ? r->tx() : 0);
                            });
    };
    next(0);
    answers.Wait(kChain);
    CHECK(answers.errors().empty());
    CHECK(answers.txs().size() == kChain);
    // In a chain each transaction follows the last one's answer: their
    // basis grows one by one.
    CHECK(*answers.txs().rbegin() > *answers.txs().begin());
    CHECK(CountValues(*client, ":a/v") == kChain);
  }

  SUBCASE("a refused transaction's error reaches its callback") {
    Answers answers;
    absl::Status got;
    v1::TransactRequest bad;
    bad.set_tx_data("[{:a/v \"not a long\"}]");
    client->TransactAsync(bad, [&](absl::StatusOr<v1::TransactResponse> r) {
      got = r.status();
      answers.Add(absl::OkStatus(), 0);
    });
    v1::TransactRequest unreadable;
    unreadable.set_tx_data("[{:a/v 1}");
    absl::Status syntax;
    client->TransactAsync(unreadable,
                          [&](absl::StatusOr<v1::TransactResponse> r) {
                            syntax = r.status();
                            answers.Add(absl::OkStatus(), 0);
                          });
    answers.Wait(2);
    CHECK(got.code() == absl::StatusCode::kInvalidArgument);
    CHECK(std::string(got.message()).find(":a/v") != std::string::npos);
    CHECK(syntax.code() == absl::StatusCode::kInvalidArgument);
    CHECK(CountValues(*client, ":a/v") == 0);
  }

  SUBCASE("queries in flight: each reply whole, or more, or the error") {
    std::string data = "[";
    for (int i = 0; i < 5000; ++i) data += "{:a/v " + std::to_string(i) + "}";
    v1::TransactRequest load;
    load.set_tx_data(data + "]");
    REQUIRE(client->Transact(load).ok());
    constexpr int kCalls = 48;
    Answers answers;
    for (int i = 0; i < kCalls; ++i) {
      v1::QueryRequest query;
      query.set_query("[:find ?e ?v :in $ ?v :where [?e :a/v ?v]]");
      query.add_inputs()->set_edn(std::to_string(i * 100));
      client->QueryFirstAsync(
          query, [&, i](absl::StatusOr<const QueryBatch*> b) {
            absl::Status s = b.status();
            if (b.ok() && ((*b)->more() || (*b)->rows_size() != 1 ||
                           (*b)->row(0)[1].long_value() != i * 100)) {
              s = absl::InternalError("wrong answer for " +
                                      std::to_string(i * 100));
            }
            answers.Add(s, 0);
          });
    }
    answers.Wait(kCalls);
    CHECK(answers.errors().empty());

    // 5,000 rows are not a small answer: nothing comes, and more() says
    // that the stream has it.
    Answers big_answer;
    bool more = false;
    int64_t rows = -1;
    v1::QueryRequest all;
    all.set_query("[:find ?e ?v :where [?e :a/v ?v]]");
    client->QueryFirstAsync(all, [&](absl::StatusOr<const QueryBatch*> b) {
      if (b.ok()) {
        more = (*b)->more();
        rows = (*b)->rows_size();
      }
      big_answer.Add(b.status(), 0);
    });
    big_answer.Wait(1);
    CHECK(big_answer.errors().empty());
    CHECK(more);
    CHECK(rows < 5000);

    Answers bad_answer;
    absl::Status bad;
    v1::QueryRequest unreadable;
    unreadable.set_query("[:find ?v :where [?e :a/v ?v]");
    client->QueryFirstAsync(unreadable,
                            [&](absl::StatusOr<const QueryBatch*> b) {
                              bad = b.status();
                              bad_answer.Add(absl::OkStatus(), 0);
                            });
    bad_answer.Wait(1);
    CHECK(bad.code() == absl::StatusCode::kInvalidArgument);
  }

  SUBCASE("pings in flight answer with the server's version") {
    constexpr int kCalls = 32;
    Answers answers;
    for (int i = 0; i < kCalls; ++i) {
      client->PingAsync([&](absl::StatusOr<v1::PingResponse> pong) {
        absl::Status s = pong.status();
        if (pong.ok() && pong->server_version().rfind("mentatd ", 0) != 0) {
          s = absl::InternalError("version " + pong->server_version());
        }
        answers.Add(s, 0);
      });
    }
    answers.Wait(kCalls);
    CHECK(answers.errors().empty());
  }
}

TEST_CASE("client: an async write a replica refuses goes to the primary") {
  TestServer primary;
  TestServer replica({"--replica-of", primary.address()});
  ClientOptions options;
  options.address = replica.address() + "," + primary.address();
  absl::StatusOr<std::unique_ptr<Client>> connected = Client::Connect(options);
  REQUIRE(connected.ok());
  Client& client = **connected;
  REQUIRE(client.WaitForConnected(std::chrono::seconds(20)).ok());
  REQUIRE(client.primary() == replica.address());

  v1::TransactRequest schema;
  schema.set_tx_data(
      "[{:db/ident :r/v :db/valueType :db.type/long "
      ":db/cardinality :db.cardinality/one}]");
  absl::StatusOr<v1::TransactResponse> written;
  for (int i = 0; i < 200; ++i) {  // the primary may still be starting
    Answers answers;
    client.TransactAsync(schema, [&](absl::StatusOr<v1::TransactResponse> r) {
      written = std::move(r);
      answers.Add(absl::OkStatus(), 0);
    });
    answers.Wait(1);
    if (written.ok()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  REQUIRE_MESSAGE(written.ok(), std::string(written.status().message()));
  CHECK(client.primary() == primary.address());
}

// A deadline is the client's to keep: a server that takes the request and
// never answers (stopped, not gone: its socket still takes bytes) must not
// hold a call past its timeout, blocking, polled, async or streamed.
TEST_CASE("client: a call's timeout ends it when the server stops answering") {
  TestServer server;
  std::unique_ptr<Client> client = testing::Connected(server);
  ClientOptions polled_options = client->options();
  polled_options.poll_us = 1000;
  absl::StatusOr<std::unique_ptr<Client>> polled =
      Client::Connect(polled_options);
  REQUIRE(polled.ok());
  REQUIRE(client->Ping().ok());
  REQUIRE((*polled)->Ping().ok());

  server.Pause();
  CallOptions call;
  call.timeout = std::chrono::milliseconds(300);
  CHECK(client->Ping(call).status().code() ==
        absl::StatusCode::kDeadlineExceeded);
  CHECK((*polled)->Ping(call).status().code() ==
        absl::StatusCode::kDeadlineExceeded);
  v1::TransactRequest write;
  write.set_tx_data("[{:db/doc \"never answered\"}]");
  CHECK(client->Transact(write, call).status().code() ==
        absl::StatusCode::kDeadlineExceeded);
  absl::Mutex mu;
  std::vector<absl::StatusCode> codes;
  client->TransactAsync(
      write,
      [&](absl::StatusOr<v1::TransactResponse> r) {
        absl::MutexLock lock(&mu);
        codes.push_back(r.status().code());
      },
      call);
  client->PingAsync(
      [&](absl::StatusOr<v1::PingResponse> r) {
        absl::MutexLock lock(&mu);
        codes.push_back(r.status().code());
      },
      call);
  {
    absl::MutexLock lock(&mu);
    auto both = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
      return codes.size() == 2;
    };
    mu.Await(absl::Condition(&both));
    CHECK(codes == std::vector<absl::StatusCode>(
                       2, absl::StatusCode::kDeadlineExceeded));
  }
  v1::QueryRequest query;
  query.set_query("[:find ?e :where [?e :db/ident]]");
  int messages = 0;
  absl::Status streamed = client->Query(
      query,
      [&](const v1::QueryResponse&) {
        messages++;
        return true;
      },
      call);
  CHECK(streamed.code() == absl::StatusCode::kDeadlineExceeded);
  CHECK(messages == 0);

  // Resumed, the server answers again. (It may still commit the writes
  // the client gave up on, as with any deadline; the test does not care.)
  server.Resume();
  CHECK(client->Ping().ok());
  CHECK((*polled)->Ping().ok());
}

}  // namespace
}  // namespace mentat::client

#endif  // MENTATD_BINARY
