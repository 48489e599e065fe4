// The transactor's existence checks (is [e a v] current? asserted when?)
// answered from the entity cache when it holds e's record
// (CommitBatch::Get): the same answers as RocksDB's, whatever the record
// was read for, and never from a record older than the last write to e.

#include <doctest/doctest.h>

#include <vector>

#include "mentat/storage/store.h"
#include "test_support.h"

namespace mentat::storage {
namespace {

using testing::Add;
using testing::Attr;
using testing::Concat;
using testing::E;
using testing::MustTransact;
using testing::Retract;
using testing::TempDir;
using testing::ValuesOf;

// The datoms of `report` other than its transaction's own.
std::vector<Datom> UserDatoms(const TxReport& report) {
  std::vector<Datom> out;
  for (const Datom& d : report.datoms) {
    if (d.e != report.tx) out.push_back(d);
  }
  return out;
}

// An entity with tag "a" (m/tag, cardinality many), and the tx that
// asserted it.
struct Tagged {
  EntityId e;
  EntityId asserted;
};
Tagged MakeTagged(Store& store) {
  MustTransact(store, Attr("m/tag", "db.type/string", /*many=*/true));
  const TxReport r =
      MustTransact(store, {Add(E("x"), "m/tag", Value::String("a"))});
  return Tagged{r.tempids.at("x"), r.tx};
}

// Reads e's tags at the latest basis (which caches e's record) and
// checks the read was answered from the cache the second time.
void CacheEntity(Store& store, EntityId e) {
  auto db = store.Latest();
  (void)ValuesOf(db->View(Basis::Current()), e, "m/tag");
  const uint64_t hits = store.entity_cache_counters().hits;
  (void)ValuesOf(db->View(Basis::Current()), e, "m/tag");
  REQUIRE(store.entity_cache_counters().hits == hits + 1);
}

TEST_CASE("a cached entity's current value makes its assertion redundant") {
  TempDir dir;
  auto store = *Store::Open(dir.path());
  const Tagged t = MakeTagged(*store);
  CacheEntity(*store, t.e);
  const TxReport again =
      MustTransact(*store, {Add(E(t.e), "m/tag", Value::String("a"))});
  CHECK(UserDatoms(again).empty());
  // A value it does not hold is new.
  const TxReport other =
      MustTransact(*store, {Add(E(t.e), "m/tag", Value::String("b"))});
  CHECK(UserDatoms(other).size() == 1);
}

TEST_CASE(
    "a retraction of a cached entity's value keeps the tx that "
    "asserted it") {
  TempDir dir;
  auto store = *Store::Open(dir.path());
  const Tagged t = MakeTagged(*store);
  // A later commit elsewhere: the record is read after the assertion's tx.
  MustTransact(*store, {Add(E("y"), "m/tag", Value::String("z"))});
  CacheEntity(*store, t.e);
  const TxReport gone =
      MustTransact(*store, {Retract(E(t.e), "m/tag", Value::String("a"))});
  REQUIRE(UserDatoms(gone).size() == 1);
  CHECK_FALSE(UserDatoms(gone)[0].added);
  // The history's interval starts at the assertion's tx: "a" is there as
  // of it and not just before it.
  auto db = store->Latest();
  CHECK(ValuesOf(db->View(Basis::AsOf(t.asserted)), t.e, "m/tag") ==
        std::vector<Value>{Value::String("a")});
  CHECK(ValuesOf(db->View(Basis::AsOf(t.asserted - 1)), t.e, "m/tag").empty());
  CHECK(ValuesOf(db->View(Basis::Current()), t.e, "m/tag").empty());
  // Retracting it again changes nothing.
  CHECK(UserDatoms(MustTransact(*store,
                                {Retract(E(t.e), "m/tag", Value::String("a"))}))
            .empty());
}

TEST_CASE("a retracted value in a cached record with history is not current") {
  TempDir dir;
  auto store = *Store::Open(dir.path());
  const Tagged t = MakeTagged(*store);
  MustTransact(*store, {Retract(E(t.e), "m/tag", Value::String("a"))});
  MustTransact(*store, {Add(E(t.e), "m/tag", Value::String("b"))});
  // A reader of an earlier basis caches the whole record, history
  // included: "a" is in it, retracted.
  auto db = store->Latest();
  CHECK(ValuesOf(db->View(Basis::AsOf(t.asserted)), t.e, "m/tag") ==
        std::vector<Value>{Value::String("a")});
  const uint64_t hits = store->entity_cache_counters().hits;
  CHECK(ValuesOf(db->View(Basis::AsOf(t.asserted)), t.e, "m/tag").size() == 1);
  REQUIRE(store->entity_cache_counters().hits == hits + 1);
  // Asserting "a" again is a new datom; "b" is redundant.
  const TxReport back =
      MustTransact(*store, {Add(E(t.e), "m/tag", Value::String("a")),
                            Add(E(t.e), "m/tag", Value::String("b"))});
  REQUIRE(UserDatoms(back).size() == 1);
  CHECK(UserDatoms(back)[0].v == Value::String("a"));
  CHECK(
      ValuesOf(store->Latest()->View(Basis::Current()), t.e, "m/tag").size() ==
      2);
}

TEST_CASE("a record cached before a write to its entity is not used after") {
  TempDir dir;
  auto store = *Store::Open(dir.path());
  const Tagged t = MakeTagged(*store);
  auto before = store->Latest();
  CacheEntity(*store, t.e);
  MustTransact(*store, {Retract(E(t.e), "m/tag", Value::String("a"))});
  // A reader still on the older basis reads e again: its record, from
  // before the retraction, may not join the cache.
  CHECK(ValuesOf(before->View(Basis::Current()), t.e, "m/tag").size() == 1);
  // So asserting "a" again is new, not redundant.
  const TxReport back =
      MustTransact(*store, {Add(E(t.e), "m/tag", Value::String("a"))});
  CHECK(UserDatoms(back).size() == 1);
}

TEST_CASE(
    "many small transactions in groups: the cache answers as "
    "RocksDB does") {
  // Writers race readers that cache the entities they write; every
  // assertion of a value an entity holds is redundant, every other new.
  TempDir dir;
  auto store = *Store::Open(dir.path());
  MustTransact(*store, Attr("m/tag", "db.type/long", /*many=*/true));
  std::vector<EntityId> entities;
  {
    std::vector<TxOp> ops;
    for (int i = 0; i < 20; ++i) {
      ops.push_back(
          Add(E(("e" + std::to_string(i)).c_str()), "m/tag", Value::Long(0)));
    }
    const TxReport r = MustTransact(*store, ops);
    for (int i = 0; i < 20; ++i) {
      entities.push_back(r.tempids.at("e" + std::to_string(i)));
    }
  }
  for (int round = 1; round <= 10; ++round) {
    std::vector<std::future<absl::StatusOr<TxReport>>> pending;
    for (EntityId e : entities) {
      // Each entity: a value it holds (round - 1) and a new one (round).
      pending.push_back(store->Transact(
          testing::Tx({Add(E(e), "m/tag", Value::Long(round - 1)),
                       Add(E(e), "m/tag", Value::Long(round))})));
      (void)ValuesOf(store->Latest()->View(Basis::Current()), e, "m/tag");
    }
    for (auto& p : pending) {
      auto r = p.get();
      REQUIRE(r.ok());
      const std::vector<Datom> written = UserDatoms(*r);
      REQUIRE(written.size() == 1);
      CHECK(written[0].v == Value::Long(round));
    }
  }
  for (EntityId e : entities) {
    CHECK(
        ValuesOf(store->Latest()->View(Basis::Current()), e, "m/tag").size() ==
        11);
  }
}

}  // namespace
}  // namespace mentat::storage
