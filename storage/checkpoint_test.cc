// Store::Checkpoint: an online backup holds exactly the transactions up to
// the basis it reports, while writers keep committing.

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "mentat/storage/store.h"
#include "mentat/storage/tx_log.h"
#include "test_support.h"

namespace mentat::storage {
namespace {

using testing::Add;
using testing::Attr;
using testing::E;
using testing::TempDir;
using testing::Tx;

// tx id -> the datoms of that transaction, for every tx in the log.
std::map<EntityId, std::vector<Datom>> Log(const Db& db) {
  std::map<EntityId, std::vector<Datom>> out;
  absl::Status s =
      ReadTxLog(db, 0, 0, [&](EntityId tx, const std::vector<Datom>& datoms) {
        out[tx] = datoms;
        return true;
      });
  REQUIRE(s.ok());
  return out;
}

// Every value of :c/n in the current EAVT index.
std::vector<int64_t> CurrentNs(const Db& db) {
  std::vector<int64_t> out;
  DbView view = db.View(Basis{});
  const Attribute* a = view.schema().FindAttribute("c/n");
  REQUIRE(a != nullptr);
  std::string prefix;
  AevtKey::EncodePrefix(a->id, &prefix);
  auto datoms = view.Datoms(IndexOrder::kAevt, prefix);
  REQUIRE(datoms.ok());
  for (const Datom& d : *datoms) out.push_back(d.v.as_long());
  std::sort(out.begin(), out.end());
  return out;
}

TEST_CASE("checkpoint: writes continue; the copy holds exactly its basis") {
  TempDir dir;
  TempDir backups;
  std::filesystem::create_directories(backups.path());
  auto store = Store::Open(dir.path());
  REQUIRE(store.ok());
  REQUIRE((*store)->Transact(Tx(Attr("c/n", "db.type/long"))).get().ok());

  // Four writers commit single-datom transactions (each with its own n)
  // until the checkpoints are done.
  std::atomic<bool> stop{false};
  std::atomic<int64_t> next{0};
  std::atomic<int> failures{0};
  absl::Mutex mu;
  std::map<EntityId, int64_t> committed;  // tx -> n, guarded by mu
  std::vector<std::thread> writers;
  for (int w = 0; w < 4; ++w) {
    writers.emplace_back([&] {
      while (!stop.load()) {
        const int64_t n = next++;
        auto r =
            (*store)->Transact(Tx({Add(E("x"), "c/n", Value::Long(n))})).get();
        if (!r.ok()) {
          ++failures;
          continue;
        }
        absl::MutexLock lock(&mu);
        committed[r->tx] = n;
      }
    });
  }
  std::vector<std::pair<std::string, CheckpointReport>> taken;
  for (int i = 0; i < 3; ++i) {
    while (next.load() < 200 * (i + 1)) std::this_thread::yield();
    const std::string path = backups.path() + "/b" + std::to_string(i);
    auto report = (*store)->Checkpoint(path);
    REQUIRE_MESSAGE(report.ok(), report.status().ToString());
    CHECK(report->files > 0);
    CHECK(report->bytes > 0);
    taken.emplace_back(path, *report);
  }
  stop = true;
  for (auto& t : writers) t.join();
  REQUIRE(failures.load() == 0);
  // Writers went on between and after the checkpoints.
  CHECK(taken[0].second.basis_tx < taken[2].second.basis_tx);
  CHECK((*store)->Latest()->basis_tx() > taken[2].second.basis_tx);

  const auto source_log = Log(*(*store)->Latest());
  // (Not a structured binding: clang 14, which checks thread safety,
  // cannot capture one in doctest's lambdas.)
  for (const auto& checkpoint : taken) {
    const std::string& path = checkpoint.first;
    const auto& report = checkpoint.second;
    CAPTURE(path);
    StoreOptions existing;
    existing.create_if_missing = false;
    auto copy = Store::Open(path, existing);
    REQUIRE_MESSAGE(copy.ok(), copy.status().ToString());
    auto db = (*copy)->Latest();
    CHECK(db->basis_tx() == report.basis_tx);
    // The log is the source's, cut at the basis.
    std::map<EntityId, std::vector<Datom>> expected_log;
    for (const auto& [tx, datoms] : source_log) {
      if (tx <= report.basis_tx) expected_log[tx] = datoms;
    }
    CHECK(Log(*db) == expected_log);
    // The current state holds exactly the values committed up to it.
    std::vector<int64_t> expected;
    for (const auto& [tx, n] : committed) {
      if (tx <= report.basis_tx) expected.push_back(n);
    }
    std::sort(expected.begin(), expected.end());
    CHECK(CurrentNs(*db) == expected);
    // A restored store is a working store.
    auto more =
        (*copy)->Transact(Tx({Add(E("y"), "c/n", Value::Long(-1))})).get();
    REQUIRE(more.ok());
    CHECK(more->tx > report.basis_tx);
  }
}

TEST_CASE("checkpoint: refuses an existing or unreachable destination") {
  TempDir dir;
  TempDir backups;
  std::filesystem::create_directories(backups.path() + "/taken");
  auto store = Store::Open(dir.path());
  REQUIRE(store.ok());
  auto exists = (*store)->Checkpoint(backups.path() + "/taken");
  CHECK(exists.status().code() == absl::StatusCode::kAlreadyExists);
  CHECK(std::string(exists.status().message()).find("already exists") !=
        std::string::npos);
  auto orphan = (*store)->Checkpoint(backups.path() + "/no/such/parent");
  CHECK(orphan.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK_FALSE(std::filesystem::exists(backups.path() + "/no"));
  // An empty store checkpoints too: the bootstrap transaction.
  auto empty = (*store)->Checkpoint(backups.path() + "/empty");
  REQUIRE(empty.ok());
  CHECK(empty->basis_tx == (*store)->Latest()->basis_tx());
}

}  // namespace
}  // namespace mentat::storage
