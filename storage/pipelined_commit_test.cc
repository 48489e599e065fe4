// Pipelined commits (StoreOptions::pipeline_commits): the transactor
// writes a group and goes on to the next while the sync thread fsyncs the
// first. Nothing is shown or acknowledged before its fsync, groups are
// published and answered in order, a group reads the keys of the group
// written before it, and a failed fsync fails its group and every group
// written behind it. testing::FaultEnv holds the WAL's fsyncs at a gate,
// so that a group is written while another's fsync waits.

#include <doctest/doctest.h>

#include <chrono>
#include <future>
#include <string>
#include <vector>

#include "mentat/storage/store.h"
#include "test_support.h"
#include "testing/fault_env.h"

namespace mentat::storage {
namespace {

using testing::Add;
using testing::Attr;
using testing::E;
using testing::Fault;
using testing::FaultEnv;
using testing::TempDir;
using testing::Tx;

StoreOptions Options(FaultEnv* env) {
  StoreOptions o;
  o.env = env;
  o.sync_commits = true;
  o.pipeline_commits = true;
  o.block_cache_bytes = 8 << 20;
  // One transaction a group: each Transact below is a group of its own.
  o.max_group_transactions = 1;
  return o;
}

std::vector<TxOp> Schema() {
  std::vector<TxOp> ops =
      Attr("p/seq", "db.type/long", false, "db.unique/identity");
  for (const TxOp& op : Attr("p/note", "db.type/long")) ops.push_back(op);
  return ops;
}

// The entity "x" with p/seq `seq` (an upsert when it exists) and p/note
// `note`.
TxRequest Note(int64_t seq, int64_t note) {
  return Tx({Add(E("x"), "p/seq", Value::Long(seq)),
             Add(E("x"), "p/note", Value::Long(note))});
}

bool Ready(std::future<absl::StatusOr<TxReport>>& f) {
  return f.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

TEST_CASE("pipelined commits: a group written behind another's fsync") {
  TempDir dir;
  FaultEnv env;
  auto store = Store::Open(dir.path(), Options(&env));
  REQUIRE_MESSAGE(store.ok(), store.status().ToString());
  Store& s = **store;
  REQUIRE(s.Transact(Tx(Schema())).get().ok());
  REQUIRE(s.Transact(Note(1, 10)).get().ok());

  // The first group is synced on the transactor's thread (nothing is in
  // flight or queued); while its fsync waits, two more are queued. The
  // second is then handed to the sync thread, and the third, an upsert of
  // the second's entity, is applied and written while the second's fsync
  // waits.
  env.HoldLogSyncs();
  const int held = env.held_log_syncs();
  auto first = s.Transact(Note(2, 20));
  REQUIRE(env.AwaitHeldLogSyncs(held + 1));
  const int appends = env.log_appends();
  auto second = s.Transact(Note(3, 30));
  auto third = s.Transact(Note(3, 31));
  env.PassLogSyncs(1);
  auto r1 = first.get();
  REQUIRE_MESSAGE(r1.ok(), r1.status().ToString());
  REQUIRE(env.AwaitHeldLogSyncs(held + 2));
  // One append to the log per group: the second's and the third's.
  REQUIRE(env.AwaitLogAppends(appends + 2));

  // Neither is shown nor answered while the second's fsync waits.
  CHECK(s.Latest()->basis_tx() == r1->tx);
  CHECK(s.LatestWritten()->basis_tx() == r1->tx);
  CHECK_FALSE(Ready(second));
  CHECK_FALSE(Ready(third));

  SUBCASE("the fsync succeeds: both are published, in order") {
    env.ReleaseLogSyncs();
    auto r2 = second.get();
    auto r3 = third.get();
    REQUIRE_MESSAGE(r2.ok(), r2.status().ToString());
    REQUIRE_MESSAGE(r3.ok(), r3.status().ToString());
    // The third read the second's keys before they were synced.
    CHECK(r3->tempids.at("x") == r2->tempids.at("x"));
    CHECK(r3->basis_before == r2->tx);
    CHECK(s.Latest()->basis_tx() == r3->tx);
    auto r4 = s.Transact(Note(4, 40)).get();
    CHECK_MESSAGE(r4.ok(), r4.status().ToString());
  }

  SUBCASE("the fsync fails: both fail, writes stay off until a reopen") {
    env.Set(Fault::kSyncError, ".log");
    env.ReleaseLogSyncs();
    auto r2 = second.get();
    auto r3 = third.get();
    REQUIRE_FALSE(r2.ok());
    REQUIRE_FALSE(r3.ok());
    for (const absl::Status& st : {r2.status(), r3.status()}) {
      CHECK(st.code() == absl::StatusCode::kUnavailable);
      CHECK_MESSAGE(st.message().find("fsync") != std::string::npos,
                    st.ToString());
    }
    // Nothing of either is shown, whatever RocksDB holds.
    CHECK(s.Latest()->basis_tx() == r1->tx);
    CHECK(s.LatestWritten()->basis_tx() == r1->tx);

    // The fault cleared, writes still stay off: the failed groups are in
    // RocksDB's memtable.
    env.Set(Fault::kNone);
    auto r4 = s.Transact(Note(4, 40)).get();
    REQUIRE_FALSE(r4.ok());
    CHECK(r4.status().code() == absl::StatusCode::kUnavailable);
    CHECK_MESSAGE(r4.status().message().find("until the store reopens") !=
                      std::string::npos,
                  r4.status().ToString());
    CHECK(s.Latest()->basis_tx() == r1->tx);

    // A reopen takes writes again, with every acknowledged group.
    store->reset();
    auto reopened = Store::Open(dir.path(), Options(&env));
    REQUIRE_MESSAGE(reopened.ok(), reopened.status().ToString());
    CHECK((*reopened)->Latest()->basis_tx() >= r1->tx);
    auto r5 = (*reopened)->Transact(Note(2, 21)).get();
    REQUIRE_MESSAGE(r5.ok(), r5.status().ToString());
    CHECK(r5->tempids.at("x") == r1->tempids.at("x"));
  }
}

}  // namespace
}  // namespace mentat::storage
