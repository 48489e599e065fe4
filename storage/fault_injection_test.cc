// I/O faults under the transactor: write errors, fsync errors and a full
// disk, injected by testing::FaultEnv into the files RocksDB writes.
//
// The contract (also in docs/bad-input.md): a transaction whose commit hits
// an I/O error fails with UNAVAILABLE and a message that names the error (a
// full disk: RESOURCE_EXHAUSTED, naming the store's directory); no
// transaction is acknowledged unless its commit (WAL write and fsync)
// succeeded; the store stays readable at its last published state; once the
// fault clears, the store recovers by itself where RocksDB can resume, and
// otherwise refuses writes with a message that says it is read-only until
// it is reopened, and a reopen recovers. A failed write leaves nothing of the
// transaction; a failed fsync leaves it unknown (the data reached the WAL,
// so it may be there whole after a reopen, as after a power loss it may not:
// clients retry with a request id). Never part of a transaction.
//
// A full disk is tried on every write path: the WAL (commits), memtable
// flushes, compactions, import ingestion and checkpoints. Each answers
// RESOURCE_EXHAUSTED naming the directory, reads go on, nothing committed
// is lost, and writes resume by themselves once the fault clears.

#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
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

StoreOptions WithEnv(FaultEnv* env, bool stream_before_sync = false) {
  StoreOptions o;
  o.env = env;
  o.sync_commits = true;
  o.stream_before_sync = stream_before_sync;
  o.block_cache_bytes = 8 << 20;
  return o;
}

// A full disk's answer: RESOURCE_EXHAUSTED naming the directory.
void CheckDiskFull(const absl::Status& s, const std::string& dir) {
  CHECK_MESSAGE(s.code() == absl::StatusCode::kResourceExhausted, s.ToString());
  CHECK_MESSAGE(s.message().find("no space left on the disk holding " + dir) !=
                    std::string::npos,
                s.ToString());
}

// Transacts TxN(++*n) until a commit succeeds: RocksDB resumes writes by
// itself once a fault clears (its recovery polls every few seconds), so
// this waits on the real state, within a generous deadline. Numbers
// refused meanwhile go to *failed.
[[nodiscard]] absl::StatusOr<TxReport> TransactUntilResumed(
    Store& s, int64_t* n, std::set<int64_t>* failed) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(90);
  for (;;) {
    auto r = s.Transact(TxN(++*n)).get();
    if (r.ok()) return r;
    failed->insert(*n);
    const bool paused =
        r.status().code() == absl::StatusCode::kResourceExhausted ||
        r.status().message().find("retry later") != std::string::npos;
    if (!paused || std::chrono::steady_clock::now() > deadline) return r;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

// After a reopen without faults: every acknowledged transaction is there
// whole, none of the refused ones, nothing in part.
void CheckAfterReopen(const std::string& dir, FaultEnv* env,
                      const std::map<int64_t, EntityId>& acknowledged,
                      const std::set<int64_t>& failed) {
  auto store = Store::Open(dir, WithEnv(env));
  REQUIRE_MESSAGE(store.ok(), store.status().ToString());
  Present p = Inspect(**store);
  CHECK(p.partial == 0);
  // Not a structured binding: doctest's message captures `k` in a lambda,
  // which clang 14 (tools/thread_safety_check.sh) does not allow.
  for (const auto& entry : acknowledged) {
    const int64_t k = entry.first;
    auto it = p.tx_of.find(k);
    CHECK_MESSAGE((it != p.tx_of.end() && it->second == entry.second), "lost ",
                  k);
  }
  for (int64_t k : failed) CHECK_MESSAGE(!p.tx_of.contains(k), "present ", k);
  CHECK(p.basis == p.max_tx);
}

struct Scenario {
  const char* name;
  Fault fault;
  const char* only_suffix;
  // The failed transactions may be there after a reopen (fsync failed
  // after the data reached the WAL).
  bool failed_may_survive;
  // StoreOptions::stream_before_sync: the group is written, then fsynced.
  bool stream_before_sync = false;
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
      // The failed group is in RocksDB's memtable: no later commit may
      // run (its snapshot would show it) until the store reopens.
      {"WAL fsync error, written before the fsync", Fault::kSyncError, ".log",
       true, true},
      {"full disk, written before the fsync", Fault::kNoSpace, ".log", false,
       true},
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
      auto store =
          Store::Open(dir.path(), WithEnv(&env, sc.stream_before_sync));
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
        if (sc.fault == Fault::kNoSpace) {
          CheckDiskFull(r.status(), dir.path());
        } else {
          CHECK(r.status().code() == absl::StatusCode::kUnavailable);
        }
      }
      CHECK(env.injected() > 0);
      // Readable at the last published state.
      Present during = Inspect(s);
      CHECK(during.partial == 0);
      for (const auto& [k, tx] : acknowledged) {
        CHECK(during.tx_of.contains(k));
      }
      // Nothing refused is shown, whatever RocksDB holds.
      for (int64_t k : failed) CHECK(!during.tx_of.contains(k));
      CHECK(during.basis >= basis_before);

      env.Set(Fault::kNone);
      // RocksDB's recovery retries on its own (a full disk: its
      // SstFileManager polls every few seconds) and writes resume.
      auto after = TransactUntilResumed(s, &n, &failed);
      MESSAGE(name, " after the fault cleared: ", after.status().ToString());
      if (after.ok()) {
        acknowledged[n] = after->tx;
        CHECK(s.WriteHealth().ok());
      } else {
        CHECK(after.status().code() == absl::StatusCode::kUnavailable);
      }
      // A full disk always recovers by itself.
      if (sc.fault == Fault::kNoSpace) CHECK(after.ok());
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

TEST_CASE(
    "full disk: a failing flush stops writes, reads go on, writes resume") {
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
    for (int i = 0; i < 10; ++i) {
      auto r = s.Transact(TxN(++n)).get();
      REQUIRE(r.ok());
      acknowledged[n] = r->tx;
    }
    env.Set(Fault::kNoSpace, ".sst");
    absl::Status flushed = s.Flush();
    MESSAGE("flush: ", flushed.ToString());
    CheckDiskFull(flushed, dir.path());
    // RocksDB stopped writes: commits are refused, and say why.
    auto r = s.Transact(TxN(++n)).get();
    REQUIRE(!r.ok());
    failed.insert(n);
    MESSAGE("transact after the failed flush: ", r.status().ToString());
    CheckDiskFull(r.status(), dir.path());
    const absl::Status health = s.WriteHealth();
    MESSAGE("write health: ", health.ToString());
    CheckDiskFull(health, dir.path());
    CHECK(health.message().find("writes are stopped") != std::string::npos);
    // Reads go on, at the last commit.
    Present during = Inspect(s);
    CHECK(during.partial == 0);
    CHECK(during.tx_of.size() == acknowledged.size());

    env.Set(Fault::kNone);
    auto resumed = TransactUntilResumed(s, &n, &failed);
    REQUIRE_MESSAGE(resumed.ok(), resumed.status().ToString());
    acknowledged[n] = resumed->tx;
    CHECK(s.WriteHealth().ok());
    CHECK(s.Flush().ok());
  }
  CheckAfterReopen(dir.path(), &env, acknowledged, failed);
}

TEST_CASE("full disk: a disk that stays full; the info log does not abort") {
  // Every file is on the full disk, RocksDB's info log included. RocksDB's
  // own logger asserted on the line after one it failed to write: its
  // SstFileManager logs an error at each poll of the free space (every
  // 5 s), and mentatd aborted on the second.
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
    for (int i = 0; i < 10; ++i) {
      auto r = s.Transact(TxN(++n)).get();
      REQUIRE(r.ok());
      acknowledged[n] = r->tx;
    }
    env.Set(Fault::kNoSpace);
    CheckDiskFull(s.Flush(), dir.path());
    // Until RocksDB has polled the disk three times, writes are refused
    // and reads go on.
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(90);
    int refused = 0;
    while (env.full_disk_polls() < 3 &&
           std::chrono::steady_clock::now() < deadline) {
      auto r = s.Transact(TxN(++n)).get();
      REQUIRE(!r.ok());
      failed.insert(n);
      if (refused++ == 0) MESSAGE("refused: ", r.status().ToString());
      CheckDiskFull(r.status(), dir.path());
      Present during = Inspect(s);
      CHECK(during.partial == 0);
      CHECK(during.tx_of.size() == acknowledged.size());
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    CHECK(env.full_disk_polls() >= 3);
    CheckDiskFull(s.WriteHealth(), dir.path());

    env.Set(Fault::kNone);
    auto r = TransactUntilResumed(s, &n, &failed);
    REQUIRE_MESSAGE(r.ok(), r.status().ToString());
    acknowledged[n] = r->tx;
    CHECK(s.WriteHealth().ok());
  }
  CheckAfterReopen(dir.path(), &env, acknowledged, failed);
}

TEST_CASE(
    "full disk: WAL writes fail again right after writes resume; nothing "
    "aborts, nothing is lost") {
  // The disk is filled and freed by someone else: RocksDB's poll sees free
  // space, DB::Resume succeeds, and the next WAL write fails again. The
  // WAL's writer then holds an error, and RocksDB (built with assertions,
  // as Debian's is) aborted the process when the next commit appended to
  // it.
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
    for (int i = 0; i < 10; ++i) {
      auto r = s.Transact(TxN(++n)).get();
      REQUIRE(r.ok());
      acknowledged[n] = r->tx;
    }
    env.ReportFullDisk(false);
    env.Set(Fault::kNoSpace, ".log");
    std::set<std::string> failed_wals;
    // Every commit meets the fault; between them, RocksDB's own recovery
    // (which polls the free space, and sees some) resumes writes.
    for (int i = 0; i < 4; ++i) {
      if (i > 0) {
        const auto deadline =
            std::chrono::steady_clock::now() + std::chrono::seconds(90);
        while (!s.WriteHealth().ok() &&
               std::chrono::steady_clock::now() < deadline) {
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        MESSAGE("write health before commit ", i, ": ",
                s.WriteHealth().ToString());
      }
      auto r = s.Transact(TxN(++n)).get();
      if (r.ok()) {
        acknowledged[n] = r->tx;
        FAIL("acknowledged while every WAL write fails: ", n);
        continue;
      }
      failed.insert(n);
      MESSAGE("refused: ", r.status().ToString());
      // Each failure is on a new WAL file: recovery switched it.
      CheckDiskFull(r.status(), dir.path());
      const std::string message(r.status().message());
      const size_t log = message.find(".log)");
      REQUIRE(log != std::string::npos);
      const std::string wal = message.substr(log - 6, 10);
      CHECK_MESSAGE(!failed_wals.contains(wal), "failed twice: ", wal);
      failed_wals.insert(wal);
      Present during = Inspect(s);
      CHECK(during.partial == 0);
      CHECK(during.tx_of.size() == acknowledged.size());
    }
    CHECK(env.injected() > 0);

    env.Set(Fault::kNone);
    env.ReportFullDisk(true);
    auto r = TransactUntilResumed(s, &n, &failed);
    REQUIRE_MESSAGE(r.ok(), r.status().ToString());
    acknowledged[n] = r->tx;
    CHECK(s.WriteHealth().ok());
    for (int i = 0; i < 5; ++i) {
      auto more = s.Transact(TxN(++n)).get();
      REQUIRE_MESSAGE(more.ok(), more.status().ToString());
      acknowledged[n] = more->tx;
    }
  }
  CheckAfterReopen(dir.path(), &env, acknowledged, failed);
}

TEST_CASE("full disk: a failing compaction; writes and reads go on") {
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
    // A few L0 files for the compaction to merge.
    for (int round = 0; round < 3; ++round) {
      for (int i = 0; i < 10; ++i) {
        auto r = s.Transact(TxN(++n)).get();
        REQUIRE(r.ok());
        acknowledged[n] = r->tx;
      }
      REQUIRE(s.Flush().ok());
    }
    env.Set(Fault::kNoSpace, ".sst");
    absl::Status compacted = s.CompactAll();
    MESSAGE("compaction: ", compacted.ToString());
    CheckDiskFull(compacted, dir.path());
    // A failed compaction does not stop writes (RocksDB retries it).
    MESSAGE("write health: ", s.WriteHealth().ToString());
    for (int i = 0; i < 3; ++i) {
      auto r = s.Transact(TxN(++n)).get();
      REQUIRE_MESSAGE(r.ok(), r.status().ToString());
      acknowledged[n] = r->tx;
    }
    Present during = Inspect(s);
    CHECK(during.partial == 0);
    CHECK(during.tx_of.size() == acknowledged.size());

    env.Set(Fault::kNone);
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(90);
    while (!(compacted = s.CompactAll()).ok() &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    CHECK_MESSAGE(compacted.ok(), compacted.ToString());
    auto r = TransactUntilResumed(s, &n, &failed);
    REQUIRE_MESSAGE(r.ok(), r.status().ToString());
    acknowledged[n] = r->tx;
  }
  CheckAfterReopen(dir.path(), &env, acknowledged, failed);
}

// Transactions as an import source.
class TxSource : public ImportSource {
 public:
  TxSource(int64_t first, int count) : next_(first), end_(first + count) {}
  [[nodiscard]] absl::StatusOr<bool> Next(TxRequest* request) override {
    if (next_ == end_) return false;
    *request = TxN(next_++);
    return true;
  }

 private:
  int64_t next_;
  int64_t end_;
};

TEST_CASE(
    "full disk: a failing import ingests nothing; reads and writes go on") {
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
    for (int i = 0; i < 5; ++i) {
      auto r = s.Transact(TxN(++n)).get();
      REQUIRE(r.ok());
      acknowledged[n] = r->tx;
    }
    // The import's sorted files go to the full disk.
    env.Set(Fault::kNoSpace, ".sst");
    TxSource refused(1000, 200);
    auto report = s.Import(&refused);
    REQUIRE(!report.ok());
    MESSAGE("import: ", report.status().ToString());
    CheckDiskFull(report.status(), dir.path());
    for (int64_t k = 1000; k < 1200; ++k) failed.insert(k);
    Present during = Inspect(s);
    CHECK(during.partial == 0);
    CHECK(during.tx_of.size() == acknowledged.size());
    // Nothing of the store itself failed: commits go on at once.
    auto r = s.Transact(TxN(++n)).get();
    REQUIRE_MESSAGE(r.ok(), r.status().ToString());
    acknowledged[n] = r->tx;

    env.Set(Fault::kNone);
    TxSource source(2000, 200);
    report = s.Import(&source);
    REQUIRE_MESSAGE(report.ok(), report.status().ToString());
    CHECK(report->transactions == 200);
    Present after = Inspect(s);
    CHECK(after.partial == 0);
    for (int64_t k = 2000; k < 2200; ++k) {
      REQUIRE(after.tx_of.contains(k));
      acknowledged[k] = after.tx_of[k];
    }
  }
  CheckAfterReopen(dir.path(), &env, acknowledged, failed);
}

TEST_CASE("full disk: a checkpoint to a full disk leaves nothing behind") {
  TempDir dir;
  TempDir backups;
  std::filesystem::create_directories(backups.path());
  FaultEnv env;
  std::map<int64_t, EntityId> acknowledged;
  std::set<int64_t> failed;
  int64_t n = 0;
  const std::string copy = backups.path() + "/copy";
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
    REQUIRE(s.Flush().ok());
    // Only the backup's disk is full.
    env.Set(Fault::kNoSpace, "", backups.path());
    auto checkpoint = s.Checkpoint(copy);
    REQUIRE(!checkpoint.ok());
    MESSAGE("checkpoint: ", checkpoint.status().ToString());
    CheckDiskFull(checkpoint.status(), backups.path());
    CHECK(env.injected() > 0);
    CHECK(!std::filesystem::exists(copy));
    CHECK(!std::filesystem::exists(copy + ".tmp"));
    // The store itself goes on.
    CHECK(s.WriteHealth().ok());
    auto r = s.Transact(TxN(++n)).get();
    REQUIRE_MESSAGE(r.ok(), r.status().ToString());
    acknowledged[n] = r->tx;

    env.Set(Fault::kNone);
    checkpoint = s.Checkpoint(copy);
    REQUIRE_MESSAGE(checkpoint.ok(), checkpoint.status().ToString());
    CHECK(checkpoint->basis_tx == r->tx);
  }
  CheckAfterReopen(dir.path(), &env, acknowledged, failed);
  CheckAfterReopen(copy, &env, acknowledged, failed);
}

}  // namespace
}  // namespace mentat::storage
