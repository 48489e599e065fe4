// I/O faults under the transactor: write errors, fsync errors and a full
// disk, injected by testing::FaultEnv into the files RocksDB writes.
//
// The contract (also in docs/bad-input.md): a transaction whose commit hits
// an I/O error fails with UNAVAILABLE and a message that names the error; no
// transaction is acknowledged unless its commit (WAL write and fsync)
// succeeded; the store stays readable at its last published state; once the
// fault clears, the store recovers by itself where RocksDB can resume, and
// otherwise refuses writes with a message that says it is read-only until
// it is reopened, and a reopen recovers. A failed write leaves nothing of the
// transaction; a failed fsync leaves it unknown (the data reached the WAL,
// so it may be there whole after a reopen, as after a power loss it may not:
// clients retry with a request id). Never part of a transaction.

#include <doctest/doctest.h>

#include <map>
#include <set>
#include <string>
#include <thread>

#include "mentat/storage/store.h"
#include "test_support.h"
#include "testing/fault_env.h"

namespace mentat::storage {
namespace {

using testing::Add;
using testing::AddRef;
using testing::Attr;
using testing::E;
using testing::Fault;
using testing::FaultEnv;
using testing::TempDir;
using testing::Tx;

std::vector<TxOp> FaultSchema() {
  std::vector<TxOp> ops;
  for (auto part :
       {Attr("f/seq", "db.type/long", false, "db.unique/identity"),
        Attr("f/twin", "db.type/long"), Attr("f/echo", "db.type/long"),
        Attr("f/of", "db.type/ref")}) {
    ops.insert(ops.end(), part.begin(), part.end());
  }
  return ops;
}

// Transaction n: two entities, four datoms, all naming n.
TxRequest TxN(int64_t n) {
  return Tx({Add(E("a"), "f/seq", Value::Long(n)),
             Add(E("a"), "f/twin", Value::Long(n)),
             Add(E("b"), "f/echo", Value::Long(n)),
             AddRef(E("b"), "f/of", E("a"))});
}

// Number n -> tx of its f/seq datom, and the count of transactions present
// in part.
struct Present {
  std::map<int64_t, EntityId> tx_of;
  int partial = 0;
  EntityId basis = 0;
  EntityId max_tx = 0;
};

Present Inspect(const Store& store) {
  Present p;
  auto db = store.Latest();
  p.basis = db->basis_tx();
  DbView view = db->View(Basis::Current());
  const Schema& schema = db->schema();
  const Attribute* seq = schema.FindAttribute("f/seq");
  const Attribute* twin = schema.FindAttribute("f/twin");
  const Attribute* echo = schema.FindAttribute("f/echo");
  const Attribute* of = schema.FindAttribute("f/of");
  REQUIRE(seq != nullptr);
  REQUIRE(twin != nullptr);
  REQUIRE(echo != nullptr);
  REQUIRE(of != nullptr);
  auto all = [&](const Attribute* a) {
    std::string prefix;
    AevtKey::EncodePrefix(a->id, &prefix);
    auto datoms = view.Datoms(IndexOrder::kAevt, prefix);
    REQUIRE(datoms.ok());
    return *datoms;
  };
  std::map<EntityId, Datom> twins, echoes_by_e, ofs;
  std::map<int64_t, Datom> echoes;
  for (const Datom& d : all(twin)) twins[d.e] = d;
  for (const Datom& d : all(echo)) {
    if (echoes.contains(d.v.as_long())) p.partial++;
    echoes[d.v.as_long()] = d;
  }
  for (const Datom& d : all(of)) ofs[d.e] = d;
  const auto seqs = all(seq);
  if (twins.size() != seqs.size() || echoes.size() != seqs.size() ||
      ofs.size() != seqs.size()) {
    p.partial++;
  }
  for (const Datom& d : seqs) {
    const int64_t n = d.v.as_long();
    p.tx_of[n] = d.tx;
    p.max_tx = std::max(p.max_tx, d.tx);
    auto t = twins.find(d.e);
    auto x = echoes.find(n);
    if (t == twins.end() || t->second.v.as_long() != n ||
        t->second.tx != d.tx || x == echoes.end() || x->second.tx != d.tx ||
        !ofs.contains(x->second.e) || ofs[x->second.e].v.as_ref() != d.e) {
      p.partial++;
    }
  }
  return p;
}

StoreOptions WithEnv(FaultEnv* env) {
  StoreOptions o;
  o.env = env;
  o.sync_commits = true;
  o.block_cache_bytes = 8 << 20;
  return o;
}

struct Scenario {
  const char* name;
  Fault fault;
  const char* only_suffix;
  // The failed transactions may be there after a reopen (fsync failed
  // after the data reached the WAL).
  bool failed_may_survive;
};

TEST_CASE(
    "I/O faults: commits fail clearly, nothing unacknowledged, "
    "recovery") {
  const Scenario scenarios[] = {
      {"WAL write error", Fault::kWriteError, ".log", false},
      {"WAL fsync error", Fault::kSyncError, ".log", true},
      {"full disk (torn WAL write)", Fault::kNoSpace, ".log", false},
      {"every file: write error", Fault::kWriteError, "", false},
      {"every file and directory: fsync error", Fault::kSyncError, "", true},
      {"every file: full disk", Fault::kNoSpace, "", false},
  };
  for (const Scenario& sc : scenarios) {
    const std::string name = sc.name;
    CAPTURE(name);
    TempDir dir;
    FaultEnv env;
    std::map<int64_t, EntityId> acknowledged;
    std::set<int64_t> failed;
    int64_t n = 0;
    {
      auto store = Store::Open(dir.path(), WithEnv(&env));
      REQUIRE_MESSAGE(store.ok(), store.status().ToString());
      Store& s = **store;
      REQUIRE(s.Transact(Tx(FaultSchema())).get().ok());
      for (int i = 0; i < 20; ++i) {
        auto r = s.Transact(TxN(++n)).get();
        REQUIRE_MESSAGE(r.ok(), r.status().ToString());
        acknowledged[n] = r->tx;
      }
      const EntityId basis_before = s.Latest()->basis_tx();

      env.Set(sc.fault, sc.only_suffix);
      for (int i = 0; i < 5; ++i) {
        auto r = s.Transact(TxN(++n)).get();
        if (r.ok()) {
          acknowledged[n] = r->tx;
          MESSAGE("acknowledged during the fault: ", n);
          continue;
        }
        failed.insert(n);
        MESSAGE(name, " #", i, ": ", r.status().ToString());
        CHECK(r.status().code() == absl::StatusCode::kUnavailable);
      }
      CHECK(env.injected() > 0);
      // Readable at the last published state.
      Present during = Inspect(s);
      CHECK(during.partial == 0);
      for (const auto& [k, tx] : acknowledged) {
        CHECK(during.tx_of.contains(k));
      }
      CHECK(during.basis >= basis_before);

      env.Set(Fault::kNone);
      auto after = s.Transact(TxN(++n)).get();
      // A full disk: RocksDB's recovery retries on its own (every few
      // seconds) and writes resume.
      for (int i = 0;
           i < 100 && !after.ok() &&
           after.status().message().find("retry later") != std::string::npos;
           ++i) {
        failed.insert(n);
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        after = s.Transact(TxN(++n)).get();
      }
      MESSAGE(name, " after the fault cleared: ", after.status().ToString());
      if (after.ok()) {
        acknowledged[n] = after->tx;
      } else {
        failed.insert(n);
        CHECK(after.status().code() == absl::StatusCode::kUnavailable);
      }
    }
    // Reopen without faults.
    auto store = Store::Open(dir.path(), WithEnv(&env));
    REQUIRE_MESSAGE(store.ok(), store.status().ToString());
    Present p = Inspect(**store);
    CHECK(p.partial == 0);
    int lost = 0, failed_present = 0;
    for (const auto& [k, tx] : acknowledged) {
      auto it = p.tx_of.find(k);
      if (it == p.tx_of.end() || it->second != tx) lost++;
    }
    for (int64_t k : failed) failed_present += p.tx_of.contains(k) ? 1 : 0;
    CHECK(lost == 0);
    if (!sc.failed_may_survive) CHECK(failed_present == 0);
    CHECK(p.basis == p.max_tx);
    MESSAGE(name, ": ", acknowledged.size(), " acknowledged, ", failed.size(),
            " failed, ", failed_present,
            " failed ones present after the reopen");
    // And it takes writes again.
    auto r = (*store)->Transact(TxN(++n)).get();
    CHECK_MESSAGE(r.ok(), r.status().ToString());
  }
}

TEST_CASE("I/O faults: a failing flush stops writes clearly, reads go on") {
  TempDir dir;
  FaultEnv env;
  std::map<int64_t, EntityId> acknowledged;
  int64_t n = 0;
  {
    auto store = Store::Open(dir.path(), WithEnv(&env));
    REQUIRE_MESSAGE(store.ok(), store.status().ToString());
    Store& s = **store;
    REQUIRE(s.Transact(Tx(FaultSchema())).get().ok());
    for (int i = 0; i < 10; ++i) {
      auto r = s.Transact(TxN(++n)).get();
      REQUIRE(r.ok());
      acknowledged[n] = r->tx;
    }
    env.Set(Fault::kWriteError, ".sst");
    absl::Status flushed = s.Flush();
    MESSAGE("flush: ", flushed.ToString());
    CHECK(!flushed.ok());
    int refused = 0;
    for (int i = 0; i < 5; ++i) {
      auto r = s.Transact(TxN(++n)).get();
      if (r.ok()) {
        acknowledged[n] = r->tx;
      } else {
        refused++;
        MESSAGE("transact after the failed flush: ", r.status().ToString());
        CHECK(r.status().code() == absl::StatusCode::kUnavailable);
        CHECK(r.status().message().find("injected write error") !=
              std::string::npos);
      }
    }
    CHECK(refused > 0);
    Present during = Inspect(s);
    CHECK(during.partial == 0);
    CHECK(during.tx_of.size() == acknowledged.size());
    env.Set(Fault::kNone);
  }
  auto store = Store::Open(dir.path(), WithEnv(&env));
  REQUIRE_MESSAGE(store.ok(), store.status().ToString());
  Present p = Inspect(**store);
  CHECK(p.partial == 0);
  for (const auto& [k, tx] : acknowledged) CHECK(p.tx_of[k] == tx);
  CHECK((*store)->Transact(TxN(++n)).get().ok());
}

}  // namespace
}  // namespace mentat::storage
