// since(t) under a writer: the index of each new basis extends the one
// of the basis before (internal/since_index.h), and must hold exactly what
// an index built fresh from the log holds, and what filtering the current
// indexes by tx gives, in every order.

#include "internal/since_index.h"

#include <doctest/doctest.h>

#include <random>

#include "internal/cursors.h"
#include "internal/store_core.h"
#include "mentat/base/str_cat.h"
#include "mentat/storage/store.h"
#include "test_support.h"

namespace mentat::storage {
namespace {

using testing::Add;
using testing::AddRef;
using testing::Attr;
using testing::E;
using testing::Retract;
using testing::RetractEntity;
using testing::TempDir;
using testing::Tx;

std::vector<std::string> Dump(DatomCursor& cursor, std::string_view prefix) {
  std::vector<std::string> out;
  for (cursor.Seek(prefix); cursor.Valid(); cursor.Next()) {
    const Datom& d = cursor.datom();
    out.push_back(StrCat(cursor.key().size(), " ", d.e, " ", d.a, " ",
                         d.v.DebugString(), " ", d.tx, " ", d.added));
  }
  REQUIRE(cursor.status().ok());
  return out;
}

TEST_CASE("since() extended over new bases equals since() built fresh") {
  TempDir dir;
  auto store = *Store::Open(dir.path());
  std::vector<TxOp> schema;
  for (auto attr :
       {Attr("s/one", "db.type/long"), Attr("s/many", "db.type/long", true),
        Attr("s/ref", "db.type/ref", true)}) {
    schema.insert(schema.end(), attr.begin(), attr.end());
  }
  REQUIRE(store->Transact(Tx(schema)).get().ok());
  std::vector<TxOp> first;
  for (int i = 0; i < 40; ++i) {
    const std::string tempid = StrCat("e", i);
    first.push_back(Add(E(tempid.c_str()), "s/one", Value::Long(i)));
  }
  auto created = store->Transact(Tx(first)).get();
  REQUIRE(created.ok());
  std::vector<EntityId> entities, txs = {created->tx};
  for (int i = 0; i < 40; ++i) {
    entities.push_back(created->tempids.at(StrCat("e", i)));
  }
  std::mt19937 rng(7);
  auto pick = [&](int n) {
    return std::uniform_int_distribution<int>(0, n - 1)(rng);
  };
  const size_t limit = store->options().since_log_limit;
  for (int round = 0; round < 120; ++round) {
    CAPTURE(round);
    // One to three commits between reads: an extension covers several.
    for (int k = 1 + pick(3); k > 0; --k) {
      const EntityId e = entities[pick(static_cast<int>(entities.size()))];
      const EntityId other = entities[pick(static_cast<int>(entities.size()))];
      std::vector<TxOp> ops;
      switch (pick(5)) {
        case 0:
          ops = {Add(E(e), "s/one", Value::Long(pick(50)))};
          break;
        case 1:
          ops = {Add(E(e), "s/many", Value::Long(pick(4))),
                 AddRef(E(e), "s/ref", E(other))};
          break;
        case 2:
          ops = {Retract(E(e), "s/many", Value::Long(pick(4)))};
          break;
        case 3:
          ops = {RetractEntity(E(e)),
                 Add(E(StrCat("n", round).c_str()), "s/one", Value::Long(7))};
          break;
        default:
          ops = {Retract(E(e), "s/one", Value::Long(pick(50)))};
          break;
      }
      auto r = store->Transact(Tx(ops)).get();
      if (r.ok()) {
        txs.push_back(r->tx);
        if (r->tempids.count(StrCat("n", round)) != 0) {
          entities.push_back(r->tempids.at(StrCat("n", round)));
        }
      }
    }
    auto db = store->Latest();
    // A few fixed points (extended round after round) and a random one.
    for (const EntityId t : {txs[0], txs[txs.size() / 2],
                             txs[pick(static_cast<int>(txs.size()))]}) {
      CAPTURE(t);
      auto fresh = internal::SinceIndex::Build(*db, t, limit);
      REQUIRE(fresh.ok());
      REQUIRE(*fresh != nullptr);
      const DbView view = db->View(Basis::Since(t));
      for (int o = 0; o < 4; ++o) {
        const auto order = static_cast<IndexOrder>(o);
        CAPTURE(o);
        auto got = view.NewCursor(order);
        auto want = (*fresh)->NewCursor(order);
        auto filtered = internal::NewSinceCursor(*db, order, t);
        const std::vector<std::string> expect = Dump(*want, "");
        CHECK(Dump(*got, "") == expect);
        // The filter reads RocksDB: VAET holds refs only there too.
        CHECK(Dump(*filtered, "") == expect);
        // A seek under one prefix, as queries do.
        std::string prefix;
        const EntityId e = entities[pick(static_cast<int>(entities.size()))];
        AppendEntityId(o == 0 ? e : db->schema().FindAttribute("s/one")->id,
                       &prefix);
        CHECK(Dump(*got, prefix) == Dump(*want, prefix));
      }
    }
    // The cache keeps the newest index of each t, at this basis.
    auto cached = db->core().since_cache->Find(db->basis_tx(), txs[0]);
    REQUIRE(cached != nullptr);
    CHECK(cached->basis() == db->basis_tx());
  }
}

}  // namespace
}  // namespace mentat::storage
