// Db::With: a speculative transaction writes nothing, reports what the
// commit would, and its value reads like the committed one.

#include <algorithm>

#include "doctest/doctest.h"
#include "internal/speculative_layer.h"
#include "mentat/storage/db.h"
#include "mentat/storage/store.h"
#include "mentat/storage/tx_log.h"
#include "test_support.h"

namespace mentat::storage {
namespace {

using testing::Add;
using testing::AddRef;
using testing::Attr;
using testing::E;
using testing::Kw;
using testing::Retract;
using testing::RetractEntity;
using testing::TempDir;
using testing::Tx;

constexpr IndexOrder kOrders[] = {IndexOrder::kEavt, IndexOrder::kAevt,
                                  IndexOrder::kAvet, IndexOrder::kVaet};

std::unique_ptr<Store> OpenStore(const TempDir& dir) {
  StoreOptions options;
  options.create_if_missing = true;
  auto store = Store::Open(dir.path(), options);
  REQUIRE(store.ok());
  return *std::move(store);
}

void Commit(Store& store, std::vector<TxOp> ops) {
  auto report = store.Transact(Tx(std::move(ops))).get();
  REQUIRE_MESSAGE(report.ok(), report.status().ToString());
}

// Every datom of `view` in `order`, without the :db/txInstant of `tx`
// (a speculative transaction's instant is the clock's at the call).
std::vector<Datom> AllDatoms(const DbView& view, IndexOrder order,
                             EntityId tx) {
  auto datoms = view.Datoms(order, "");
  REQUIRE(datoms.ok());
  std::vector<Datom> out;
  for (Datom& d : *datoms) {
    if (d.e == tx && d.a == ids::kDbTxInstant) continue;
    out.push_back(std::move(d));
  }
  return out;
}

std::vector<Datom> WithoutInstant(std::vector<Datom> datoms, EntityId tx) {
  std::erase_if(datoms, [&](const Datom& d) {
    return d.e == tx && d.a == ids::kDbTxInstant;
  });
  return datoms;
}

size_t LogEntries(const Db& db) {
  size_t n = 0;
  REQUIRE(ReadTxLog(db, 0, 0, [&](EntityId, const std::vector<Datom>&) {
            ++n;
            return true;
          }).ok());
  return n;
}

// A store with people, a unique email, a ref and a component.
std::unique_ptr<Store> PeopleStore(const TempDir& dir, EntityId* alice,
                                   EntityId* bob) {
  auto store = OpenStore(dir);
  std::vector<TxOp> schema =
      Attr("person/email", "db.type/string", false, "db.unique/identity");
  for (auto& ops : {Attr("person/name", "db.type/string"),
                    Attr("person/friend", "db.type/ref", true),
                    Attr("person/tag", "db.type/keyword", true),
                    Attr("person/seen", "db.type/long")}) {
    schema.insert(schema.end(), ops.begin(), ops.end());
  }
  // History keeps nothing of it: a speculative history must not either.
  schema.push_back(
      Add(E("attr-person/seen"), "db/noHistory", Value::Boolean(true)));
  Commit(*store, std::move(schema));
  auto report =
      store
          ->Transact(Tx({Add(E("a"), "person/email", Value::String("alice@x")),
                         Add(E("a"), "person/name", Value::String("Alice")),
                         Add(E("b"), "person/email", Value::String("bob@x")),
                         Add(E("b"), "person/name", Value::String("Bob")),
                         AddRef(E("a"), "person/friend", E("b")),
                         Add(E("a"), "person/tag", Value::Keyword("admin")),
                         Add(E("a"), "person/seen", Value::Long(1))}))
          .get();
  REQUIRE(report.ok());
  *alice = report->tempids.at("a");
  *bob = report->tempids.at("b");
  return store;
}

// Tx-data touching every kind of change: an upsert, a new entity with a
// ref, a cardinality-one replacement (one of a :db/noHistory attribute), a
// retraction, a retracted ref.
TxRequest MixedTx(EntityId alice, EntityId bob) {
  return Tx({Add(E("u"), "person/email", Value::String("alice@x")),
             Add(E("u"), "person/name", Value::String("Alice B.")),
             Add(E("c"), "person/email", Value::String("carol@x")),
             AddRef(E("c"), "person/friend", E(alice)),
             Retract(E(alice), "person/tag", Value::Keyword("admin")),
             Add(E(alice), "person/tag", Value::Keyword("owner")),
             Add(E(alice), "person/seen", Value::Long(2)),
             RetractEntity(E(bob))});
}

TEST_CASE("with: a dry run writes nothing and reports what the commit does") {
  TempDir dir;
  EntityId alice = 0, bob = 0;
  auto store = PeopleStore(dir, &alice, &bob);
  std::shared_ptr<const Db> before = store->Latest();
  const size_t log_before = LogEntries(*before);

  auto with = before->With(MixedTx(alice, bob));
  REQUIRE_MESSAGE(with.ok(), with.status().ToString());
  const TxReport& spec = with->report;
  CHECK(spec.basis_before == before->basis_tx());
  CHECK(spec.tempids.at("u") == alice);

  // Nothing moved: the latest value, the log, the counters (the commit
  // below gets the same ids).
  CHECK(store->Latest() == before);
  CHECK(LogEntries(*store->Latest()) == log_before);
  auto committed = store->Transact(MixedTx(alice, bob)).get();
  REQUIRE(committed.ok());
  CHECK(committed->tx == spec.tx);
  CHECK(committed->basis_before == spec.basis_before);
  CHECK(committed->tempids == spec.tempids);
  CHECK(WithoutInstant(committed->datoms, spec.tx) ==
        WithoutInstant(spec.datoms, spec.tx));
  CHECK(LogEntries(*store->Latest()) == log_before + 1);

  // The speculative value reads as the committed one, in every order and
  // basis.
  std::shared_ptr<const Db> after = store->Latest();
  const std::shared_ptr<const Db>& value = with->db_after;
  CHECK(value->speculative());
  CHECK(value->basis_tx() == after->basis_tx());
  for (IndexOrder order : kOrders) {
    CAPTURE(IndexOrderName(order));
    CHECK(AllDatoms(value->View(Basis::Current()), order, spec.tx) ==
          AllDatoms(after->View(Basis::Current()), order, spec.tx));
    CHECK(AllDatoms(value->View(Basis::History()), order, spec.tx) ==
          AllDatoms(after->View(Basis::History()), order, spec.tx));
    CHECK(AllDatoms(value->View(Basis::Since(before->basis_tx())), order,
                    spec.tx) ==
          AllDatoms(after->View(Basis::Since(before->basis_tx())), order,
                    spec.tx));
    CHECK(AllDatoms(value->View(Basis::AsOf(before->basis_tx())), order, 0) ==
          AllDatoms(before->View(Basis::Current()), order, 0));
  }
  // Statistics follow the transaction.
  const Attribute* email = value->schema().FindAttribute("person/email");
  REQUIRE(email != nullptr);
  CHECK(value->stats().Find(email->id)->datoms ==
        after->stats().Find(email->id)->datoms);
  CHECK(value->View(Basis::Current()).EntityColumnOf(email->id) == nullptr);
}

TEST_CASE("with: a retraction hides, an assertion shows, by prefix") {
  TempDir dir;
  EntityId alice = 0, bob = 0;
  auto store = PeopleStore(dir, &alice, &bob);
  auto with = store->Latest()->With(
      Tx({Retract(E(alice), "person/name", Value::String("Alice")),
          Add(E(bob), "person/tag", Value::Keyword("new"))}));
  REQUIRE(with.ok());
  DbView view = with->db_after->View(Basis::Current());
  CHECK(testing::ValuesOf(view, alice, "person/name").empty());
  CHECK(testing::ValuesOf(view, bob, "person/tag") ==
        std::vector<Value>{Value::Keyword("new")});
  // The committed value is unchanged.
  DbView latest = store->Latest()->View(Basis::Current());
  CHECK(testing::ValuesOf(latest, alice, "person/name") ==
        std::vector<Value>{Value::String("Alice")});
  CHECK(testing::ValuesOf(latest, bob, "person/tag").empty());
  // Lookups by value see the change.
  const Attribute* email = view.schema().FindAttribute("person/email");
  auto found = view.LookupUnique(email->id, Value::String("bob@x"));
  REQUIRE(found.ok());
  CHECK(*found == std::optional<EntityId>(bob));
}

TEST_CASE("with: chains, with schema changes, ids past the last one") {
  TempDir dir;
  EntityId alice = 0, bob = 0;
  auto store = PeopleStore(dir, &alice, &bob);
  std::shared_ptr<const Db> base = store->Latest();
  auto first = base->With(Tx(Attr("person/age", "db.type/long")));
  REQUIRE_MESSAGE(first.ok(), first.status().ToString());
  CHECK(first->db_after->schema().FindAttribute("person/age") != nullptr);
  CHECK(base->schema().FindAttribute("person/age") == nullptr);

  auto second =
      first->db_after->With(Tx({Add(E("d"), "person/age", Value::Long(40)),
                                Add(E(alice), "person/age", Value::Long(30))}));
  REQUIRE_MESSAGE(second.ok(), second.status().ToString());
  CHECK(second->report.tx > first->report.tx);
  CHECK(second->report.basis_before == first->report.tx);
  const EntityId d = second->report.tempids.at("d");
  CHECK(d > bob);
  DbView view = second->db_after->View(Basis::Current());
  CHECK(testing::ValuesOf(view, d, "person/age") ==
        std::vector<Value>{Value::Long(40)});
  CHECK(testing::ValuesOf(view, alice, "person/name") ==
        std::vector<Value>{Value::String("Alice")});
  // as_of between the two speculative transactions: the first only.
  DbView between = second->db_after->View(Basis::AsOf(first->report.tx));
  CHECK(between.schema().FindAttribute("person/age") != nullptr);
  CHECK(testing::ValuesOf(between, alice, "person/age").empty());
  // The store allocates as if neither happened.
  auto real =
      store->Transact(Tx({Add(E("z"), "person/name", Value::String("Zed"))}))
          .get();
  REQUIRE(real.ok());
  CHECK(real->tx == first->report.tx);
}

TEST_CASE("with: a failing transaction fails as its commit would") {
  TempDir dir;
  EntityId alice = 0, bob = 0;
  auto store = PeopleStore(dir, &alice, &bob);
  std::shared_ptr<const Db> base = store->Latest();
  auto conflict =
      base->With(Tx({Add(E(bob), "person/email", Value::String("alice@x"))}));
  CHECK(conflict.status().code() == absl::StatusCode::kFailedPrecondition);
  auto unknown =
      base->With(Tx({Add(E("x"), "person/nope", Value::String("?"))}));
  CHECK(unknown.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(store->Latest() == base);
}

TEST_CASE("with: the layer cursor merges in key order") {
  TempDir dir;
  EntityId alice = 0, bob = 0;
  auto store = PeopleStore(dir, &alice, &bob);
  auto with = store->Latest()->With(
      Tx({Add(E(alice), "person/tag", Value::Keyword("b")),
          Add(E(alice), "person/tag", Value::Keyword("z")),
          Retract(E(alice), "person/tag", Value::Keyword("admin"))}));
  REQUIRE(with.ok());
  DbView view = with->db_after->View(Basis::Current());
  CHECK(testing::ValuesOf(view, alice, "person/tag") ==
        std::vector<Value>{Value::Keyword("b"), Value::Keyword("z")});
  // SeekWithin past the first value.
  const Attribute* tag = view.schema().FindAttribute("person/tag");
  std::string prefix, target;
  EavtKey::EncodePrefix(alice, tag->id, &prefix);
  EavtKey::Encode(alice, tag->id, Value::Keyword("c"), &target);
  auto cursor = view.NewCursor(IndexOrder::kEavt);
  cursor->Seek(prefix);
  REQUIRE(cursor->Valid());
  cursor->SeekWithin(target);
  REQUIRE(cursor->Valid());
  CHECK(cursor->datom().v == Value::Keyword("z"));
  cursor->Next();
  CHECK_FALSE(cursor->Valid());
  CHECK(cursor->status().ok());
}

}  // namespace
}  // namespace mentat::storage
