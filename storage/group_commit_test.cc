// Group commit: many transactions in one group, each answered as if it
// had committed alone, and the statistics kept exact across the group.

#include <doctest/doctest.h>

#include <chrono>
#include <future>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "mentat/storage/entity_ids.h"
#include "mentat/storage/store.h"
#include "test_support.h"

namespace mentat::storage {
namespace {

using testing::Add;
using testing::Attr;
using testing::Concat;
using testing::E;
using testing::TempDir;
using testing::Tx;
using testing::ValuesOf;

using Result = std::future<absl::StatusOr<TxReport>>;

int64_t NowMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Holds the transactor inside the next group it takes (through
// StoreOptions::write_gate), so that what is queued meanwhile forms one
// group after it. Reusable: one hold at a time.
class GroupHold {
 public:
  void Install(StoreOptions* options) {
    options->write_gate = [this] {
      if (armed_.exchange(false)) {
        std::shared_ptr<Round> round = round_;
        round->entered.set_value();
        round->released.wait();
      }
      return absl::OkStatus();
    };
  }
  // Arms the hold, queues `first` and returns once the transactor holds it.
  Result Hold(Store& store, TxRequest first) {
    round_ = std::make_shared<Round>();
    armed_ = true;  // publishes round_ to the transactor thread
    Result r = store.Transact(std::move(first));
    round_->entered.get_future().wait();
    return r;
  }
  void Release() { round_->release.set_value(); }

 private:
  struct Round {
    std::promise<void> entered;
    std::promise<void> release;
    std::shared_future<void> released{release.get_future().share()};
  };
  std::atomic<bool> armed_{false};
  std::shared_ptr<Round> round_;
};

// Options with `hold` installed, whose statistics count distinct values
// from AVET past one value per attribute (the path under test) instead of
// counting each value.
StoreOptions HeldCountingOptions(GroupHold* hold) {
  StoreOptions options;
  options.low_cardinality_limit = 1;
  hold->Install(&options);
  return options;
}

// Distinct values of `attr` among current datoms, counted from AVET.
int64_t CountDistinct(const Store& store, EntityId attr) {
  DbView view = store.Latest()->View(Basis::Current());
  std::string prefix;
  AvetKey::EncodePrefix(attr, &prefix);
  std::set<Value> values;
  auto cursor = view.NewCursor(IndexOrder::kAvet);
  for (cursor->Seek(prefix); cursor->Valid(); cursor->Next()) {
    values.insert(cursor->datom().v);
  }
  REQUIRE(cursor->status().ok());
  return static_cast<int64_t>(values.size());
}

int64_t DistinctInStats(const Store& store, EntityId attr) {
  const AttributeStats* st = store.Latest()->stats().Find(attr);
  REQUIRE(st != nullptr);
  return st->distinct_values;
}

TEST_CASE(
    "a large group answers each transaction with its own tx, tempids "
    "and datoms, and a failing one fails alone") {
  TempDir dir;
  GroupHold hold;
  const StoreOptions options = HeldCountingOptions(&hold);
  auto store = *Store::Open(dir.path(), options);
  REQUIRE(store
              ->Transact(Tx(Concat({Attr("user/email", "db.type/string", false,
                                         "db.unique/identity"),
                                    Attr("issue/priority", "db.type/long")})))
              .get()
              .ok());
  const uint64_t groups_before = store->transactor_counters().groups;

  Result first = hold.Hold(
      *store, Tx({Add(E("x"), "user/email", Value::String("first"))}));
  constexpr int kQueued = 300;
  std::vector<Result> results;
  for (int i = 0; i < kQueued; ++i) {
    const std::string email = "u" + std::to_string(i);
    if (i % 10 == 3) {
      // A string where issue/priority takes a long.
      results.push_back(store->Transact(
          Tx({Add(E("x"), "user/email", Value::String(email + "-bad")),
              Add(E("x"), "issue/priority", Value::String("high"))})));
    } else {
      results.push_back(
          store->Transact(Tx({Add(E("x"), "user/email", Value::String(email)),
                              Add(E("y"), "issue/priority", Value::Long(i))})));
    }
  }
  hold.Release();
  REQUIRE(first.get().ok());

  std::set<EntityId> txs, entities;
  EntityId previous_tx = 0;
  int ok = 0;
  for (int i = 0; i < kQueued; ++i) {
    absl::StatusOr<TxReport> r = results[static_cast<size_t>(i)].get();
    if (i % 10 == 3) {
      CHECK(r.status().code() == absl::StatusCode::kInvalidArgument);
      continue;
    }
    REQUIRE_MESSAGE(r.ok(), r.status().ToString());
    ok++;
    // Transactions commit in the order they were queued, each on the one
    // before it.
    if (previous_tx != 0) CHECK(r->basis_before == previous_tx);
    previous_tx = r->tx;
    txs.insert(r->tx);
    const EntityId x = r->tempids.at("x"), y = r->tempids.at("y");
    entities.insert(x);
    entities.insert(y);
    // Its own datoms: the two it asserted and its :db/txInstant.
    REQUIRE(r->datoms.size() == 3);
    int own = 0;
    for (const Datom& d : r->datoms) {
      CHECK(d.tx == r->tx);
      if (d.e == x) {
        CHECK(d.v == Value::String("u" + std::to_string(i)));
        own++;
      }
      if (d.e == y) {
        CHECK(d.v == Value::Long(i));
        own++;
      }
    }
    CHECK(own == 2);
  }
  CHECK(ok == 270);
  CHECK(txs.size() == 270);
  CHECK(entities.size() == 540);
  // The queued ones went as one group (or very few, had the transactor
  // taken a budget's worth at a time).
  const Store::TransactorCounters c = store->transactor_counters();
  CHECK(c.largest_group >= kQueued);
  CHECK(c.groups - groups_before <= 3);

  // Nothing of the failed ones is there; the statistics count the rest.
  auto db = store->Latest();
  DbView view = db->View(Basis::Current());
  const EntityId email = db->schema().FindAttribute("user/email")->id;
  const EntityId priority = db->schema().FindAttribute("issue/priority")->id;
  CHECK(db->stats().Find(email)->datoms == 271);
  CHECK(db->stats().Find(priority)->datoms == 270);
  CHECK(CountDistinct(*store, email) == 271);
  CHECK(DistinctInStats(*store, email) == 271);
  CHECK(DistinctInStats(*store, ids::kDbTxInstant) ==
        CountDistinct(*store, ids::kDbTxInstant));
}

TEST_CASE(
    "the statistics count :db/txInstant values exactly when other "
    "entities hold instants and transactions give theirs") {
  TempDir dir;
  GroupHold hold;
  const StoreOptions options = HeldCountingOptions(&hold);
  const int64_t now = NowMicros();
  // Within the clock skew a given instant may have (10 s).
  const int64_t x1 = now + 3'000'000, x2 = now + 6'000'000;
  {
    auto store = *Store::Open(dir.path(), options);
    // In one group: an entity takes instant x1, then a transaction gives
    // x1 as its own: one distinct value, not two.
    Result first =
        hold.Hold(*store, Tx({Add(E("a"), "db/doc", Value::String("before"))}));
    Result holds_x1 =
        store->Transact(Tx({Add(E("e1"), "db/txInstant", Value::Instant(x1))}));
    Result gives_x1 = store->Transact(
        Tx({Add(EntityRef::TxTempId(), "db/txInstant", Value::Instant(x1)),
            Add(E("b"), "db/doc", Value::String("at x1"))}));
    hold.Release();
    REQUIRE(first.get().ok());
    REQUIRE(holds_x1.get().ok());
    absl::StatusOr<TxReport> r = gives_x1.get();
    REQUIRE_MESSAGE(r.ok(), r.status().ToString());
    CHECK(r->tx_instant == x1);
    CHECK(DistinctInStats(*store, ids::kDbTxInstant) ==
          CountDistinct(*store, ids::kDbTxInstant));
    // Left for the next opening: an entity holding x2, and one far ahead
    // of any clock.
    const int64_t year_2999 = int64_t{32472144000} * 1000000;
    REQUIRE(store
                ->Transact(Tx(
                    {Add(E("e2"), "db/txInstant", Value::Instant(x2)),
                     Add(E("e3"), "db/txInstant", Value::Instant(year_2999))}))
                .get()
                .ok());
    CHECK(DistinctInStats(*store, ids::kDbTxInstant) ==
          CountDistinct(*store, ids::kDbTxInstant));
  }
  // Reopened, the transactor learns what instants the store holds from
  // the store itself: x2, given now by a transaction, is not new.
  auto store = *Store::Open(dir.path(), options);
  const int64_t distinct_before = DistinctInStats(*store, ids::kDbTxInstant);
  absl::StatusOr<TxReport> r =
      store
          ->Transact(Tx(
              {Add(EntityRef::TxTempId(), "db/txInstant", Value::Instant(x2))}))
          .get();
  REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  CHECK(DistinctInStats(*store, ids::kDbTxInstant) == distinct_before);
  // Plain transactions after it, alone and in a group.
  for (int i = 0; i < 3; ++i) {
    REQUIRE(store->Transact(Tx({Add(E("c"), "db/doc", Value::String("c"))}))
                .get()
                .ok());
  }
  Result first =
      hold.Hold(*store, Tx({Add(E("d"), "db/doc", Value::String(""))}));
  std::vector<Result> more;
  for (int i = 0; i < 50; ++i) {
    more.push_back(
        store->Transact(Tx({Add(E("d"), "db/doc", Value::String("d"))})));
  }
  hold.Release();
  REQUIRE(first.get().ok());
  for (Result& m : more) REQUIRE(m.get().ok());
  CHECK(DistinctInStats(*store, ids::kDbTxInstant) ==
        CountDistinct(*store, ids::kDbTxInstant));
}

}  // namespace
}  // namespace mentat::storage

namespace mentat::storage {
namespace {

// A commit must not copy every attribute's statistics (with up to
// low_cardinality_limit value counts each): the new snapshot shares the
// statistics of the attributes it did not write with the one before, and
// the one before keeps its own figures for those it did.
TEST_CASE("a commit copies the statistics of the attributes it wrote alone") {
  TempDir dir;
  auto store = *Store::Open(dir.path());
  REQUIRE(store
              ->Transact(Tx(Concat({Attr("g/kind", "db.type/keyword"),
                                    Attr("g/size", "db.type/long")})))
              .get()
              .ok());
  std::vector<TxOp> ops;
  for (int i = 0; i < 50; ++i) {
    const std::string e = "e" + std::to_string(i);
    ops.push_back(Add(E(e.c_str()), "g/kind",
                      Value::Keyword(i % 2 == 0 ? "k/even" : "k/odd")));
    ops.push_back(Add(E(e.c_str()), "g/size", Value::Long(i)));
  }
  REQUIRE(store->Transact(Tx(ops)).get().ok());
  const Schema& schema = store->Latest()->schema();
  const EntityId kind = schema.FindAttribute("g/kind")->id;
  const EntityId size = schema.FindAttribute("g/size")->id;

  auto before = store->Latest();
  REQUIRE(store->Transact(Tx({Add(E("new"), "g/size", Value::Long(7))}))
              .get()
              .ok());
  auto after = store->Latest();
  // Not written: the very same statistics.
  CHECK(after->stats().Find(kind) == before->stats().Find(kind));
  CHECK(after->stats().Find(kind)->value_counts.size() == 2);
  // Written: the new snapshot's own, and the old one's unchanged.
  REQUIRE(after->stats().Find(size) != before->stats().Find(size));
  CHECK(before->stats().Find(size)->datoms == 50);
  CHECK(after->stats().Find(size)->datoms == 51);
  CHECK(before->stats().Find(size)->value_counts.CountOf(Value::Long(7)) == 1);
  CHECK(after->stats().Find(size)->value_counts.CountOf(Value::Long(7)) == 2);
}

}  // namespace
}  // namespace mentat::storage
