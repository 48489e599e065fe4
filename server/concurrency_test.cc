#include <doctest/doctest.h>

#include <atomic>
#include <set>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "test_support.h"

namespace mentat::server::testing {
namespace {

// Every transaction of the writer adds exactly this many people.
constexpr int kPerTx = 50;

TEST_CASE("server: concurrent readers never see part of a transaction") {
  TestServer t;
  Transact(t, kPeopleSchema);
  std::atomic<bool> stop{false};
  std::atomic<int> written{0};
  std::thread writer([&] {
    for (int i = 0; i < 40; ++i) {
      Transact(t, People(i * kPerTx, kPerTx));
      written.fetch_add(1);
    }
    stop = true;
  });
  std::atomic<int> reads{0}, torn{0}, failed{0};
  auto reader = [&](int kind) {
    auto stub = pb::Mentat::NewStub(t.channel());
    while (!stop.load()) {
      size_t n = 0;
      if (kind == 0) {
        pb::QueryRequest req;
        req.set_query("[:find (count ?e) . :where [?e :person/age _]]");
        QueryOutcome q = RunQuery(*stub, req);
        if (!q.status.ok()) {
          failed++;
          continue;
        }
        n = q.rows.empty() ? 0 : q.rows[0].values(0).long_value();
      } else if (kind == 1) {
        pb::QueryRequest req;
        req.set_query("[:find ?e ?n :where [?e :person/name ?n]]");
        req.set_batch_rows(97);
        QueryOutcome q = RunQuery(*stub, req);
        if (!q.status.ok()) {
          failed++;
          continue;
        }
        n = q.rows.size();
      } else {
        pb::DatomsRequest req;
        req.set_index(pb::AEVT);
        req.add_components()->set_keyword("person/age");
        req.set_batch_size(64);
        grpc::ClientContext ctx;
        auto r = stub->Datoms(&ctx, req);
        pb::DatomsResponse msg;
        while (r->Read(&msg)) n += msg.datoms_size();
        if (!r->Finish().ok()) {
          failed++;
          continue;
        }
      }
      reads++;
      if (n % kPerTx != 0) torn++;
    }
  };
  std::vector<std::thread> readers;
  for (int i = 0; i < 6; ++i) readers.emplace_back(reader, i % 3);
  writer.join();
  for (auto& r : readers) r.join();
  CHECK(written.load() == 40);
  CHECK(reads.load() > 0);
  CHECK(torn.load() == 0);
  CHECK(failed.load() == 0);
  MESSAGE("reads during the writes: ", reads.load());
}

TEST_CASE("server: shutdown while a load runs answers every call") {
  TestServer t([](ServerConfig* c) { c->shutdown_grace_ms = 3000; });
  Transact(t, kPeopleSchema);
  Transact(t, People(0, 2000));
  std::atomic<bool> stop{false};
  absl::Mutex mu;
  std::set<int64_t> acknowledged;
  std::atomic<int> calls{0};
  std::atomic<int> unexpected{0};
  auto ok_or_closing = [&](const grpc::Status& s) {
    if (s.ok()) return;
    switch (s.error_code()) {
      case grpc::StatusCode::UNAVAILABLE:
      case grpc::StatusCode::CANCELLED:
        return;
      default:
        unexpected++;
        MESSAGE("unexpected: ", StatusText(s));
    }
  };
  std::vector<std::thread> threads;
  auto channel = t.channel();
  for (int w = 0; w < 3; ++w) {
    threads.emplace_back([&, w] {
      auto stub = pb::Mentat::NewStub(channel);
      for (int i = 0; !stop.load(); ++i) {
        pb::TransactRequest req;
        req.set_tx_data(People(100000 + w * 100000 + i, 1));
        pb::TransactResponse resp;
        auto ctx = Ctx(10000);
        grpc::Status s = stub->Transact(ctx.get(), req, &resp);
        calls++;
        if (s.ok()) {
          absl::MutexLock lock(&mu);
          acknowledged.insert(resp.tx());
        } else {
          ok_or_closing(s);
          if (s.error_code() == grpc::StatusCode::UNAVAILABLE) return;
        }
      }
    });
  }
  for (int r = 0; r < 3; ++r) {
    threads.emplace_back([&] {
      auto stub = pb::Mentat::NewStub(channel);
      while (!stop.load()) {
        pb::QueryRequest req;
        req.set_query("[:find ?e ?n :where [?e :person/name ?n]]");
        QueryOutcome q = RunQuery(*stub, req, 10000);
        calls++;
        ok_or_closing(q.status);
        if (q.status.error_code() == grpc::StatusCode::UNAVAILABLE) return;
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const auto begin = std::chrono::steady_clock::now();
  t.server().Shutdown();
  const auto took = std::chrono::steady_clock::now() - begin;
  stop = true;
  for (auto& th : threads) th.join();
  CHECK(took < std::chrono::seconds(5));
  CHECK(calls.load() > 0);
  CHECK(unexpected.load() == 0);

  // Every acknowledged transaction is there after a restart.
  t.Restart();
  pb::TxRangeRequest range;
  auto ctx = Ctx();
  auto reader = t.stub().TxRange(ctx.get(), range);
  pb::TxRangeResponse msg;
  std::set<int64_t> logged;
  while (reader->Read(&msg)) {
    for (const auto& tx : msg.transactions()) logged.insert(tx.tx());
  }
  REQUIRE(reader->Finish().ok());
  for (int64_t tx : acknowledged) CHECK(logged.count(tx) == 1);
  MESSAGE("acknowledged before the shutdown: ", acknowledged.size());
}

TEST_CASE("server: a full transactor queue answers RESOURCE_EXHAUSTED") {
  TestServer t([](ServerConfig* c) {
    c->transactor_queue = 1;
    c->sync_commits = true;
  });
  Transact(t, kPeopleSchema);
  std::atomic<int> ok{0}, exhausted{0}, other{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < 16; ++w) {
    threads.emplace_back([&, w] {
      auto stub = pb::Mentat::NewStub(t.channel());
      for (int i = 0; i < 10; ++i) {
        pb::TransactRequest req;
        req.set_tx_data(People(w * 100 + i, 1));
        pb::TransactResponse resp;
        auto ctx = Ctx();
        grpc::Status s = stub->Transact(ctx.get(), req, &resp);
        if (s.ok()) {
          ok++;
        } else if (s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {
          exhausted++;
        } else {
          other++;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(other.load() == 0);
  CHECK(ok.load() > 0);
  CHECK(ok.load() + exhausted.load() == 160);
  MESSAGE("committed ", ok.load(), ", refused ", exhausted.load());
}

}  // namespace
}  // namespace mentat::server::testing
