// since(t) under a writer: the index of each new basis extends the one
// of the basis before with a layer (internal/since_index.h), and must hold
// exactly what an index built fresh from the log holds, and what filtering
// the current indexes by tx gives, in every order, across merges and
// folds of its layers, past its limit and after an excision.

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

// The datoms of since(t) at the Db's basis in `order`, from the filter
// over the current indexes (VAET holds refs only there too).
std::vector<std::string> Filtered(const Db& db, IndexOrder order, EntityId t,
                                  std::string_view prefix = "") {
  auto cursor = internal::NewSinceCursor(db, order, t);
  return Dump(*cursor, prefix);
}

// Checks `index` against the filter in every order, whole and under the
// prefix of `e` (EAVT) or of `a` (the other orders).
void CheckAllOrders(const internal::SinceIndex& index, const Db& db, EntityId e,
                    EntityId a) {
  REQUIRE(!index.over());
  for (int o = 0; o < 4; ++o) {
    CAPTURE(o);
    const auto order = static_cast<IndexOrder>(o);
    auto got = index.NewCursor(order);
    CHECK(Dump(*got, "") == Filtered(db, order, index.t()));
    std::string prefix;
    AppendEntityId(o == 0 ? e : a, &prefix);
    CHECK(Dump(*got, prefix) == Filtered(db, order, index.t(), prefix));
  }
}

// Small merges and folds, so that a test of a few hundred commits crosses
// every boundary many times.
// Deltas fold into the base at once.
constexpr internal::SinceShape kFoldNow{/*max_deltas=*/8, /*fold_divisor=*/1,
                                        /*min_fold=*/0};
constexpr internal::SinceShape kSmall{/*max_deltas=*/3, /*fold_divisor=*/2,
                                      /*min_fold=*/6, /*log_chunk=*/4};

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
  // Indexes of fixed t's extended round after round with small layers
  // (the views below extend theirs with the default shape).
  std::vector<std::shared_ptr<const internal::SinceIndex>> chains;
  size_t most_layers = 0, folds = 0;
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
      REQUIRE(!(*fresh)->over());
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
    if (chains.empty()) {
      for (const EntityId t : {txs[0], txs[txs.size() / 2]}) {
        auto built = internal::SinceIndex::Build(*db, t, limit, kSmall);
        REQUIRE(built.ok());
        chains.push_back(*built);
      }
    } else {
      for (auto& chain : chains) {
        const size_t before = chain->layers();
        auto extended =
            internal::SinceIndex::Extend(*chain, *db, limit, kSmall);
        REQUIRE(extended.ok());
        chain = *extended;
        REQUIRE(chain->basis() == db->basis_tx());
        CHECK(chain->layers() <= 1 + kSmall.max_deltas);
        most_layers = std::max(most_layers, chain->layers());
        if (chain->layers() == 1 && before > 1) ++folds;
      }
    }
    for (const auto& chain : chains) {
      CAPTURE(chain->t());
      CheckAllOrders(*chain, *db,
                     entities[pick(static_cast<int>(entities.size()))],
                     db->schema().FindAttribute("s/many")->id);
    }
    // The cache keeps the newest index of each t, at this basis.
    auto cached = db->core().since_cache->Find(db->basis_tx(), txs[0]);
    REQUIRE(cached != nullptr);
    CHECK(cached->basis() == db->basis_tx());
  }
  // The boundaries were crossed: several layers at once, and folds.
  CHECK(most_layers >= 3);
  CHECK(folds >= 2);
}

// Deltas that stay apart unless the binary counter merges them (up to
// eight), whatever the default shape.
constexpr internal::SinceShape kApart{/*max_deltas=*/8, /*fold_divisor=*/8,
                                      /*min_fold=*/4096};

// A store with three attributes and entities x and y; `t` is the tx of
// the schema.
struct LayerFixture {
  TempDir dir;
  std::unique_ptr<Store> store;
  EntityId t = 0, x = 0, y = 0, many = 0, ref = 0;

  explicit LayerFixture(StoreOptions options = {}) {
    store = *Store::Open(dir.path(), options);
    std::vector<TxOp> schema;
    for (auto attr : {Attr("s/many", "db.type/long", true),
                      Attr("s/ref", "db.type/ref", true)}) {
      schema.insert(schema.end(), attr.begin(), attr.end());
    }
    t = Commit(schema).tx;
    auto created = Commit({Add(E("x"), "s/many", Value::Long(1000)),
                           Add(E("y"), "s/many", Value::Long(1000))});
    x = created.tempids.at("x");
    y = created.tempids.at("y");
    many = store->Latest()->schema().FindAttribute("s/many")->id;
    ref = store->Latest()->schema().FindAttribute("s/ref")->id;
  }
  TxReport Commit(std::vector<TxOp> ops) {
    auto r = store->Transact(Tx(std::move(ops))).get();
    REQUIRE(r.ok());
    return *r;
  }
  // `n` new values of y: filler that makes a layer bigger.
  TxReport Filler(int n, int from) {
    std::vector<TxOp> ops;
    for (int i = 0; i < n; ++i) {
      ops.push_back(Add(E(y), "s/many", Value::Long(from + i)));
    }
    return Commit(ops);
  }
  std::shared_ptr<const internal::SinceIndex> Extend(
      const internal::SinceIndex& prev,
      const internal::SinceShape& shape = kApart) {
    auto db = store->Latest();
    auto r = internal::SinceIndex::Extend(
        prev, *db, store->options().since_log_limit, shape);
    REQUIRE(r.ok());
    REQUIRE(!(*r)->over());
    CheckAllOrders(**r, *db, x, many);
    return *r;
  }
  // Which tx asserted x's `many` value `v` in every order of `index` but
  // VAET (0: not there).
  void ExpectX(const internal::SinceIndex& index, int64_t v, EntityId tx) {
    for (int o = 0; o < 3; ++o) {
      CAPTURE(o);
      const auto order = static_cast<IndexOrder>(o);
      std::string prefix;
      AppendEntityId(order == IndexOrder::kEavt ? x : many, &prefix);
      CHECK(Asserted(index, order, prefix, many, Value::Long(v)) == tx);
    }
  }
  // Which tx asserted x's ref to y, in VAET.
  void ExpectRef(const internal::SinceIndex& index, EntityId tx) {
    std::string prefix;
    AppendEntityId(y, &prefix);
    CHECK(Asserted(index, IndexOrder::kVaet, prefix, ref, Value::Ref(y)) == tx);
  }
  EntityId Asserted(const internal::SinceIndex& index, IndexOrder order,
                    std::string_view prefix, EntityId a, const Value& v) {
    auto cursor = index.NewCursor(order);
    EntityId seen = 0;
    for (cursor->Seek(prefix); cursor->Valid(); cursor->Next()) {
      const Datom& d = cursor->datom();
      if (d.e == x && d.a == a && d.v == v) seen = d.tx;
    }
    return seen;
  }
};

TEST_CASE(
    "since() layers: a retraction hides and a reassertion shows "
    "across layers") {
  LayerFixture f;
  // A key in the base (value 1 and the ref) and one in the first delta
  // (value 2), each retracted in a delta above and asserted again in a
  // delta above that.
  const EntityId first = f.Commit({Add(E(f.x), "s/many", Value::Long(1)),
                                   AddRef(E(f.x), "s/ref", E(f.y))})
                             .tx;
  auto db = f.store->Latest();
  auto base =
      internal::SinceIndex::Build(*db, f.t, f.store->options().since_log_limit);
  REQUIRE(base.ok());
  std::shared_ptr<const internal::SinceIndex> index = *base;
  CHECK(index->layers() == 1);
  f.ExpectX(*index, 1, first);
  f.ExpectRef(*index, first);

  f.Filler(30, 0);
  const EntityId two = f.Commit({Add(E(f.x), "s/many", Value::Long(2))}).tx;
  index = f.Extend(*index);
  // The two commits since the base: a delta of 31 keys (once merged).
  CHECK(index->layers() == 2);
  f.ExpectX(*index, 2, two);

  SUBCASE("in layers that stay apart") {
    f.Commit({Retract(E(f.x), "s/many", Value::Long(1)),
              Retract(E(f.x), "s/many", Value::Long(2)),
              Retract(E(f.x), "s/ref", Value::Ref(f.y))});
    f.Filler(4, 100);
    index = f.Extend(*index);
    CHECK(index->layers() == 3);
    f.ExpectX(*index, 1, 0);
    f.ExpectX(*index, 2, 0);
    f.ExpectRef(*index, 0);
    const EntityId again = f.Commit({Add(E(f.x), "s/many", Value::Long(1)),
                                     Add(E(f.x), "s/many", Value::Long(2)),
                                     AddRef(E(f.x), "s/ref", E(f.y))})
                               .tx;
    index = f.Extend(*index);
    CHECK(index->layers() == 4);
    f.ExpectX(*index, 1, again);
    f.ExpectX(*index, 2, again);
    f.ExpectRef(*index, again);

    // Retracted again in a layer of its own, then folded: the fold drops
    // the retraction, and with it the key.
    f.Commit({Retract(E(f.x), "s/many", Value::Long(1))});
    f.Filler(2, 200);
    index = f.Extend(*index, kFoldNow);
    CHECK(index->layers() == 1);
    f.ExpectX(*index, 1, 0);
    f.ExpectX(*index, 2, again);
    f.ExpectRef(*index, again);
  }

  SUBCASE("in deltas that merge") {
    // Two one-commit deltas of one key each merge: the newer change wins.
    f.Commit({Retract(E(f.x), "s/many", Value::Long(1))});
    index = f.Extend(*index);
    CHECK(index->layers() == 3);
    f.ExpectX(*index, 1, 0);
    const EntityId again = f.Commit({Add(E(f.x), "s/many", Value::Long(1))}).tx;
    index = f.Extend(*index);
    CHECK(index->layers() == 3);  // merged with the retraction's delta
    f.ExpectX(*index, 1, again);
    f.Commit({Retract(E(f.x), "s/many", Value::Long(1))});
    index = f.Extend(*index);
    f.ExpectX(*index, 1, 0);
  }

  SUBCASE("an order sorted in the base stays sorted through a fold") {
    // AVET sorted by a read; a fold then merges it instead of dropping it.
    (void)index->NewCursor(IndexOrder::kAvet);
    f.Filler(40, 300);
    index = f.Extend(*index, kFoldNow);
    CHECK(index->layers() == 1);
    f.ExpectX(*index, 1, first);
    f.ExpectX(*index, 2, two);
    f.ExpectRef(*index, first);
  }
}

TEST_CASE("since() past its limit filters the current indexes") {
  StoreOptions options;
  options.since_log_limit = 40;
  LayerFixture f(options);
  const size_t limit = options.since_log_limit;
  auto check_view = [&] {
    auto db = f.store->Latest();
    const DbView view = db->View(Basis::Since(f.t));
    for (int o = 0; o < 4; ++o) {
      CAPTURE(o);
      const auto order = static_cast<IndexOrder>(o);
      auto cursor = view.NewCursor(order);
      CHECK(Dump(*cursor, "") == Filtered(*db, order, f.t));
    }
    return db->core().since_cache->Find(db->basis_tx(), f.t);
  };

  SUBCASE("built over the limit") {
    f.Filler(50, 0);
    auto built = internal::SinceIndex::Build(*f.store->Latest(), f.t, limit);
    REQUIRE(built.ok());
    CHECK((*built)->over());
    // The view keeps the marker, and a later basis keeps it without
    // reading the log again.
    auto cached = check_view();
    REQUIRE(cached != nullptr);
    CHECK(cached->over());
    f.Filler(1, 100);
    auto extended =
        internal::SinceIndex::Extend(*cached, *f.store->Latest(), limit);
    REQUIRE(extended.ok());
    CHECK((*extended)->over());
    check_view();
  }

  SUBCASE("a log of churn is read up to its bound") {
    // Twenty values asserted and retracted again: the log holds far more
    // than the index does (the values' last state and a tx each).
    auto churn = [&](int rounds) {
      for (int r = 0; r < rounds; ++r) {
        f.Filler(20, 0);
        std::vector<TxOp> ops;
        for (int i = 0; i < 20; ++i) {
          ops.push_back(Retract(E(f.y), "s/many", Value::Long(i)));
        }
        f.Commit(ops);
      }
    };
    churn(3);  // 126 log datoms for 40: under the bound of 320
    auto db = f.store->Latest();
    auto built = internal::SinceIndex::Build(*db, f.t, limit, kSmall);
    REQUIRE(built.ok());
    CHECK(!(*built)->over());
    CheckAllOrders(**built, *db, f.x, f.many);
    auto cached = check_view();
    REQUIRE(cached != nullptr);
    CHECK(!cached->over());
    churn(6);  // 252 more: past the bound
    db = f.store->Latest();
    built = internal::SinceIndex::Build(*db, f.t, limit, kSmall);
    REQUIRE(built.ok());
    CHECK((*built)->over());
    // The view extends its index by the 252: past the bound too.
    cached = check_view();
    REQUIRE(cached != nullptr);
    CHECK(cached->over());
  }

  SUBCASE("extended over the limit") {
    auto cached = check_view();
    REQUIRE(cached != nullptr);
    CHECK(!cached->over());
    // Under the limit in one commit, over it after the next few.
    f.Filler(30, 0);
    cached = check_view();
    CHECK(!cached->over());
    for (int i = 0; i < 3; ++i) f.Filler(5, 100 + 5 * i);
    cached = check_view();
    REQUIRE(cached != nullptr);
    CHECK(cached->over());
  }
}

TEST_CASE("since() layers hold nothing an excision removed") {
  LayerFixture f;
  auto check_view = [&] {
    auto db = f.store->Latest();
    const DbView view = db->View(Basis::Since(f.t));
    for (int o = 0; o < 4; ++o) {
      CAPTURE(o);
      const auto order = static_cast<IndexOrder>(o);
      auto cursor = view.NewCursor(order);
      CHECK(Dump(*cursor, "") == Filtered(*db, order, f.t));
    }
  };
  f.Commit({Add(E(f.x), "s/many", Value::Long(1))});
  check_view();  // a base holding x
  f.Filler(30, 0);
  check_view();
  f.Commit({AddRef(E(f.y), "s/ref", E(f.x))});
  check_view();  // deltas holding x's datoms and a ref to it
  auto before = f.store->Latest();
  REQUIRE(before->core().since_cache->Find(before->basis_tx(), f.t)->layers() >=
          2);
  f.Commit({AddRef(E("req"), "db/excise", E(f.x))});
  check_view();
  auto db = f.store->Latest();
  const DbView view = db->View(Basis::Since(f.t));
  for (int o = 0; o < 4; ++o) {
    auto cursor = view.NewCursor(static_cast<IndexOrder>(o));
    for (cursor->Seek(""); cursor->Valid(); cursor->Next()) {
      CHECK(cursor->datom().e != f.x);
    }
  }
}

}  // namespace
}  // namespace mentat::storage
