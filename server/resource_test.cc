// Resources: a query over its memory budget, a flood of 10,000 concurrent
// streams, clients that never read their streams. Each is refused or slowed
// with the right status while other clients keep being served. (A full
// transactor queue: concurrency_test.cc.)

#include <doctest/doctest.h>

#include <fstream>
#include <functional>
#include <map>
#include <thread>

#include "test_support.h"

namespace mentat::server::testing {
namespace {

// Resident set size of this process (server and clients), in bytes.
int64_t RssBytes() {
  std::ifstream in("/proc/self/statm");
  int64_t pages = 0, resident = 0;
  in >> pages >> resident;
  return resident * 4096;
}

void LoadPeople(TestServer& t, int n) {
  Transact(t, kPeopleSchema);
  for (int i = 0; i < n; i += 1000)
    Transact(t, People(i, std::min(1000, n - i)));
}

// A small call that must answer while the server is under pressure.
grpc::Status SmallTransact(pb::Mentat::Stub& stub, int i) {
  pb::TransactRequest req;
  req.set_tx_data("[{:person/email \"probe-" + std::to_string(i) +
                  "@example.com\"}]");
  pb::TransactResponse resp;
  auto ctx = Ctx(10000);
  return stub.Transact(ctx.get(), req, &resp);
}

grpc::Status SmallQuery(pb::Mentat::Stub& stub) {
  pb::QueryRequest req;
  req.set_query(
      "[:find ?a . :where [?e :person/name \"person 7\"] [?e :person/age ?a]]");
  return RunQuery(stub, req, 10000).status;
}

TEST_CASE("server: a query over its memory budget, others are served") {
  TestServer t([](ServerConfig* c) { c->query_memory_bytes = 64 << 10; });
  LoadPeople(t, 3000);
  // The hash join's build side (3000 rows) is over 64 KiB.
  const std::string big =
      "[:find ?a ?b :where [?a :person/age ?x] [?b :person/age ?x]]";
  std::atomic<bool> stop{false};
  std::atomic<int> small_ok{0}, small_failed{0};
  std::thread other([&] {
    auto stub = OwnStub(t, 1);
    while (!stop.load()) {
      if (SmallQuery(*stub).ok() && SmallTransact(*stub, small_ok).ok()) {
        small_ok++;
      } else {
        small_failed++;
      }
    }
  });
  // Refused queries fail fast: keep sending them until the other client
  // has been served a few times meanwhile (on a loaded machine its first
  // fsync can outlast five refusals).
  for (int i = 0; i < 5 || (small_ok.load() < 3 && i < 2000); ++i) {
    QueryOutcome q = Query(t, big);
    CHECK(q.status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED);
    CHECK(q.status.error_message().find("memory") != std::string::npos);
    if (i == 0) MESSAGE("over the budget: ", StatusText(q.status));
  }
  stop = true;
  other.join();
  CHECK(small_ok.load() > 0);
  CHECK(small_failed.load() == 0);
  // The same query within its budget on another server runs.
  TestServer roomy;
  LoadPeople(roomy, 300);
  CHECK(Query(roomy, big).status.ok());
}

// One async Query call: started, read to the end, finished.
struct AsyncQuery {
  grpc::ClientContext ctx;
  pb::QueryResponse msg;
  grpc::Status status;
  std::unique_ptr<grpc::ClientAsyncReader<pb::QueryResponse>> reader;
  int64_t rows = 0;
  enum class Step { kStarting, kReading, kFinishing, kDone } step;
};

TEST_CASE("server: a flood of 10,000 concurrent streams") {
  TestServer t([](ServerConfig* c) { c->max_concurrent_queries = 64; });
  LoadPeople(t, 2000);
  // 100 ages of 20 people: 40,000 rows, many messages; unread, its
  // streams park and hold their slots.
  pb::QueryRequest req;
  req.set_query("[:find ?a ?b :where [?a :person/age ?x] [?b :person/age ?x]]");
  constexpr int kCalls = 10000;
  constexpr int kChannels = 8;
  std::vector<std::unique_ptr<pb::Mentat::Stub>> stubs;
  for (int c = 0; c < kChannels; ++c) stubs.push_back(OwnStub(t, 100 + c));
  grpc::CompletionQueue cq;
  std::vector<std::unique_ptr<AsyncQuery>> calls(kCalls);
  for (int i = 0; i < kCalls; ++i) {
    calls[i] = std::make_unique<AsyncQuery>();
    AsyncQuery& c = *calls[i];
    c.ctx.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::minutes(3));
    c.step = AsyncQuery::Step::kStarting;
    c.reader = stubs[i % kChannels]->PrepareAsyncQuery(&c.ctx, req, &cq);
    c.reader->StartCall(&c);
  }
  // While all of them wait, small calls are answered.
  auto probe = OwnStub(t, 1);
  for (int i = 0; i < 3; ++i) {
    grpc::Status s = SmallTransact(*probe, i);
    CHECK_MESSAGE(s.ok(), StatusText(s));
    s = SmallQuery(*probe);
    CHECK_MESSAGE(
        (s.ok() || s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED),
        StatusText(s));
  }
  // Now read every stream to its end.
  int done = 0;
  void* tag;
  bool ok;
  while (done < kCalls && cq.Next(&tag, &ok)) {
    AsyncQuery& c = *static_cast<AsyncQuery*>(tag);
    switch (c.step) {
      case AsyncQuery::Step::kStarting:
      case AsyncQuery::Step::kReading:
        if (c.step == AsyncQuery::Step::kReading && ok) {
          c.rows += c.msg.rows_size();
        }
        if (ok) {
          c.step = AsyncQuery::Step::kReading;
          c.reader->Read(&c.msg, &c);
        } else {
          c.step = AsyncQuery::Step::kFinishing;
          c.reader->Finish(&c.status, &c);
        }
        break;
      case AsyncQuery::Step::kFinishing:
        c.step = AsyncQuery::Step::kDone;
        done++;
        break;
      case AsyncQuery::Step::kDone:
        break;
    }
  }
  cq.Shutdown();
  while (cq.Next(&tag, &ok)) {
  }
  REQUIRE(done == kCalls);
  std::map<int, int> codes;
  int complete = 0;
  for (const auto& c : calls) {
    codes[c->status.error_code()]++;
    if (c->status.ok() && c->rows == 40000) complete++;
  }
  const int served = codes[grpc::StatusCode::OK];
  const int refused = codes[grpc::StatusCode::RESOURCE_EXHAUSTED];
  CHECK(served + refused == kCalls);
  CHECK(complete == served);
  CHECK(served >= 64);
  CHECK(refused > 0);
  MESSAGE(kCalls, " concurrent streams: ", served, " served whole, ", refused,
          " refused with RESOURCE_EXHAUSTED");
  // And the server is idle again (the count drops just after a stream's
  // status is sent).
  double running = -1;
  for (int i = 0; i < 100 && running != 0; ++i) {
    if (i > 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    running = MetricValue(HttpGet(t.server().http_port(), "/metrics"),
                          "mentat_running_queries");
  }
  CHECK(running == 0);
}

// What the unread streams may add to the RSS (server and clients: they
// share this process). Under TSan every byte the server touches brings
// shadow memory with it (about 4 bytes more per byte), so the bound scales
// with it.
#if defined(__SANITIZE_THREAD__)
constexpr int64_t kRssLimit = int64_t{96} << 22;
#else
constexpr int64_t kRssLimit = int64_t{96} << 20;
#endif

// Polls `metric` on the server's /metrics until `done` says yes or 60
// seconds pass; the last value.
double PollMetric(TestServer& t, const std::string& metric,
                  const std::function<bool(double)>& done) {
  const auto until =
      std::chrono::steady_clock::now() + std::chrono::seconds(60);
  double v = -1;
  while (std::chrono::steady_clock::now() < until) {
    v = MetricValue(HttpGet(t.server().http_port(), "/metrics"), metric);
    if (done(v)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return v;
}

TEST_CASE("server: clients that never read their stream") {
  // 4 reader threads. Before the pool counted parked threads, 4 unread
  // streams held every reader and other queries waited for them. Spare
  // threads exit after 200 ms without work.
  TestServer t([](ServerConfig* c) { c->reader_idle_ms = 200; });
  LoadPeople(t, 6000);
  // 360,000 rows each, asked for in messages of 100,000 rows: before
  // messages and the engine's batches were bounded in bytes, each parked
  // query held about 45 MB (a 100,000-row batch as EDN, the message being
  // built, and two serialized ones).
  pb::QueryRequest req;
  req.set_query("[:find ?a ?b :where [?a :person/age ?x] [?b :person/age ?x]]");
  req.set_batch_rows(100000);
  constexpr int kStalled = 12;  // more than the reader threads
  std::vector<std::unique_ptr<pb::Mentat::Stub>> stubs;
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
  std::vector<std::unique_ptr<grpc::ClientReader<pb::QueryResponse>>> readers;
  const int64_t rss_before = RssBytes();
  for (int i = 0; i < kStalled; ++i) {
    stubs.push_back(OwnStub(t, 10 + i));
    contexts.push_back(Ctx(120000));
    readers.push_back(stubs.back()->Query(contexts.back().get(), req));
  }
  // Every query parks (its thread counted out, a spare started for it).
  double threads = PollMetric(t, "mentat_reader_threads",
                              [](double v) { return v >= 4 + kStalled; });
  CHECK(threads == 4 + kStalled);
  // Others are served: writes, and reads.
  auto probe = OwnStub(t, 1);
  for (int i = 0; i < 3; ++i) {
    grpc::Status s = SmallTransact(*probe, i);
    CHECK_MESSAGE(s.ok(), StatusText(s));
    s = SmallQuery(*probe);
    CHECK_MESSAGE(s.ok(), StatusText(s));
  }
  const int64_t growth = RssBytes() - rss_before;
  MESSAGE(kStalled, " unread streams of 360,000 rows: RSS growth ",
          growth / (1 << 20), " MiB, ", threads, " reader threads");
  // 12 streams at 45 MB each would be over 500 MB.
  CHECK(growth < kRssLimit);
  for (auto& c : contexts) c->TryCancel();
  for (auto& r : readers) r->Finish().IgnoreError();
  // The spare threads exit once idle: the pool is back to its size.
  threads =
      PollMetric(t, "mentat_reader_threads", [](double v) { return v == 4; });
  CHECK(threads == 4);
}

}  // namespace
}  // namespace mentat::server::testing
