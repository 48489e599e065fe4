// The client library against a live mentatd (when the build has one):
// streaming queries over many batches, cancellation, and a stream that
// resumes from its token after the server is killed and restarted.

#include "mentat/client/client.h"

#include <doctest/doctest.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#ifdef MENTATD_BINARY

#include "live_server.h"

namespace mentat::client {
namespace {

using testing::Connected;
using testing::FreePort;
using testing::TestServer;

void Load(Client* client, int n) {
  v1::TransactRequest schema;
  schema.set_tx_data(
      "[{:db/ident :n/v :db/valueType :db.type/long "
      ":db/cardinality :db.cardinality/one}]");
  REQUIRE(client->Transact(schema).ok());
  for (int start = 0; start < n; start += 1000) {
    std::string tx = "[";
    for (int k = start; k < start + 1000 && k < n; ++k) {
      tx += "{:n/v " + std::to_string(k) + "}";
    }
    v1::TransactRequest request;
    request.set_tx_data(tx + "]");
    absl::StatusOr<v1::TransactResponse> r = client->Transact(request);
    REQUIRE_MESSAGE(r.ok(), std::string(r.status().message()));
  }
}

constexpr int kRows = 30000;

// One server and data set for every case; destroyed (the server stopped)
// at exit.
struct Fixture {
  Fixture() : client(Connected(server)) { Load(client.get(), kRows); }
  TestServer server;
  std::unique_ptr<Client> client;
};

Fixture& Shared() {
  static Fixture fixture;
  return fixture;
}

TEST_CASE("client: query streams, errors, cancellation and resume") {
  TestServer& server = Shared().server;
  Client* client = Shared().client.get();

  v1::QueryRequest query;
  query.set_query("[:find ?v :where [_ :n/v ?v]]");
  query.set_batch_rows(100);

  SUBCASE("every row once, columns first") {
    std::set<int64_t> seen;
    int batches = 0;
    std::vector<std::string> columns;
    absl::Status s = client->Query(query, [&](const v1::QueryResponse& m) {
      if (batches++ == 0)
        columns.assign(m.columns().begin(), m.columns().end());
      for (const v1::Row& row : m.rows()) {
        CHECK(seen.insert(row.values(0).long_value()).second);
      }
      return true;
    });
    REQUIRE(s.ok());
    CHECK(columns == std::vector<std::string>{"?v"});
    CHECK(seen.size() == kRows);
    CHECK(batches >= kRows / 100);
  }

  SUBCASE("a small answer in several messages, by QueryFirst or a stream") {
    // QueryFirst's reply is the first message; the stream continues from
    // its token. With query_first off, the stream answers alone. Either
    // way every row comes once and the columns once.
    v1::QueryRequest small;
    small.set_query("[:find ?v :in $ [?v ...] :where [_ :n/v ?v]]");
    std::string values = "[";
    for (int i = 0; i < 25; ++i) values += std::to_string(i * 7) + " ";
    small.add_inputs()->set_edn(values + "]");
    small.set_batch_rows(10);
    for (const bool query_first : {true, false}) {
      CAPTURE(query_first);
      ClientOptions options = client->options();
      options.query_first = query_first;
      auto other = Client::Connect(options);
      REQUIRE(other.ok());
      std::set<int64_t> seen;
      int with_columns = 0;
      absl::Status s = (*other)->Query(small, [&](const v1::QueryResponse& m) {
        if (m.columns_size() > 0) ++with_columns;
        for (const v1::Row& row : m.rows()) {
          CHECK(seen.insert(row.values(0).long_value()).second);
        }
        return true;
      });
      REQUIRE_MESSAGE(s.ok(), std::string(s.message()));
      CHECK(seen.size() == 25);
      CHECK(*seen.rbegin() == 24 * 7);
      CHECK(with_columns == 1);
    }
  }

  SUBCASE("server errors keep their code and position") {
    v1::QueryRequest bad;
    bad.set_query("[:find ?v :where [_ :n/v ?v]");
    absl::Status s =
        client->Query(bad, [](const v1::QueryResponse&) { return true; });
    CHECK(s.code() == absl::StatusCode::kInvalidArgument);
    CHECK(std::string(s.message()).rfind("line 1, column ", 0) == 0);
  }

  SUBCASE("a canceller stops a running stream from another thread") {
    Canceller canceller;
    CallOptions call;
    call.canceller = &canceller;
    v1::QueryRequest slow;
    slow.set_query(
        "[:find (count ?a) :where [?a :n/v ?x] [?b :n/v ?y] [(< ?x ?y)]]");
    std::thread stopper([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      canceller.Cancel();
    });
    const auto start = std::chrono::steady_clock::now();
    absl::Status s = client->Query(
        slow, [](const v1::QueryResponse&) { return true; }, call);
    stopper.join();
    // Either the query finished first (a fast machine) or it was cancelled
    // promptly.
    if (!s.ok()) {
      CHECK(s.code() == absl::StatusCode::kCancelled);
      CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
    }
    CHECK(canceller.cancelled());
  }

  SUBCASE("a stream broken by a server restart resumes from its token") {
    std::set<int64_t> seen;
    int batches = 0;
    CallOptions call;
    call.resume_attempts = 12;
    int resumes = 0;
    call.resumes = &resumes;
    absl::Status s = client->Query(
        query,
        [&](const v1::QueryResponse& m) {
          for (const v1::Row& row : m.rows()) {
            CHECK(seen.insert(row.values(0).long_value()).second);
          }
          if (++batches == 3) {
            server.Kill(SIGKILL);
            server.Start();
          }
          return true;
        },
        call);
    REQUIRE_MESSAGE(s.ok(), std::string(s.message()));
    CHECK(seen.size() == kRows);
    CHECK(resumes >= 1);
  }
}

TEST_CASE("client: QueryBatches reads what Query reads") {
  Client* client = Shared().client.get();
  v1::QueryRequest query;
  query.set_query("[:find ?v :where [_ :n/v ?v]]");
  query.set_batch_rows(100);

  SUBCASE("a long stream: every row once, columns first") {
    std::set<int64_t> seen;
    int batches = 0;
    std::vector<std::string_view> columns;
    absl::Status s = client->QueryBatches(query, [&](const QueryBatch& b) {
      if (batches++ == 0) columns = b.columns();
      CHECK((batches == 1 || b.columns().empty()));
      for (const WireRow row : b.rows()) {
        REQUIRE(row.size() == 1);
        CHECK(seen.insert(row[0].long_value()).second);
      }
      return true;
    });
    REQUIRE_MESSAGE(s.ok(), std::string(s.message()));
    CHECK(columns.size() == 1);  // views into a message gone by now
    CHECK(seen.size() == kRows);
    CHECK(batches >= kRows / 100);
  }

  SUBCASE("a map and integers, as Query's messages hold them") {
    v1::QueryRequest pulls;
    pulls.set_query(
        "[:find ?v (pull ?e [:db/id :n/v]) :where [?e :n/v ?v] [(< ?v 40)]]");
    pulls.set_batch_rows(7);
    std::multiset<std::string> want, got;
    const auto keep = [](const v1::QueryResponse& m, auto* rows) {
      for (const v1::Row& r : m.rows()) rows->insert(r.SerializeAsString());
      return true;
    };
    REQUIRE(client->Query(pulls, [&](auto& m) { return keep(m, &want); }).ok());
    REQUIRE(client
                ->QueryBatches(pulls,
                               [&](const QueryBatch& b) {
                                 return keep(b.ToMessage(), &got);
                               })
                .ok());
    CHECK(want.size() == 40);
    CHECK(got == want);
  }

  SUBCASE("stopped by its callback, and a server's error") {
    int batches = 0;
    CHECK(client
              ->QueryBatches(query,
                             [&](const QueryBatch&) { return ++batches < 2; })
              .ok());
    CHECK(batches == 2);
    v1::QueryRequest bad;
    bad.set_query("[:find ?v :where [_ :n/v ?v]");
    absl::Status s =
        client->QueryBatches(bad, [](const QueryBatch&) { return true; });
    CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  }
}

TEST_CASE("client: who owns a query's messages") {
  Client* client = Shared().client.get();
  // One message each (QueryFirst answers them whole).
  const auto values_query = [](int from, int count) {
    v1::QueryRequest q;
    q.set_query("[:find ?v :in $ [?v ...] :where [_ :n/v ?v]]");
    std::string values = "[";
    for (int i = from; i < from + count; ++i) values += std::to_string(i) + " ";
    q.add_inputs()->set_edn(values + "]");
    return q;
  };
  const auto sorted_longs =
      [](const google::protobuf::RepeatedPtrField<v1::Row>& rows) {
        std::vector<int64_t> out;
        for (const v1::Row& row : rows)
          out.push_back(row.values(0).long_value());
        std::sort(out.begin(), out.end());
        return out;
      };
  std::vector<int64_t> first_ten(10), ten_more(10);
  for (int i = 0; i < 10; ++i) {
    first_ten[static_cast<size_t>(i)] = i;
    ten_more[static_cast<size_t>(i)] = 100 + i;
  }

  SUBCASE("a call made inside a callback leaves the outer message whole") {
    std::vector<int64_t> outer_before, outer_after, inner;
    absl::Status s =
        client->Query(values_query(0, 10), [&](const v1::QueryResponse& m) {
          // Query's messages are parsed onto an arena, not the heap.
          CHECK(m.GetArena() != nullptr);
          outer_before = sorted_longs(m.rows());
          absl::Status nested = client->Query(values_query(100, 10),
                                              [&](const v1::QueryResponse& n) {
                                                inner = sorted_longs(n.rows());
                                                return true;
                                              });
          CHECK(nested.ok());
          outer_after = sorted_longs(m.rows());
          return true;
        });
    REQUIRE_MESSAGE(s.ok(), std::string(s.message()));
    CHECK(outer_before == first_ten);
    CHECK(outer_after == first_ten);
    CHECK(inner == ten_more);
  }

  SUBCASE("rows taken by QueryTaking stay the caller's across later calls") {
    google::protobuf::RepeatedPtrField<v1::Row> taken;
    absl::Status s =
        client->QueryTaking(values_query(0, 10), [&](v1::QueryResponse* m) {
          // On the heap: the swap below moves the rows, it copies none.
          CHECK(m->GetArena() == nullptr);
          taken.Swap(m->mutable_rows());
          return true;
        });
    REQUIRE_MESSAGE(s.ok(), std::string(s.message()));
    // Later calls on this thread reuse the arena; the taken rows are not
    // on it.
    for (int round = 0; round < 3; ++round) {
      std::vector<int64_t> seen;
      s = client->Query(values_query(100, 10), [&](const v1::QueryResponse& m) {
        seen = sorted_longs(m.rows());
        return true;
      });
      REQUIRE(s.ok());
      CHECK(seen == ten_more);
      google::protobuf::RepeatedPtrField<v1::Row> again;
      s = client->QueryTaking(values_query(100, 10), [&](v1::QueryResponse* m) {
        again.Swap(m->mutable_rows());
        return true;
      });
      REQUIRE(s.ok());
      CHECK(sorted_longs(again) == ten_more);
    }
    CHECK(sorted_longs(taken) == first_ten);
  }

  SUBCASE("a stream's messages each hold their own rows") {
    // Every message of a many-message answer is parsed into memory the
    // previous one used: what each callback sees is its own batch.
    v1::QueryRequest query = values_query(0, 250);
    query.set_batch_rows(20);
    std::set<int64_t> seen;
    int batches = 0;
    absl::Status s = client->Query(query, [&](const v1::QueryResponse& m) {
      ++batches;
      CHECK(m.rows_size() <= 20);
      for (const v1::Row& row : m.rows()) {
        CHECK(seen.insert(row.values(0).long_value()).second);
      }
      return true;
    });
    REQUIRE_MESSAGE(s.ok(), std::string(s.message()));
    CHECK(seen.size() == 250);
    CHECK(batches >= 250 / 20);
  }
}

TEST_CASE("client: ping answers with the server's version") {
  Client* client = Shared().client.get();
  absl::StatusOr<v1::PingResponse> pong = client->Ping();
  REQUIRE_MESSAGE(pong.ok(), pong.status().ToString());
  CHECK(pong->server_version().rfind("mentatd ", 0) == 0);
  CallOptions call;
  call.timeout = std::chrono::milliseconds(20000);
  CHECK(client->Ping(call).ok());
}

// Connections to `port` from this machine (/proc/net/tcp and tcp6, where
// gRPC's sockets are: the client's end of each names the server's port as
// its remote one).
int ConnectionsTo(int port) {
  int n = 0;
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream tcp(table);
    std::string line;
    std::getline(tcp, line);  // the column names
    while (std::getline(tcp, line)) {
      std::istringstream fields(line);
      std::string slot, local, remote, state;
      fields >> slot >> local >> remote >> state;
      const size_t colon = remote.find(':');
      if (state == "01" && colon != std::string::npos &&
          std::stoi(remote.substr(colon + 1), nullptr, 16) == port) {
        n++;
      }
    }
  }
  return n;
}

// Voluntary context switches of the calling thread so far (the times it
// slept).
long VoluntarySwitches() {
  rusage usage = {};
  getrusage(RUSAGE_THREAD, &usage);
  return usage.ru_nvcsw;
}

TEST_CASE("client: unary calls that poll for their answers (poll_us)") {
  ClientOptions options = Shared().client->options();
  // Long enough that no call outlasts it, even on a busy machine: the
  // calling thread then never sleeps.
  options.poll_us = 100000;
  auto polled = Client::Connect(options);
  REQUIRE(polled.ok());
  Client* client = polled->get();
  REQUIRE(client->Ping().ok());  // connected, the thread's queue made

  SUBCASE("answers as a blocking call's, without the thread sleeping") {
    const long before = VoluntarySwitches();
    for (int i = 0; i < 100; ++i) REQUIRE(client->Ping().ok());
    // Each blocking call sleeps until its answer: about 100 here.
    CHECK(VoluntarySwitches() - before <= 10);
    v1::QueryRequest query;
    query.set_query("[:find ?v :in $ [?v ...] :where [_ :n/v ?v]]");
    query.add_inputs()->set_edn("[3 5 29999 30000]");
    std::set<int64_t> seen;
    absl::Status s = client->Query(query, [&](const v1::QueryResponse& m) {
      for (const v1::Row& row : m.rows())
        seen.insert(row.values(0).long_value());
      return true;
    });
    REQUIRE(s.ok());
    CHECK(seen == std::set<int64_t>{3, 5, 29999});
  }

  SUBCASE("errors and cancellation as a blocking call's") {
    v1::TransactRequest bad;
    bad.set_tx_data("[{:n/v 1");
    absl::StatusOr<v1::TransactResponse> r = client->Transact(bad);
    REQUIRE(!r.ok());
    CHECK(r.status().code() == absl::StatusCode::kInvalidArgument);
    Canceller canceller;
    canceller.Cancel();
    CallOptions call;
    call.canceller = &canceller;
    CHECK(client->Ping(call).status().code() == absl::StatusCode::kCancelled);
    CHECK(client->Ping().ok());
  }

  SUBCASE("threads each poll their own calls") {
    std::vector<std::thread> threads;
    std::atomic<int> right{0};
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&] {
        for (int i = 0; i < 50; ++i) right += client->Ping().ok() ? 1 : 0;
      });
    }
    for (std::thread& t : threads) t.join();
    CHECK(right == 200);
  }
}

TEST_CASE("client: streams that poll for their messages (poll_us)") {
  ClientOptions options = Shared().client->options();
  options.poll_us = 100000;
  // Every query as a stream, not first as a unary QueryFirst.
  options.query_first = false;
  auto polled = Client::Connect(options);
  REQUIRE(polled.ok());
  Client* client = polled->get();
  REQUIRE(client->Ping().ok());
  v1::QueryRequest all;
  all.set_query("[:find ?v :where [_ :n/v ?v]]");
  all.set_batch_rows(1000);

  SUBCASE("every message, without the thread sleeping for each") {
    const long before = VoluntarySwitches();
    std::set<int64_t> seen;
    int messages = 0;
    absl::Status s = client->QueryBatches(all, [&](const QueryBatch& b) {
      ++messages;
      for (const WireRow row : b.rows()) seen.insert(row[0].long_value());
      return true;
    });
    REQUIRE_MESSAGE(s.ok(), s.ToString());
    CHECK(messages == 30);
    CHECK(seen.size() == 30000);
    CHECK(*seen.begin() == 0);
    CHECK(*seen.rbegin() == 29999);
    // A blocking reader sleeps until each of the 30 messages.
    CHECK(VoluntarySwitches() - before <= 10);
  }

  SUBCASE("a stream stopped part way, and one inside another's rows") {
    int outer = 0;
    int64_t inner_rows = 0;
    absl::Status s = client->QueryBatches(all, [&](const QueryBatch&) {
      // Its own stream, on its own queue, while the outer one waits.
      v1::QueryRequest some;
      some.set_query("[:find ?v :in $ [?v ...] :where [_ :n/v ?v]]");
      some.add_inputs()->set_edn("[1 2 3 40000]");
      absl::Status in = client->QueryBatches(some, [&](const QueryBatch& b) {
        inner_rows += b.rows_size();
        return true;
      });
      CHECK(in.ok());
      return ++outer < 3;
    });
    CHECK(s.ok());
    CHECK(outer == 3);
    CHECK(inner_rows == 9);
    // The thread's queues are free again: the next stream reads whole.
    int64_t rows = 0;
    REQUIRE(client
                ->QueryBatches(all,
                               [&](const QueryBatch& b) {
                                 rows += b.rows_size();
                                 return true;
                               })
                .ok());
    CHECK(rows == 30000);
  }

  SUBCASE("errors and cancellation as a blocking stream's") {
    v1::QueryRequest bad;
    bad.set_query("[:find ?v :where [_ :n/nope ?v]]");
    absl::Status s =
        client->QueryBatches(bad, [](const QueryBatch&) { return true; });
    CHECK(s.code() == absl::StatusCode::kInvalidArgument);
    CHECK(std::string(s.message()).find(":n/nope") != std::string::npos);
    Canceller canceller;
    canceller.Cancel();
    CallOptions call;
    call.canceller = &canceller;
    s = client->QueryBatches(
        all, [](const QueryBatch&) { return true; }, call);
    CHECK(s.code() == absl::StatusCode::kCancelled);
  }
}

TEST_CASE("client: own_connection keeps a client off the others' socket") {
  TestServer server;
  const int port =
      std::stoi(server.address().substr(server.address().rfind(':') + 1));
  std::unique_ptr<Client> first = Connected(server);
  std::unique_ptr<Client> second = Connected(server);
  REQUIRE(first->Ping().ok());
  REQUIRE(second->Ping().ok());
  // gRPC shares one connection among a process's channels to one address.
  CHECK(ConnectionsTo(port) == 1);

  ClientOptions options;
  options.address = server.address();
  options.own_connection = true;
  absl::StatusOr<std::unique_ptr<Client>> own = Client::Connect(options);
  REQUIRE(own.ok());
  REQUIRE((*own)->WaitForConnected(std::chrono::seconds(20)).ok());
  REQUIRE((*own)->Ping().ok());
  CHECK(ConnectionsTo(port) == 2);
}

TEST_CASE("client: streams go on a connection of their own") {
  // On a connection that has carried a stream (gRPC's callback API in
  // mentatd), the server's callback threads poll for every later call,
  // and unary calls took twice as long.
  TestServer server;
  const int port =
      std::stoi(server.address().substr(server.address().rfind(':') + 1));
  ClientOptions options;
  options.address = server.address();
  options.query_first = false;  // every query a stream
  absl::StatusOr<std::unique_ptr<Client>> client = Client::Connect(options);
  REQUIRE(client.ok());
  REQUIRE((*client)->WaitForConnected(std::chrono::seconds(20)).ok());
  REQUIRE((*client)->Ping().ok());
  CHECK(ConnectionsTo(port) == 1);
  v1::QueryRequest idents;
  idents.set_query("[:find ?i :where [_ :db/ident ?i]]");
  int64_t rows = 0;
  absl::Status s = (*client)->QueryBatches(idents, [&](const QueryBatch& b) {
    rows += b.rows_size();
    return true;
  });
  REQUIRE_MESSAGE(s.ok(), s.ToString());
  CHECK(rows > 10);
  REQUIRE((*client)->Ping().ok());
  CHECK(ConnectionsTo(port) == 2);
  // Later streams and unary calls keep to their own connections.
  REQUIRE((*client)
              ->QueryBatches(idents, [](const QueryBatch&) { return true; })
              .ok());
  REQUIRE((*client)->Ping().ok());
  CHECK(ConnectionsTo(port) == 2);
}

TEST_CASE("client: a dry run, and reads with speculative transactions") {
  Client* client = Shared().client.get();
  const std::string tx_data = "[{:db/id \"neg\" :n/v -1}]";
  v1::TransactRequest dry;
  dry.set_tx_data(tx_data);
  dry.set_dry_run(true);
  absl::StatusOr<v1::TransactResponse> answer = client->Transact(dry);
  REQUIRE_MESSAGE(answer.ok(), answer.status().ToString());
  CHECK(answer->dry_run());
  CHECK(answer->tempids().count("neg") == 1);

  auto first_long = [&](const v1::QueryRequest& request)
      -> absl::StatusOr<std::vector<int64_t>> {
    std::vector<int64_t> values;
    absl::Status s = client->Query(request, [&](const v1::QueryResponse& m) {
      for (const v1::Row& row : m.rows()) {
        values.push_back(row.values(0).long_value());
      }
      return true;
    });
    if (!s.ok()) return s;
    return values;
  };
  v1::QueryRequest query;
  query.set_query("[:find ?e :where [?e :n/v -1]]");
  absl::StatusOr<std::vector<int64_t>> found = first_long(query);
  REQUIRE(found.ok());
  CHECK(found->empty());  // the dry run committed nothing
  query.add_with_tx_data(tx_data);
  found = first_long(query);
  REQUIRE_MESSAGE(found.ok(), found.status().ToString());
  // The entity the dry run named: both apply to the same latest value.
  CHECK(*found == std::vector<int64_t>{answer->tempids().at("neg")});

  v1::PullRequest pull;
  pull.set_pattern("[:n/v]");
  pull.mutable_entity()->set_id(answer->tempids().at("neg"));
  pull.add_with_tx_data(tx_data);
  absl::StatusOr<v1::PullResponse> pulled = client->Pull(pull);
  REQUIRE_MESSAGE(pulled.ok(), pulled.status().ToString());
  CHECK(pulled->result().DebugString().find("-1") != std::string::npos);

  query.set_with_tx_data(0, "[[:db/add \"x\" :n/nope 1]]");
  found = first_long(query);
  CHECK(found.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(found.status().message().find("with_tx_data[0]") != std::string::npos);
}

TEST_CASE("client: TxRange and Subscribe hand over split transactions whole") {
  Client* client = Shared().client.get();
  v1::TransactRequest schema;
  schema.set_tx_data(
      "[{:db/ident :big/a :db/valueType :db.type/string "
      ":db/cardinality :db.cardinality/one}"
      " {:db/ident :big/b :db/valueType :db.type/string "
      ":db/cardinality :db.cardinality/one}"
      " {:db/ident :big/c :db/valueType :db.type/string "
      ":db/cardinality :db.cardinality/one}]");
  REQUIRE(client->Transact(schema).ok());
  // Three values of 1 MiB: the server sends this transaction in parts
  // (its messages hold about 1 MiB).
  const std::string a(1 << 20, 'a'), b(1 << 20, 'b'), c(1 << 20, 'c');
  v1::TransactRequest big;
  big.set_tx_data("[{:big/a \"" + a + "\" :big/b \"" + b + "\" :big/c \"" + c +
                  "\"}]");
  absl::StatusOr<v1::TransactResponse> committed = client->Transact(big);
  REQUIRE_MESSAGE(committed.ok(), std::string(committed.status().message()));
  const int64_t tx = committed->tx();

  auto check_whole = [&](const v1::Transaction& t) {
    CHECK_FALSE(t.continued());
    CHECK(t.datoms_size() == 4);  // three values and the instant
    std::string values;
    for (const v1::Datom& d : t.datoms()) {
      if (d.v().has_string_value()) values += d.v().string_value().substr(0, 1);
    }
    CHECK(values == "abc");
  };
  v1::TxRangeRequest range;
  range.set_from_tx(tx);
  int seen = 0;
  absl::Status s = client->TxRange(range, [&](const v1::TxRangeResponse& m) {
    for (const v1::Transaction& t : m.transactions()) {
      CHECK(t.tx() == tx);
      check_whole(t);
      ++seen;
    }
    return true;
  });
  REQUIRE_MESSAGE(s.ok(), std::string(s.message()));
  CHECK(seen == 1);

  v1::SubscribeRequest subscribe;
  subscribe.set_from_tx(tx);
  seen = 0;
  s = client->Subscribe(subscribe, [&](const v1::SubscribeResponse& m) {
    for (const v1::Transaction& t : m.transactions()) {
      CHECK(t.tx() == tx);
      check_whole(t);
      ++seen;
    }
    return seen == 0;  // stop once it came
  });
  REQUIRE_MESSAGE(s.ok(), std::string(s.message()));
  CHECK(seen == 1);
}

TEST_CASE(
    "client: over several addresses, reads pass a node that is down and "
    "writes follow the primary a replica names") {
  TestServer primary;
  Shared();  // (keeps the shared server's start out of this case's time)
  TestServer replica({"--replica-of", primary.address()});
  const std::string nowhere = "127.0.0.1:" + std::to_string(FreePort());
  ClientOptions options;
  options.address = replica.address() + ", " + nowhere;
  absl::StatusOr<std::unique_ptr<Client>> connected = Client::Connect(options);
  REQUIRE(connected.ok());
  Client& client = **connected;
  CHECK(client.addresses() ==
        std::vector<std::string>{replica.address(), nowhere});
  REQUIRE(client.WaitForConnected(std::chrono::seconds(20)).ok());

  // The replica refuses the write naming the primary: the client sends
  // it there, and later writes go there at once.
  v1::TransactRequest schema;
  schema.set_tx_data(
      "[{:db/ident :c/v :db/valueType :db.type/long "
      ":db/cardinality :db.cardinality/one}]");
  absl::StatusOr<v1::TransactResponse> written;
  for (int i = 0; i < 200; ++i) {  // the primary may still be starting
    written = client.Transact(schema);
    if (written.ok()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  REQUIRE_MESSAGE(written.ok(), std::string(written.status().message()));
  CHECK(client.primary() == primary.address());
  CHECK(client.addresses().size() == 3);
  v1::TransactRequest value;
  value.set_tx_data("[{:c/v 7}]");
  written = client.Transact(value);
  REQUIRE_MESSAGE(written.ok(), std::string(written.status().message()));

  // The replica may still be bootstrapping the database (it started
  // before the primary served): wait until it has it.
  for (int i = 0; i < 400; ++i) {
    v1::StatsRequest stats;
    stats.set_min_basis_tx(written->tx());
    absl::StatusOr<v1::StatsResponse> r = client.StatsAt(
        replica.address(), stats, CallOptions{std::chrono::seconds(20)});
    if (r.ok()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  // Reads go round the nodes; the one that is down passes them on, and
  // the replica answers once it has the write.
  for (int i = 0; i < 6; ++i) {
    v1::QueryRequest query;
    query.set_query("[:find ?v :where [_ :c/v ?v]]");
    query.set_min_basis_tx(written->tx());
    std::string got;
    absl::Status s = client.Query(
        query,
        [&](const v1::QueryResponse& m) {
          for (const auto& row : m.rows()) {
            got = std::to_string(row.values(0).long_value());
          }
          return true;
        },
        CallOptions{std::chrono::seconds(20)});
    REQUIRE_MESSAGE(s.ok(), std::string(s.message()));
    CHECK(got == "7");
    v1::StatsRequest stats;
    stats.set_min_basis_tx(written->tx());
    CHECK(client.Stats(stats, CallOptions{std::chrono::seconds(20)}).ok());
  }
}

}  // namespace
}  // namespace mentat::client

#endif  // MENTATD_BINARY
