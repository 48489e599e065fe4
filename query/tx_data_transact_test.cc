// tx-data text through the whole write path: ParseTxData, then the
// transactor. Checks that the parser's forms mean what Datomic says once
// they are applied (the parser's own tests check the forms alone).

#include <doctest/doctest.h>

#include "mentat/query/tx_data_parser.h"
#include "mentat/storage/keys.h"
#include "testing/store_fixture.h"

namespace mentat::query {
namespace {

using storage::Basis;
using storage::DbView;
using storage::EntityId;
using storage::Value;
using testing::StoreFixture;

[[nodiscard]] absl::StatusOr<storage::TxReport> TransactEdn(
    StoreFixture& f, std::string_view edn) {
  auto request = ParseTxData(edn);
  if (!request.ok()) return request.status();
  return f.store().Transact(std::move(*request)).get();
}

std::vector<Value> ValuesOf(const DbView& view, EntityId e, const char* attr) {
  std::vector<Value> out;
  const storage::Attribute* a = view.schema().FindAttribute(attr);
  if (a == nullptr) return out;
  std::string prefix;
  storage::EavtKey::EncodePrefix(e, a->id, &prefix);
  auto datoms = view.Datoms(storage::IndexOrder::kEavt, prefix);
  if (datoms.ok()) {
    for (const auto& d : *datoms) out.push_back(d.v);
  }
  return out;
}

constexpr char kSchema[] = R"([
  {:db/ident :user/email :db/valueType :db.type/string
   :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
  {:db/ident :user/name :db/valueType :db.type/string
   :db/cardinality :db.cardinality/one}
  {:db/ident :issue/title :db/valueType :db.type/string
   :db/cardinality :db.cardinality/one}
  {:db/ident :issue/assignee :db/valueType :db.type/ref
   :db/cardinality :db.cardinality/one}
  {:db/ident :issue/label :db/valueType :db.type/ref
   :db/cardinality :db.cardinality/many}
  {:db/ident :issue/comments :db/valueType :db.type/ref
   :db/cardinality :db.cardinality/many :db/isComponent true}
  {:db/ident :comment/text :db/valueType :db.type/string
   :db/cardinality :db.cardinality/one}
  {:db/ident :label/name :db/valueType :db.type/string
   :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
  {:db/ident :tx/source :db/valueType :db.type/string
   :db/cardinality :db.cardinality/one}
  {:db/ident :issue/state :db/valueType :db.type/ref
   :db/cardinality :db.cardinality/one}
  {:db/ident :state/open}
  {:db/ident :state/closed}])";

TEST_CASE("tx-data: schema as maps, then maps, lookup refs and tx metadata") {
  StoreFixture f;
  REQUIRE(f.open_status().ok());
  auto schema = TransactEdn(f, kSchema);
  REQUIRE_MESSAGE(schema.ok(), schema.status().ToString());
  auto db = f.store().Latest();
  REQUIRE(db->schema().FindAttribute("issue/comments") != nullptr);
  CHECK(db->schema().FindAttribute("issue/comments")->is_component);
  CHECK(db->schema().EntityForIdent("state/open").has_value());

  // Lookup refs resolve against the database before the transaction, as
  // in Datomic, so the label they name must exist already.
  auto labels = TransactEdn(f, R"([{:label/name "bug"}])");
  REQUIRE_MESSAGE(labels.ok(), labels.status().ToString());
  auto same_tx = TransactEdn(
      f,
      R"([{:label/name "new"} [:db/add "x" :issue/label [:label/name "new"]]])");
  CHECK_FALSE(same_tx.ok());
  CHECK(std::string(same_tx.status().message()).find("<map entity>") ==
        std::string::npos);

  auto r = TransactEdn(f, R"([
    {:db/id "ann" :user/email "ann@x" :user/name "Ann"}
    {:db/id "l1" :label/name "bug"}
    {:issue/title "crash" :issue/assignee "ann" :issue/state :state/open
     :issue/label ["l1" [:label/name "bug"]]
     :issue/comments [{:comment/text "first"} {:comment/text "second"}]}
    {:db/id "datomic.tx" :tx/source "test"}])");
  REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  const EntityId ann = r->tempids.at("ann");
  for (const auto& [name, id] : r->tempids) {
    CHECK_FALSE(IsGeneratedTempId(name));
  }
  db = f.store().Latest();
  DbView view = db->View(Basis::Current());
  CHECK(ValuesOf(view, r->tx, "tx/source") ==
        std::vector{Value::String("test")});
  // The issue: found through VAET from its assignee.
  std::string prefix;
  storage::VaetKey::EncodePrefix(ann, &prefix);
  auto incoming = view.Datoms(storage::IndexOrder::kVaet, prefix);
  REQUIRE(incoming.ok());
  REQUIRE(incoming->size() == 1);
  const EntityId issue = (*incoming)[0].e;
  CHECK(ValuesOf(view, issue, "issue/label").size() == 1);  // same label twice
  CHECK(ValuesOf(view, issue, "issue/comments").size() == 2);
  CHECK(ValuesOf(view, issue, "issue/state") ==
        std::vector{Value::Ref(*db->schema().EntityForIdent("state/open"))});

  // Upsert by a map without :db/id, a reverse ref, and retractEntity of a
  // component owner.
  auto r2 = TransactEdn(f, R"([
    {:user/email "ann@x" :user/name "Annie"}
    {:db/id "bob" :user/email "bob@x" :issue/_assignee [:issue/title "none"]}])");
  CHECK_FALSE(r2.ok());  // :issue/title is not unique: a bad lookup ref
  CHECK(std::string(r2.status().message()).find("not unique") !=
        std::string::npos);
  r2 = TransactEdn(f, R"([{:user/email "ann@x" :user/name "Annie"}])");
  REQUIRE_MESSAGE(r2.ok(), r2.status().ToString());
  view = f.store().Latest()->View(Basis::Current());
  CHECK(ValuesOf(view, ann, "user/name") ==
        std::vector{Value::String("Annie")});

  const std::string retract =
      "[[:db/retractEntity " + std::to_string(issue) + "]]";
  REQUIRE(TransactEdn(f, retract).ok());
  view = f.store().Latest()->View(Basis::Current());
  CHECK(ValuesOf(view, issue, "issue/title").empty());
  prefix.clear();
  storage::AevtKey::EncodePrefix(
      view.schema().FindAttribute("comment/text")->id, &prefix);
  CHECK(view.Datoms(storage::IndexOrder::kAevt, prefix)->empty());
}

TEST_CASE("tx-data: errors name the form and its position") {
  StoreFixture f;
  REQUIRE(TransactEdn(f, kSchema).ok());
  auto bad_type = TransactEdn(f, "[\n  [:db/add \"x\" :user/name 42]]");
  REQUIRE_FALSE(bad_type.ok());
  CHECK(bad_type.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(
      std::string(bad_type.status().message()).starts_with("line 2, column 3"));
  auto unknown = TransactEdn(f, "[{:user/nope 1}]");
  REQUIRE_FALSE(unknown.ok());
  CHECK(std::string(unknown.status().message()).find(":user/nope") !=
        std::string::npos);
  auto cas = TransactEdn(
      f,
      "[[:db/add \"a\" :user/email \"a@x\"] [:db/add \"a\" :user/name \"A\"]]");
  REQUIRE(cas.ok());
  auto failed = TransactEdn(
      f, "[[:db/cas [:user/email \"a@x\"] :user/name \"B\" \"C\"]]");
  CHECK(failed.status().code() == absl::StatusCode::kFailedPrecondition);
  auto nested = TransactEdn(f, "[{:issue/assignee {:user/name \"no id\"}}]");
  CHECK(nested.status().code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("tx-data: :db/noHistory keeps no history") {
  StoreFixture f;
  REQUIRE(TransactEdn(f, R"([{:db/ident :s/hits :db/valueType :db.type/long
                              :db/cardinality :db.cardinality/one
                              :db/noHistory true}])")
              .ok());
  auto r1 = TransactEdn(f, R"([{:db/id "c" :s/hits 1}])");
  REQUIRE(r1.ok());
  const EntityId c = r1->tempids.at("c");
  REQUIRE(
      TransactEdn(f, "[[:db/add " + std::to_string(c) + " :s/hits 2]]").ok());
  auto db = f.store().Latest();
  std::string prefix;
  storage::EavtKey::EncodePrefix(c, &prefix);
  auto history =
      db->View(Basis::History()).Datoms(storage::IndexOrder::kEavt, prefix);
  REQUIRE(history.ok());
  // Only the current assertion: the retracted value left nothing behind.
  REQUIRE(history->size() == 1);
  CHECK((*history)[0].v == Value::Long(2));
}

}  // namespace
}  // namespace mentat::query
