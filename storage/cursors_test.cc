// A reused cursor must read what a fresh one reads, whatever order its
// seeks come in (index nested-loop joins reuse one cursor per step, and
// probe in key order when they can), at every basis.

#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "mentat/storage/store.h"
#include "test_support.h"

namespace mentat::storage {
namespace {

using testing::Add;
using testing::AddRef;
using testing::Attr;
using testing::E;
using testing::TempDir;
using testing::Tx;

std::vector<Datom> ReadAll(DatomCursor& cursor) {
  std::vector<Datom> out;
  for (; cursor.Valid(); cursor.Next()) out.push_back(cursor.datom());
  REQUIRE(cursor.status().ok());
  return out;
}

TEST_CASE("a reused cursor reads like a fresh one, in any seek order") {
  TempDir dir;
  StoreOptions options;
  options.sync_commits = false;
  auto store = *Store::Open(dir.path(), options);
  auto schema = Attr("c/n", "db.type/long");
  auto ref = Attr("c/ref", "db.type/ref");
  schema.insert(schema.end(), ref.begin(), ref.end());
  REQUIRE(store->Transact(Tx(schema)).get().ok());
  std::vector<TxOp> ops;
  for (int i = 0; i < 40; ++i) {
    const std::string t = "e" + std::to_string(i);
    ops.push_back(Add(E(t.c_str()), "c/n", Value::Long(0)));
    ops.push_back(AddRef(E(t.c_str()), "c/ref", E("e0")));
  }
  auto first = store->Transact(Tx(ops)).get();
  REQUIRE(first.ok());
  std::vector<EntityId> ids;
  for (int i = 0; i < 40; ++i) {
    ids.push_back(first->tempids.at("e" + std::to_string(i)));
  }
  // Sparse history: a few entities change, some twice, one in a later tx.
  std::vector<EntityId> txs = {first->tx};
  for (int round = 1; round <= 3; ++round) {
    std::vector<TxOp> change;
    for (int i = round; i < 40; i += 7 * round) {
      change.push_back(
          Add(E(ids[static_cast<size_t>(i)]), "c/n", Value::Long(round)));
    }
    auto r = store->Transact(Tx(change)).get();
    REQUIRE(r.ok());
    txs.push_back(r->tx);
    if (round == 2) REQUIRE(store->Flush().ok());  // memtable and files
  }
  auto db = store->Latest();
  std::mt19937 rng(7);
  for (Basis basis :
       {Basis::AsOf(txs[0]), Basis::AsOf(txs[1]), Basis::AsOf(txs[2]),
        Basis::History(), Basis::Current()}) {
    DbView view = db->View(basis);
    for (IndexOrder order : {IndexOrder::kEavt, IndexOrder::kAevt}) {
      CAPTURE(static_cast<int>(order));
      // Ascending with repeats (a join's sorted probes), then shuffled.
      std::vector<EntityId> probes;
      for (EntityId e : ids) probes.insert(probes.end(), rng() % 3, e);
      std::vector<EntityId> shuffled = probes;
      std::shuffle(shuffled.begin(), shuffled.end(), rng);
      for (const auto& list : {probes, shuffled}) {
        auto reused = view.NewCursor(order);
        for (EntityId e : list) {
          std::string prefix;
          if (order == IndexOrder::kEavt) {
            EavtKey::EncodePrefix(e, &prefix);
          } else {
            const EntityId a = db->schema().FindAttribute("c/n")->id;
            AevtKey::EncodePrefix(a, e, &prefix);
          }
          auto fresh = view.NewCursor(order);
          fresh->Seek(prefix);
          const std::vector<Datom> want = ReadAll(*fresh);
          reused->Seek(prefix);
          CHECK(ReadAll(*reused) == want);
          // Stopping early, as a single-datom lookup does, then seeking on.
          reused->Seek(prefix);
          if (!want.empty()) {
            REQUIRE(reused->Valid());
            CHECK(reused->datom() == want.front());
          }
        }
      }
    }
  }
}

TEST_CASE("a forward seek lands where SeekWithin does, from any position") {
  TempDir dir;
  StoreOptions options;
  options.sync_commits = false;
  auto store = *Store::Open(dir.path(), options);
  auto schema = Attr("f/n", "db.type/long");
  auto tags = Attr("f/tag", "db.type/long", /*many=*/true);
  schema.insert(schema.end(), tags.begin(), tags.end());
  REQUIRE(store->Transact(Tx(schema)).get().ok());
  // 120 entities, every third without f/n, most with tags: the
  // targets below skip from none to dozens of keys, past kForwardSteps.
  std::vector<TxOp> ops;
  for (int i = 0; i < 120; ++i) {
    const std::string t = "e" + std::to_string(i);
    if (i % 3 != 0) ops.push_back(Add(E(t.c_str()), "f/n", Value::Long(i)));
    // Every entity has a datom (its tempid needs one).
    for (int k = 0; k < i % 4 + (i % 3 == 0 ? 1 : 0); ++k) {
      ops.push_back(Add(E(t.c_str()), "f/tag", Value::Long(k)));
    }
  }
  auto first = store->Transact(Tx(ops)).get();
  REQUIRE(first.ok());
  std::vector<EntityId> ids;
  for (int i = 0; i < 120; ++i) {
    ids.push_back(first->tempids.at("e" + std::to_string(i)));
  }
  REQUIRE(store->Flush().ok());
  std::vector<TxOp> change;
  for (int i = 1; i < 120; i += 5) {
    change.push_back(
        Add(E(ids[static_cast<size_t>(i)]), "f/n", Value::Long(1000 + i)));
  }
  auto second = store->Transact(Tx(change)).get();
  REQUIRE(second.ok());
  auto db = store->Latest();
  std::mt19937 rng(11);
  for (Basis basis : {Basis::Current(), Basis::AsOf(first->tx),
                      Basis::History(), Basis::Since(first->tx)}) {
    DbView view = db->View(basis);
    for (const char* name : {"f/n", "f/tag"}) {
      CAPTURE(name);
      const EntityId a = db->schema().FindAttribute(name)->id;
      std::string attr;
      AppendEntityId(a, &attr);
      auto walker = view.NewCursor(IndexOrder::kAevt);
      walker->Seek(attr);
      size_t i = 0;
      while (i < ids.size()) {
        std::string target;
        AevtKey::EncodePrefix(a, ids[i], &target);
        // The same entity again, or one behind, now and then.
        if (rng() % 8 == 0 && i > 0) {
          target.clear();
          AevtKey::EncodePrefix(a, ids[i - 1 - rng() % std::min<size_t>(i, 3)],
                                &target);
        }
        auto fresh = view.NewCursor(IndexOrder::kAevt);
        fresh->Seek(attr);
        fresh->SeekWithin(target);
        walker->SeekForward(target);
        REQUIRE(walker->Valid() == fresh->Valid());
        if (fresh->Valid()) {
          CHECK(walker->datom() == fresh->datom());
          CHECK(walker->key() == fresh->key());
        }
        // Read on a little (a join reads its entity's datoms), then skip.
        for (int n = static_cast<int>(rng() % 4); n > 0 && walker->Valid();
             --n) {
          walker->Next();
        }
        i += 1 + rng() % 12;
      }
      CHECK(walker->status().ok());
    }
  }
}

}  // namespace
}  // namespace mentat::storage
