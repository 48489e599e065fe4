#include "mentat/storage/store.h"

#include <doctest/doctest.h>

#include <chrono>
#include <thread>

#include "mentat/storage/entity_ids.h"
#include "test_support.h"

namespace mentat::storage {
namespace {

using testing::Add;
using testing::AddRef;
using testing::Attr;
using testing::Concat;
using testing::E;
using testing::Kw;
using testing::MustTransact;
using testing::Retract;
using testing::RetractEntity;
using testing::TempDir;
using testing::Tx;
using testing::ValuesOf;

[[nodiscard]] absl::Status TransactStatus(Store& store, std::vector<TxOp> ops) {
  return store.Transact(Tx(std::move(ops))).get().status();
}

void InstallSchema(Store& store) {
  MustTransact(
      store,
      Concat(
          {Attr("user/email", "db.type/string", false, "db.unique/identity"),
           Attr("user/name", "db.type/string"),
           Attr("user/nick", "db.type/string", false, "db.unique/value"),
           Attr("issue/title", "db.type/string"),
           Attr("issue/priority", "db.type/long"),
           Attr("issue/score", "db.type/double"),
           Attr("issue/state", "db.type/keyword"),
           Attr("issue/assignee", "db.type/ref"),
           Attr("issue/label", "db.type/ref", true),
           Attr("issue/comments", "db.type/ref", true, nullptr, true),
           Attr("comment/text", "db.type/string"),
           Attr("label/name", "db.type/string", false, "db.unique/identity")}));
}

TEST_CASE("a new store has the bootstrap schema and survives reopening") {
  TempDir dir;
  EntityId basis;
  {
    auto store = Store::Open(dir.path());
    REQUIRE(store.ok());
    auto db = (*store)->Latest();
    basis = db->basis_tx();
    CHECK(basis == kFirstTxId);
    const Attribute* ident = db->schema().FindAttribute("db/ident");
    REQUIRE(ident != nullptr);
    CHECK(ident->unique == Unique::kIdentity);
    CHECK(db->schema().EntityForIdent("db.type/string") == ids::kDbTypeString);
  }
  auto store = Store::Open(dir.path());
  REQUIRE(store.ok());
  CHECK((*store)->Latest()->basis_tx() == basis);
}

TEST_CASE("opening a missing store without create_if_missing fails") {
  TempDir dir;
  StoreOptions options;
  options.create_if_missing = false;
  auto store = Store::Open(dir.path() + "/nope", options);
  CHECK_FALSE(store.ok());
}

TEST_CASE("transact, tempids, and reads at the new basis") {
  TempDir dir;
  auto store = *Store::Open(dir.path());
  InstallSchema(*store);
  TxReport r =
      MustTransact(*store, {Add(E("u"), "user/email", Value::String("a@x")),
                            Add(E("u"), "user/name", Value::String("Ann")),
                            AddRef(E("i"), "issue/assignee", E("u")),
                            Add(E("i"), "issue/title", Value::String("crash")),
                            Add(E("i"), "issue/priority", Value::Long(3))});
  REQUIRE(r.tempids.contains("u"));
  REQUIRE(r.tempids.contains("i"));
  const EntityId u = r.tempids["u"], i = r.tempids["i"];
  CHECK(PartitionIndex(u) == static_cast<int>(Partition::kUser));
  CHECK(IsTxId(r.tx));
  // 5 datoms and the tx instant.
  CHECK(r.datoms.size() == 6);
  auto db = store->Latest();
  CHECK(db->basis_tx() == r.tx);
  DbView view = db->View(Basis::Current());
  CHECK(ValuesOf(view, u, "user/name") == std::vector{Value::String("Ann")});
  CHECK(ValuesOf(view, i, "issue/assignee") == std::vector{Value::Ref(u)});
  auto found = view.LookupUnique(view.schema().FindAttribute("user/email")->id,
                                 Value::String("a@x"));
  REQUIRE(found.ok());
  CHECK(*found == u);
  // Reverse refs through VAET.
  std::string prefix;
  VaetKey::EncodePrefix(u, &prefix);
  auto incoming = view.Datoms(IndexOrder::kVaet, prefix);
  REQUIRE(incoming.ok());
  REQUIRE(incoming->size() == 1);
  CHECK((*incoming)[0].e == i);
}

TEST_CASE("cardinality one replaces, and as_of and history see the past") {
  TempDir dir;
  auto store = *Store::Open(dir.path());
  InstallSchema(*store);
  TxReport r1 = MustTransact(
      *store, {Add(E("i"), "issue/state", Value::Keyword("state/open"))});
  const EntityId i = r1.tempids["i"];
  TxReport r2 = MustTransact(
      *store, {Add(E(i), "issue/state", Value::Keyword("state/closed"))});
  // The replacement retracts the old value implicitly.
  int retractions = 0;
  for (const Datom& d : r2.datoms) retractions += d.added ? 0 : 1;
  CHECK(retractions == 1);

  auto db = store->Latest();
  CHECK(ValuesOf(db->View(Basis::Current()), i, "issue/state") ==
        std::vector{Value::Keyword("state/closed")});
  CHECK(ValuesOf(db->View(Basis::AsOf(r1.tx)), i, "issue/state") ==
        std::vector{Value::Keyword("state/open")});
  CHECK(ValuesOf(db->View(Basis::AsOf(r1.tx - 1)), i, "issue/state").empty());
  CHECK(ValuesOf(db->View(Basis::Since(r1.tx)), i, "issue/state") ==
        std::vector{Value::Keyword("state/closed")});
  CHECK(ValuesOf(db->View(Basis::Since(r2.tx)), i, "issue/state").empty());

  std::string prefix;
  EavtKey::EncodePrefix(i, &prefix);
  auto history = db->View(Basis::History()).Datoms(IndexOrder::kEavt, prefix);
  REQUIRE(history.ok());
  REQUIRE(history->size() == 3);
  // Per key in tx order: closed (asserted r2); open (asserted r1,
  // retracted r2). Keys sort by value: :state/closed < :state/open.
  CHECK((*history)[0].v == Value::Keyword("state/closed"));
  CHECK((*history)[0].added);
  CHECK((*history)[1].v == Value::Keyword("state/open"));
  CHECK((*history)[1].tx == r1.tx);
  CHECK((*history)[1].added);
  CHECK((*history)[2].tx == r2.tx);
  CHECK_FALSE((*history)[2].added);

  // The same after a reopen: history is durable. (RocksDB closes when the
  // last Db handed out is released.)
  db.reset();
  store.reset();
  store = *Store::Open(dir.path());
  db = store->Latest();
  CHECK(ValuesOf(db->View(Basis::AsOf(r1.tx)), i, "issue/state") ==
        std::vector{Value::Keyword("state/open")});
}

TEST_CASE("redundant datoms are elided") {
  TempDir dir;
  auto store = *Store::Open(dir.path());
  InstallSchema(*store);
  TxReport r1 =
      MustTransact(*store, {Add(E("u"), "user/name", Value::String("Ann")),
                            AddRef(E("u"), "issue/label", E("l")),
                            Add(E("l"), "label/name", Value::String("bug"))});
  const EntityId u = r1.tempids["u"], l = r1.tempids["l"];
  TxReport r2 =
      MustTransact(*store, {Add(E(u), "user/name", Value::String("Ann")),
                            AddRef(E(u), "issue/label", E(l))});
  CHECK(r2.datoms.size() == 1);  // only the tx instant
  // Retracting what is absent is a no-op too.
  TxReport r3 =
      MustTransact(*store, {Retract(E(u), "user/name", Value::String("Bob"))});
  CHECK(r3.datoms.size() == 1);
}

TEST_CASE("one datom written twice in a transaction is one datom") {
  // The applier finds a datom again by (e, a, value) as its key encodes
  // it: -0.0 is 0.0, and a long string (held outside the Value) is its
  // text.
  TempDir dir;
  auto store = *Store::Open(dir.path());
  InstallSchema(*store);
  const std::string title(64, 't');
  TxReport r =
      MustTransact(*store, {Add(E("i"), "issue/score", Value::Double(0.0)),
                            Add(E("i"), "issue/score", Value::Double(-0.0)),
                            Add(E("i"), "issue/title", Value::String(title)),
                            Add(E("i"), "issue/title", Value::String(title))});
  CHECK(r.datoms.size() == 3);  // score, title and the tx instant
  const EntityId i = r.tempids["i"];
  absl::Status s = TransactStatus(
      *store, {Retract(E(i), "issue/title", Value::String(title)),
               Add(E(i), "issue/title", Value::String(title))});
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(s.message()).find("both asserted and retracted") !=
        std::string::npos);
}

TEST_CASE("upsert through a unique identity attribute") {
  TempDir dir;
  auto store = *Store::Open(dir.path());
  InstallSchema(*store);
  TxReport r1 =
      MustTransact(*store, {Add(E("a"), "user/email", Value::String("a@x")),
                            Add(E("a"), "user/name", Value::String("Ann"))});
  TxReport r2 =
      MustTransact(*store, {Add(E("b"), "user/email", Value::String("a@x")),
                            Add(E("b"), "user/name", Value::String("Annie"))});
  CHECK(r2.tempids["b"] == r1.tempids["a"]);
  auto view = store->Latest()->View(Basis::Current());
  CHECK(ValuesOf(view, r1.tempids["a"], "user/name") ==
        std::vector{Value::String("Annie")});
  // A tempid whose value refers to an upserted tempid resolves too.
  TxReport r3 =
      MustTransact(*store, {Add(E("c"), "user/email", Value::String("a@x")),
                            AddRef(E("i"), "issue/assignee", E("c")),
                            Add(E("i"), "issue/title", Value::String("t"))});
  CHECK(r3.tempids["c"] == r1.tempids["a"]);
}

TEST_CASE("constraint violations fail with the offending form") {
  TempDir dir;
  auto store = *Store::Open(dir.path());
  InstallSchema(*store);
  TxReport r1 =
      MustTransact(*store, {Add(E("a"), "user/nick", Value::String("ann")),
                            Add(E("b"), "user/name", Value::String("Bob"))});
  const EntityId b = r1.tempids["b"];

  SUBCASE("unique value held by another entity") {
    absl::Status s =
        TransactStatus(*store, {Add(E(b), "user/nick", Value::String("ann"))});
    CHECK(s.code() == absl::StatusCode::kFailedPrecondition);
    CHECK(std::string(s.message()).find("user/nick") != std::string::npos);
  }
  SUBCASE("two values for a cardinality-one attribute") {
    absl::Status s =
        TransactStatus(*store, {Add(E(b), "user/name", Value::String("X")),
                                Add(E(b), "user/name", Value::String("Y"))});
    CHECK(s.code() == absl::StatusCode::kInvalidArgument);
    CHECK(std::string(s.message()).find("cardinality-one") !=
          std::string::npos);
  }
  SUBCASE("wrong value type") {
    TxOp op = Add(E(b), "issue/priority", Value::String("high"));
    op.pos = SourcePos{3, 7};
    absl::Status s = TransactStatus(*store, {op});
    CHECK(s.code() == absl::StatusCode::kInvalidArgument);
    CHECK(std::string(s.message()).starts_with("line 3, column 7"));
    CHECK(std::string(s.message()).find(":db.type/long") != std::string::npos);
  }
  SUBCASE("unknown attribute") {
    absl::Status s =
        TransactStatus(*store, {Add(E(b), "user/nope", Value::Long(1))});
    CHECK(s.code() == absl::StatusCode::kInvalidArgument);
    CHECK(std::string(s.message()).find("unknown attribute :user/nope") !=
          std::string::npos);
  }
  SUBCASE("entity id never allocated") {
    absl::Status s =
        TransactStatus(*store, {Add(E(MakeEntityId(Partition::kUser, 999999)),
                                    "user/name", Value::String("x"))});
    CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  }
  SUBCASE("asserting and retracting one datom") {
    absl::Status s = TransactStatus(
        *store, {Add(E(b), "user/name", Value::String("Z")),
                 Retract(E(b), "user/name", Value::String("Z"))});
    CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  }
  SUBCASE("a lookup ref that resolves to nothing") {
    absl::Status s = TransactStatus(
        *store,
        {AddRef(E("i"), "issue/assignee",
                EntityRef::LookupRef("user/email", Value::String("no@x")))});
    CHECK(s.code() == absl::StatusCode::kInvalidArgument);
    CHECK(std::string(s.message()).find("does not resolve") !=
          std::string::npos);
  }
  // Nothing of a failed transaction is visible, and the store moves on.
  CHECK(store->Latest()->basis_tx() == r1.tx);
  MustTransact(*store, {Add(E(b), "user/name", Value::String("Bobby"))});
}

TEST_CASE("compare-and-swap") {
  TempDir dir;
  auto store = *Store::Open(dir.path());
  InstallSchema(*store);
  TxReport r =
      MustTransact(*store, {Add(E("i"), "issue/priority", Value::Long(1))});
  const EntityId i = r.tempids["i"];
  auto cas = [&](std::optional<int64_t> old, int64_t now) {
    TxOp op;
    op.kind = TxOp::Kind::kCas;
    op.e = E(i);
    op.a = EntityRef::Ident("issue/priority");
    op.v = TxValue::Scalar(Value::Long(now));
    if (old) {
      op.old = TxValue::Scalar(Value::Long(*old));
    } else {
      op.old_is_nil = true;
    }
    return TransactStatus(*store, {op});
  };
  CHECK(cas(1, 2).ok());
  absl::Status failed = cas(1, 3);
  CHECK(failed.code() == absl::StatusCode::kFailedPrecondition);
  CHECK(std::string(failed.message()).find("found 2") != std::string::npos);
  CHECK(cas(std::nullopt, 5).code() == absl::StatusCode::kFailedPrecondition);
  CHECK(ValuesOf(store->Latest()->View(Basis::Current()), i,
                 "issue/priority") == std::vector{Value::Long(2)});
}

TEST_CASE("retractEntity retracts components and references") {
  TempDir dir;
  auto store = *Store::Open(dir.path());
  InstallSchema(*store);
  TxReport r =
      MustTransact(*store, {Add(E("u"), "user/name", Value::String("Ann")),
                            Add(E("i"), "issue/title", Value::String("t")),
                            AddRef(E("i"), "issue/assignee", E("u")),
                            AddRef(E("i"), "issue/comments", E("c")),
                            Add(E("c"), "comment/text", Value::String("hi"))});
  const EntityId u = r.tempids["u"], i = r.tempids["i"], c = r.tempids["c"];
  MustTransact(*store, {RetractEntity(E(i))});
  auto view = store->Latest()->View(Basis::Current());
  std::string prefix;
  for (EntityId e : {i, c}) {
    prefix.clear();
    EavtKey::EncodePrefix(e, &prefix);
    CHECK(view.Datoms(IndexOrder::kEavt, prefix)->empty());
  }
  CHECK(ValuesOf(view, u, "user/name") == std::vector{Value::String("Ann")});
  prefix.clear();
  VaetKey::EncodePrefix(u, &prefix);
  CHECK(view.Datoms(IndexOrder::kVaet, prefix)->empty());
}

TEST_CASE("schema changes Datomic allows, and the ones it refuses") {
  TempDir dir;
  auto store = *Store::Open(dir.path());
  InstallSchema(*store);
  TxReport r =
      MustTransact(*store, {Add(E("a"), "user/name", Value::String("same")),
                            Add(E("b"), "user/name", Value::String("same")),
                            Add(E("a"), "issue/title", Value::String("x"))});
  auto alter = [&](const char* attr, const char* a, EntityRef v) {
    return TransactStatus(*store, {AddRef(Kw(attr), a, std::move(v))});
  };
  // Unique is refused while two entities share a value.
  CHECK(alter("user/name", "db/unique", Kw("db.unique/value")).code() ==
        absl::StatusCode::kFailedPrecondition);
  CHECK(alter("issue/title", "db/unique", Kw("db.unique/identity")).ok());
  CHECK(store->Latest()->schema().FindAttribute("issue/title")->unique ==
        Unique::kIdentity);
  // The value type never changes.
  CHECK(alter("issue/title", "db/valueType", Kw("db.type/long")).code() ==
        absl::StatusCode::kInvalidArgument);
  // One to many, then back while no entity has two values.
  CHECK(alter("user/name", "db/cardinality", Kw("db.cardinality/many")).ok());
  CHECK(store->Latest()->schema().FindAttribute("user/name")->many());
  MustTransact(*store,
               {Add(E(r.tempids["a"]), "user/name", Value::String("other"))});
  CHECK(alter("user/name", "db/cardinality", Kw("db.cardinality/one")).code() ==
        absl::StatusCode::kFailedPrecondition);
  // Renaming an attribute.
  CHECK(TransactStatus(*store, {Add(Kw("issue/title"), "db/ident",
                                    Value::Keyword("issue/headline"))})
            .ok());
  auto db = store->Latest();
  CHECK(db->schema().FindAttribute("issue/headline") != nullptr);
  CHECK(db->schema().FindAttribute("issue/title") == nullptr);
  // A new attribute needs a type and a cardinality.
  CHECK(TransactStatus(*store,
                       {Add(E("n"), "db/ident", Value::Keyword("x/y")),
                        AddRef(E("n"), "db/valueType", Kw("db.type/long"))})
            .code() == absl::StatusCode::kInvalidArgument);
  // Bootstrap entities are fixed.
  CHECK(alter("db/doc", "db/cardinality", Kw("db.cardinality/many")).code() ==
        absl::StatusCode::kInvalidArgument);
}

TEST_CASE("tx instants: set by the caller between the last and the clock") {
  TempDir dir;
  auto store = *Store::Open(dir.path());
  InstallSchema(*store);
  const int64_t now = std::chrono::duration_cast<std::chrono::microseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  // Within the allowed skew (10 s by default) of the transactor's clock.
  const int64_t later = now + 2'000'000;
  TxReport r = MustTransact(
      *store,
      {Add(EntityRef::TxTempId(), "db/txInstant", Value::Instant(later)),
       Add(E("u"), "user/name", Value::String("x"))});
  CHECK(r.tx_instant == later);
  CHECK(store->Latest()->basis_tx_instant() == later);
  CHECK(store->Latest()->TxAtOrBeforeInstant(later) == r.tx);
  absl::Status s = TransactStatus(
      *store,
      {Add(EntityRef::TxTempId(), "db/txInstant", Value::Instant(later - 1))});
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK_MESSAGE(s.message().find("earlier than the previous transaction's") !=
                    std::string::npos,
                s.ToString());
  // Later transactions never go back in time.
  TxReport r2 =
      MustTransact(*store, {Add(E("v"), "user/name", Value::String("y"))});
  CHECK(r2.tx_instant >= later);
  // An instant far ahead of the clock would hold every later instant there.
  const int64_t year_2999 = int64_t{32472144000} * 1000000;
  s = TransactStatus(*store, {Add(EntityRef::TxTempId(), "db/txInstant",
                                  Value::Instant(year_2999)),
                              Add(E("w"), "user/name", Value::String("z"))});
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  const bool says_why =
      s.message().find("is later than the transactor's clock") !=
          std::string::npos &&
      s.message().find("10000 ms allowed for clock skew") != std::string::npos;
  CHECK_MESSAGE(says_why, s.ToString());
  TxReport r3 =
      MustTransact(*store, {Add(E("w"), "user/name", Value::String("z"))});
  CHECK(r3.tx_instant < year_2999);
}

TEST_CASE("tx instants: a store already pinned in the future still commits") {
  TempDir dir;
  const int64_t year_2999 = int64_t{32472144000} * 1000000;
  {
    // As a store written before the skew rule existed could be.
    StoreOptions lax;
    lax.tx_instant_max_skew_ms = int64_t{1} << 50;
    auto store = *Store::Open(dir.path(), lax);
    InstallSchema(*store);
    MustTransact(*store, {Add(EntityRef::TxTempId(), "db/txInstant",
                              Value::Instant(year_2999))});
  }
  auto store = *Store::Open(dir.path());
  // Automatic instants stay in order: they keep the pinned instant.
  TxReport r =
      MustTransact(*store, {Add(E("u"), "user/name", Value::String("x"))});
  CHECK(r.tx_instant == year_2999);
  // No instant can be given until the clock passes it, and the message
  // says so.
  absl::Status s =
      TransactStatus(*store, {Add(EntityRef::TxTempId(), "db/txInstant",
                                  Value::Instant(year_2999 + 1))});
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK_MESSAGE(
      s.message().find("leave :db/txInstant out") != std::string::npos,
      s.ToString());
}

TEST_CASE("a failing transaction in a group fails alone") {
  TempDir dir;
  auto store = *Store::Open(dir.path());
  InstallSchema(*store);
  std::vector<std::future<absl::StatusOr<TxReport>>> futures;
  for (int i = 0; i < 200; ++i) {
    if (i % 10 == 3) {
      futures.push_back(store->Transact(
          Tx({Add(E("x"), "issue/priority", Value::String("bad"))})));
    } else {
      futures.push_back(store->Transact(
          Tx({Add(E("x"), "user/email", Value::String("u" + std::to_string(i))),
              Add(E("x"), "issue/priority", Value::Long(i))})));
    }
  }
  int ok = 0, failed = 0;
  for (auto& f : futures) (f.get().ok() ? ok : failed)++;
  CHECK(ok == 180);
  CHECK(failed == 20);
  const AttributeStats* st = store->Latest()->stats().Find(
      store->Latest()->schema().FindAttribute("user/email")->id);
  REQUIRE(st != nullptr);
  CHECK(st->datoms == 180);
}

TEST_CASE("a 100,000-datom transaction commits") {
  TempDir dir;
  auto store = *Store::Open(dir.path());
  InstallSchema(*store);
  std::vector<TxOp> ops;
  for (int i = 0; i < 50000; ++i) {
    std::string t = "t" + std::to_string(i);
    ops.push_back(Add(E(t.c_str()), "user/email",
                      Value::String("user" + std::to_string(i) + "@x")));
    ops.push_back(Add(E(t.c_str()), "issue/priority", Value::Long(i % 5)));
  }
  TxReport r = MustTransact(*store, std::move(ops));
  CHECK(r.datoms.size() == 100001);
  auto db = store->Latest();
  const AttributeStats* st =
      db->stats().Find(db->schema().FindAttribute("issue/priority")->id);
  REQUIRE(st != nullptr);
  CHECK(st->datoms == 50000);
  CHECK(st->distinct_values == 5);
  CHECK(st->value_counts.CountOf(Value::Long(3)) == 10000);
}

TEST_CASE("statistics track counts, distinct values, and persist") {
  TempDir dir;
  StoreOptions options;
  options.low_cardinality_limit = 3;
  EntityId prio;
  {
    auto store = *Store::Open(dir.path(), options);
    InstallSchema(*store);
    TxReport r =
        MustTransact(*store, {Add(E("a"), "issue/priority", Value::Long(1)),
                              Add(E("b"), "issue/priority", Value::Long(1)),
                              Add(E("c"), "issue/priority", Value::Long(2))});
    auto db = store->Latest();
    prio = db->schema().FindAttribute("issue/priority")->id;
    const AttributeStats* st = db->stats().Find(prio);
    CHECK(st->datoms == 3);
    CHECK(st->distinct_values == 2);
    CHECK(st->values_tracked);
    CHECK(st->value_counts.CountOf(Value::Long(1)) == 2);
    // Past the limit the per-value counts stop, distinct stays exact.
    MustTransact(*store, {Add(E("d"), "issue/priority", Value::Long(3)),
                          Add(E("e"), "issue/priority", Value::Long(4))});
    st = store->Latest()->stats().Find(prio);
    CHECK_FALSE(st->values_tracked);
    CHECK(st->distinct_values == 4);
    MustTransact(*store, {Add(E(r.tempids["c"]), "issue/priority",
                              Value::Long(1))});  // 2 disappears
    st = store->Latest()->stats().Find(prio);
    CHECK(st->distinct_values == 3);
    CHECK(st->datoms == 5);
  }
  auto store = *Store::Open(dir.path(), options);
  const AttributeStats* st = store->Latest()->stats().Find(prio);
  REQUIRE(st != nullptr);
  CHECK(st->datoms == 5);
  CHECK(st->distinct_values == 3);
  CHECK_FALSE(st->values_tracked);
}

TEST_CASE("readers see whole transactions while a writer runs") {
  TempDir dir;
  auto store = *Store::Open(dir.path());
  InstallSchema(*store);
  TxReport r =
      MustTransact(*store, {Add(E("a"), "issue/priority", Value::Long(0)),
                            Add(E("b"), "issue/priority", Value::Long(0))});
  const EntityId a = r.tempids["a"], b = r.tempids["b"];
  std::atomic<bool> done{false};
  std::atomic<int> torn{0}, reads{0};
  std::thread reader([&] {
    while (!done) {
      auto view = store->Latest()->View(Basis::Current());
      auto va = ValuesOf(view, a, "issue/priority");
      auto vb = ValuesOf(view, b, "issue/priority");
      if (va.size() != 1 || vb.size() != 1 || !(va[0] == vb[0])) torn++;
      reads++;
    }
  });
  for (int i = 1; i <= 300; ++i) {
    MustTransact(*store, {Add(E(a), "issue/priority", Value::Long(i)),
                          Add(E(b), "issue/priority", Value::Long(i))});
  }
  done = true;
  reader.join();
  CHECK(reads > 0);
  CHECK(torn == 0);
}

}  // namespace
}  // namespace mentat::storage
