// Composite tuples (:db/tupleAttrs): the transactor keeps them equal to
// their members' values through every kind of change, uniqueness holds
// on them, upserts and lookup refs go through them, and definitions that
// cannot work are refused.

#include <doctest/doctest.h>

#include "mentat/storage/keys.h"
#include "mentat/storage/schema.h"
#include "mentat/storage/store.h"
#include "mentat/storage/value_codec.h"
#include "test_support.h"

namespace mentat::storage {
namespace {

using testing::Add;
using testing::AddRef;
using testing::Attr;
using testing::Concat;
using testing::E;
using testing::Kw;
using testing::Retract;
using testing::RetractEntity;
using testing::TempDir;
using testing::Tx;
using testing::ValuesOf;
using testing::VectorImportSource;

// Ops that install composite `ident` over `members`.
std::vector<TxOp> Composite(const char* ident, std::vector<const char*> members,
                            const char* unique = nullptr, bool many = false) {
  std::vector<TxOp> ops = Attr(ident, "db.type/tuple", many, unique);
  std::vector<std::optional<Value>> names;
  for (const char* m : members) names.push_back(Value::Keyword(m));
  TxOp op = Add(E((std::string("attr-") + ident).c_str()), "db/ident",
                MakeTuple(names));
  op.a = EntityRef::Id(ids::kDbTupleAttrs);
  ops.push_back(std::move(op));
  return ops;
}

// r/a long, r/b string, r/c ref; r/a+b over [r/a r/b] (unique identity),
// r/b+c over [r/b r/c] (no uniqueness), r/note a plain string.
std::vector<TxOp> RegSchema() {
  return Concat({Attr("r/a", "db.type/long"), Attr("r/b", "db.type/string"),
                 Attr("r/c", "db.type/ref"), Attr("r/note", "db.type/string"),
                 Composite("r/a+b", {"r/a", "r/b"}, "db.unique/identity"),
                 Composite("r/b+c", {"r/b", "r/c"})});
}

absl::StatusOr<TxReport> Run(Store& store, std::vector<TxOp> ops) {
  return store.Transact(Tx(std::move(ops))).get();
}

Value T(std::optional<Value> a, std::optional<Value> b) {
  return MakeTuple({std::move(a), std::move(b)});
}

std::optional<Value> Long(int64_t n) { return Value::Long(n); }
std::optional<Value> Str(const char* s) { return Value::String(s); }
constexpr std::nullopt_t kNil = std::nullopt;

void CheckRefused(Store& store, std::vector<TxOp> ops, absl::StatusCode code,
                  const std::string& what) {
  const EntityId basis = store.Latest()->basis_tx();
  absl::Status s = Run(store, std::move(ops)).status();
  CHECK_MESSAGE(s.code() == code, s.ToString());
  CHECK_MESSAGE(s.message().find(what) != std::string::npos, s.ToString());
  CHECK(store.Latest()->basis_tx() == basis);
}

std::vector<Value> Now(Store& store, EntityId e, const char* attr) {
  return ValuesOf(store.Latest()->View(Basis::Current()), e, attr);
}

TEST_CASE("composite tuples follow every change of their members") {
  TempDir dir;
  auto store = *Store::Open(dir.path());
  REQUIRE(Run(*store, RegSchema()).ok());

  auto r1 = Run(*store, {Add(E("x"), "r/a", Value::Long(1))});
  REQUIRE_MESSAGE(r1.ok(), r1.status().ToString());
  const EntityId x = r1->tempids.at("x");
  CHECK(Now(*store, x, "r/a+b") == std::vector<Value>{T(Long(1), kNil)});
  CHECK(Now(*store, x, "r/b+c").empty());  // no member of it is there
  // The composite's datom is in the transaction's report (and its log).
  const EntityId ab = store->Latest()->schema().FindAttribute("r/a+b")->id;
  bool reported = false;
  for (const Datom& d : r1->datoms) reported |= d.e == x && d.a == ab;
  CHECK(reported);

  auto r2 = Run(*store, {Add(E(x), "r/b", Value::String("p"))});
  REQUIRE(r2.ok());
  CHECK(Now(*store, x, "r/a+b") == std::vector<Value>{T(Long(1), Str("p"))});
  CHECK(Now(*store, x, "r/b+c") == std::vector<Value>{T(Str("p"), kNil)});

  REQUIRE(Run(*store, {Add(E(x), "r/a", Value::Long(2))}).ok());
  CHECK(Now(*store, x, "r/a+b") == std::vector<Value>{T(Long(2), Str("p"))});
  CHECK(Now(*store, x, "r/b+c") == std::vector<Value>{T(Str("p"), kNil)});

  // A member retracted: nil in its place; every member gone: no value.
  REQUIRE(Run(*store, {Retract(E(x), "r/a", Value::Long(2))}).ok());
  CHECK(Now(*store, x, "r/a+b") == std::vector<Value>{T(kNil, Str("p"))});
  REQUIRE(Run(*store, {Retract(E(x), "r/b", Value::String("p"))}).ok());
  CHECK(Now(*store, x, "r/a+b").empty());
  CHECK(Now(*store, x, "r/b+c").empty());

  // as_of shows each composite as it was.
  auto then = store->Latest()->View(Basis::AsOf(r2->tx));
  CHECK(ValuesOf(then, x, "r/a+b") == std::vector<Value>{T(Long(1), Str("p"))});
  CHECK(ValuesOf(then, x, "r/b+c") == std::vector<Value>{T(Str("p"), kNil)});
  auto first = store->Latest()->View(Basis::AsOf(r1->tx));
  CHECK(ValuesOf(first, x, "r/a+b") == std::vector<Value>{T(Long(1), kNil)});
}

TEST_CASE("composite tuples: refs, retractEntity and shared members") {
  TempDir dir;
  auto store = *Store::Open(dir.path());
  REQUIRE(Run(*store, RegSchema()).ok());
  auto r = Run(*store, {Add(E("z"), "r/note", Value::String("target")),
                        Add(E("y"), "r/a", Value::Long(7)),
                        Add(E("y"), "r/b", Value::String("q")),
                        AddRef(E("y"), "r/c", E("z"))});
  REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  const EntityId y = r->tempids.at("y"), z = r->tempids.at("z");
  // A ref element is the entity id as a long.
  CHECK(Now(*store, y, "r/b+c") == std::vector<Value>{T(Str("q"), Long(z))});
  CHECK(Now(*store, y, "r/a+b") == std::vector<Value>{T(Long(7), Str("q"))});

  // Retracting the referenced entity retracts the ref, and so the
  // composite loses that element.
  REQUIRE(Run(*store, {RetractEntity(E(z))}).ok());
  CHECK(Now(*store, y, "r/b+c") == std::vector<Value>{T(Str("q"), kNil)});

  // One change of a shared member updates both composites.
  REQUIRE(Run(*store, {Add(E(y), "r/b", Value::String("s"))}).ok());
  CHECK(Now(*store, y, "r/b+c") == std::vector<Value>{T(Str("s"), kNil)});
  CHECK(Now(*store, y, "r/a+b") == std::vector<Value>{T(Long(7), Str("s"))});

  REQUIRE(Run(*store, {RetractEntity(E(y))}).ok());
  CHECK(Now(*store, y, "r/a+b").empty());
  CHECK(Now(*store, y, "r/b+c").empty());
}

TEST_CASE("composite tuples: uniqueness, upserts and lookup refs") {
  TempDir dir;
  auto store = *Store::Open(dir.path());
  REQUIRE(Run(*store,
              Concat({RegSchema(), Attr("v/a", "db.type/long"),
                      Attr("v/b", "db.type/long"),
                      Composite("v/a+b", {"v/a", "v/b"}, "db.unique/value")}))
              .ok());
  auto r = Run(*store, {Add(E("x"), "r/a", Value::Long(1)),
                        Add(E("x"), "r/b", Value::String("p"))});
  REQUIRE(r.ok());
  const EntityId x = r->tempids.at("x");

  // Another entity making the same composite, in one transaction or two.
  CheckRefused(*store,
               {Add(E("w"), "r/a", Value::Long(1)),
                Add(E("w"), "r/b", Value::String("p"))},
               absl::StatusCode::kFailedPrecondition,
               "is already held by entity");
  CheckRefused(
      *store,
      {Add(E("u"), "v/a", Value::Long(1)), Add(E("u"), "v/b", Value::Long(2)),
       Add(E("w"), "v/a", Value::Long(1)), Add(E("w"), "v/b", Value::Long(2))},
      absl::StatusCode::kFailedPrecondition, "unique conflict");
  // nil elements are equal too (as in Datomic).
  REQUIRE(Run(*store, {Add(E("u"), "v/a", Value::Long(5))}).ok());
  CheckRefused(*store, {Add(E("w"), "v/a", Value::Long(5))},
               absl::StatusCode::kFailedPrecondition, ":v/a+b [5 nil]");

  // An upsert through the unique identity composite: the tempid becomes x.
  auto up = Run(*store, {Add(E("t"), "r/a+b", T(Long(1), Str("p"))),
                         Add(E("t"), "r/a", Value::Long(1)),
                         Add(E("t"), "r/b", Value::String("p")),
                         Add(E("t"), "r/note", Value::String("upserted"))});
  REQUIRE_MESSAGE(up.ok(), up.status().ToString());
  CHECK(up->tempids.at("t") == x);
  CHECK(Now(*store, x, "r/note") ==
        std::vector<Value>{Value::String("upserted")});
  // A new entity may give its composite too, with the value its members
  // make.
  auto fresh = Run(*store, {Add(E("n"), "r/a+b", T(Long(2), Str("p"))),
                            Add(E("n"), "r/a", Value::Long(2)),
                            Add(E("n"), "r/b", Value::String("p"))});
  REQUIRE_MESSAGE(fresh.ok(), fresh.status().ToString());
  CHECK(fresh->tempids.at("n") != x);

  // A lookup ref through the composite.
  auto looked =
      Run(*store, {Add(EntityRef::LookupRef("r/a+b", T(Long(1), Str("p"))),
                       "r/note", Value::String("by lookup ref"))});
  REQUIRE_MESSAGE(looked.ok(), looked.status().ToString());
  CHECK(Now(*store, x, "r/note") ==
        std::vector<Value>{Value::String("by lookup ref")});

  // Other writes of a composite are refused, and change nothing.
  CheckRefused(*store, {Add(E(x), "r/a+b", T(Long(9), Str("p")))},
               absl::StatusCode::kInvalidArgument,
               "its members (:db/tupleAttrs [:r/a :r/b]) make [1 \"p\"]");
  CheckRefused(*store, {Add(E("k"), "r/a+b", T(Long(3), Str("p")))},
               absl::StatusCode::kInvalidArgument, "make no value");
  CheckRefused(*store, {Retract(E(x), "r/a+b", T(Long(1), Str("p")))},
               absl::StatusCode::kInvalidArgument,
               "that the transactor maintains: tx-data cannot retract it");
  CheckRefused(*store, {Add(E(x), "r/a+b", T(Str("p"), Long(1)))},
               absl::StatusCode::kInvalidArgument,
               "position 1 of :r/a+b takes :db.type/long");
  CHECK(Now(*store, x, "r/a+b") == std::vector<Value>{T(Long(1), Str("p"))});
}

TEST_CASE("composite tuples: definitions that cannot work are refused") {
  TempDir dir;
  auto store = *Store::Open(dir.path());
  REQUIRE(Run(*store, Concat({Attr("d/a", "db.type/long"),
                              Attr("d/b", "db.type/string"),
                              Attr("d/many", "db.type/long", true)}))
              .ok());
  const auto kBad = absl::StatusCode::kInvalidArgument;
  CheckRefused(*store, Composite("d/x", {"d/a", "d/none"}), kBad,
               ":d/x: :db/tupleAttrs names :d/none, which is no attribute");
  CheckRefused(*store, Composite("d/x", {"d/a", "d/many"}), kBad,
               ":d/many, of cardinality many");
  CheckRefused(*store, Composite("d/x", {"d/a", "d/a"}), kBad,
               ":db/tupleAttrs names :d/a, twice");
  CheckRefused(*store, Composite("d/x", {"d/a"}), kBad, "has 1 element");
  CheckRefused(*store, Composite("d/x", {"d/a", "d/b"}, nullptr, true), kBad,
               "a composite tuple (:db/tupleAttrs) is cardinality one");
  // Members installed in the same transaction are fine.
  REQUIRE(Run(*store, Concat({Attr("d/c", "db.type/long"),
                              Composite("d/a+c", {"d/a", "d/c"})}))
              .ok());
  CheckRefused(*store, Composite("d/x", {"d/a", "d/a+c"}), kBad,
               ":d/a+c, a tuple attribute");
  // An installed composite keeps its definition and its members.
  TxOp change = Add(Kw("d/a+c"), "db/ident",
                    MakeTuple({Value::Keyword("d/c"), Value::Keyword("d/a")}));
  change.a = EntityRef::Id(ids::kDbTupleAttrs);
  CheckRefused(*store, {change}, kBad, "cannot change the tuple definition");
  CheckRefused(*store, {Add(Kw("d/c"), "db/ident", Value::Keyword("d/c2"))},
               kBad, "cannot rename attribute :d/c: it is a member of");
  CheckRefused(*store,
               {AddRef(Kw("d/c"), "db/cardinality", Kw("db.cardinality/many"))},
               kBad, "cannot make cardinality many attribute :d/c");
  // The composite itself may be renamed.
  REQUIRE(
      Run(*store, {Add(Kw("d/a+c"), "db/ident", Value::Keyword("d/ac"))}).ok());
}

TEST_CASE("composite tuples: installed over data, filled by re-asserting") {
  TempDir dir;
  auto store = *Store::Open(dir.path());
  REQUIRE(Run(*store, Concat({Attr("f/a", "db.type/long"),
                              Attr("f/b", "db.type/long")}))
              .ok());
  auto r = Run(*store, {Add(E("x"), "f/a", Value::Long(1)),
                        Add(E("x"), "f/b", Value::Long(2))});
  REQUIRE(r.ok());
  const EntityId x = r->tempids.at("x");
  REQUIRE(Run(*store, Composite("f/a+b", {"f/a", "f/b"})).ok());
  CHECK(Now(*store, x, "f/a+b").empty());  // no backfill, as in Datomic
  // Asserting a member's current value again computes the composite.
  auto again = Run(*store, {Add(E(x), "f/a", Value::Long(1))});
  REQUIRE(again.ok());
  CHECK(Now(*store, x, "f/a+b") == std::vector<Value>{T(Long(1), Long(2))});
}

TEST_CASE("composite tuples: a bulk import maintains them as Transact does") {
  TempDir a_dir, b_dir;
  auto transacted = *Store::Open(a_dir.path());
  auto imported = *Store::Open(b_dir.path());
  std::vector<TxRequest> txs = {
      Tx(RegSchema()),
      Tx({Add(E("x"), "r/a", Value::Long(1)),
          Add(E("x"), "r/b", Value::String("p"))}),
      Tx({Add(EntityRef::LookupRef("r/a+b", T(Long(1), Str("p"))), "r/a",
              Value::Long(2))}),
      Tx({Add(E("y"), "r/b", Value::String("q"))})};
  for (const TxRequest& tx : txs) {
    REQUIRE(transacted->Transact(TxRequest(tx)).get().ok());
  }
  VectorImportSource source(txs);
  auto report = imported->Import(&source);
  REQUIRE_MESSAGE(report.ok(), report.status().ToString());
  for (Store* s : {transacted.get(), imported.get()}) {
    DbView view = s->Latest()->View(Basis::Current());
    const Attribute* ab = view.schema().FindAttribute("r/a+b");
    REQUIRE(ab != nullptr);
    std::string prefix;
    AvetKey::EncodePrefix(ab->id, &prefix);
    auto datoms = view.Datoms(IndexOrder::kAvet, prefix);
    REQUIRE(datoms.ok());
    REQUIRE(datoms->size() == 2);
    CHECK((*datoms)[0].v == T(kNil, Str("q")));
    CHECK((*datoms)[1].v == T(Long(2), Str("p")));
  }
}

}  // namespace
}  // namespace mentat::storage
