// Attribute predicates (:db.attr/preds) and entity specs (:db/ensure with
// :db.entity/attrs): checked on the state a transaction leaves, refused
// with the whole transaction when they fail, and run by Db::With as by a
// commit.

#include <doctest/doctest.h>

#include <cmath>

#include "mentat/base/str_cat.h"
#include "mentat/storage/attribute_predicate.h"
#include "mentat/storage/db.h"
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
using testing::TempDir;
using testing::Tx;
using testing::ValuesOf;
using testing::VectorImportSource;

TxOp Pred(const char* attr, const char* symbol) {
  return Add(Kw(attr), "db.attr/preds", Value::Symbol(symbol));
}

// acct/name string, acct/balance long (pos? and even?), acct/note string;
// spec acct/guard requires acct/name and acct/balance.
std::vector<TxOp> AccountSchema() {
  return Concat(
      {Attr("acct/name", "db.type/string"),
       Attr("acct/balance", "db.type/long"),
       Attr("acct/note", "db.type/string"),
       {Add(E("guard"), "db/ident", Value::Keyword("acct/guard")),
        Add(E("guard"), "db.entity/attrs", Value::Keyword("acct/name")),
        Add(E("guard"), "db.entity/attrs", Value::Keyword("acct/balance"))}});
}

absl::StatusOr<TxReport> Run(Store& store, std::vector<TxOp> ops) {
  return store.Transact(Tx(std::move(ops))).get();
}

void CheckRefused(Store& store, std::vector<TxOp> ops, absl::StatusCode code,
                  std::vector<std::string> fragments) {
  const EntityId basis = store.Latest()->basis_tx();
  absl::Status s = Run(store, std::move(ops)).status();
  CHECK_MESSAGE(s.code() == code, s.ToString());
  for (const std::string& what : fragments) {
    CHECK_MESSAGE(s.message().find(what) != std::string::npos, s.ToString());
  }
  CHECK(store.Latest()->basis_tx() == basis);
}

std::vector<Value> Now(Store& store, EntityId e, const char* attr) {
  return ValuesOf(store.Latest()->View(Basis::Current()), e, attr);
}

TxOp Ensure(EntityRef e, const char* spec) {
  return AddRef(std::move(e), "db/ensure", Kw(spec));
}

TEST_CASE("attribute predicates: the names, the types they take, the values") {
  CHECK(FindAttributePredicate("pos?") == AttributePredicate::kPos);
  CHECK(FindAttributePredicate("clojure.core/pos?") ==
        AttributePredicate::kPos);
  CHECK(FindAttributePredicate("clojure.string/blank?") ==
        AttributePredicate::kBlank);
  CHECK_FALSE(FindAttributePredicate("clojure.string/pos?").has_value());
  CHECK_FALSE(FindAttributePredicate("string?").has_value());
  CHECK_FALSE(FindAttributePredicate("my.app/valid?").has_value());
  CHECK(AttributePredicateTakes(AttributePredicate::kPos, ValueType::kBigDec));
  CHECK_FALSE(
      AttributePredicateTakes(AttributePredicate::kPos, ValueType::kString));
  CHECK_FALSE(
      AttributePredicateTakes(AttributePredicate::kEven, ValueType::kDouble));
  auto holds = [](AttributePredicate p, Value v) {
    return AttributePredicateHolds(p, v);
  };
  CHECK(holds(AttributePredicate::kPos, Value::Long(1)));
  CHECK_FALSE(holds(AttributePredicate::kPos, Value::Long(0)));
  CHECK(holds(AttributePredicate::kZero, Value::Double(-0.0)));
  CHECK_FALSE(holds(AttributePredicate::kPos, Value::Double(std::nan(""))));
  CHECK_FALSE(holds(AttributePredicate::kNeg, Value::Double(std::nan(""))));
  CHECK(holds(AttributePredicate::kNeg, *ParseBigInt("-12345678901234567890")));
  CHECK(holds(AttributePredicate::kZero, *ParseBigDec("0.000")));
  CHECK(holds(AttributePredicate::kPos, *ParseBigDec("0.001")));
  CHECK(holds(AttributePredicate::kOdd, Value::Long(-3)));
  CHECK(holds(AttributePredicate::kEven, *ParseBigInt("12345678901234567890")));
  CHECK(holds(AttributePredicate::kBlank, Value::String(" \t\n")));
  CHECK(holds(AttributePredicate::kBlank, Value::String("")));
  CHECK_FALSE(holds(AttributePredicate::kBlank, Value::String(" x ")));
  CHECK(holds(AttributePredicate::kFalse, Value::Boolean(false)));
}

TEST_CASE("attribute predicates check every value a transaction asserts") {
  TempDir dir;
  auto store = *Store::Open(dir.path());
  REQUIRE(Run(*store, AccountSchema()).ok());
  REQUIRE(Run(*store, {Pred("acct/balance", "pos?"),
                       Pred("acct/balance", "clojure.core/even?")})
              .ok());
  const Attribute* balance =
      store->Latest()->schema().FindAttribute("acct/balance");
  REQUIRE(balance != nullptr);
  CHECK(balance->preds.size() == 2);

  auto ok = Run(*store, {Add(E("a"), "acct/balance", Value::Long(10))});
  REQUIRE_MESSAGE(ok.ok(), ok.status().ToString());
  const EntityId a = ok->tempids.at("a");

  CheckRefused(*store, {Add(E(a), "acct/balance", Value::Long(-2))},
               absl::StatusCode::kInvalidArgument,
               {"value -2 of :acct/balance", "fails the predicate pos?",
                ":db.attr/preds"});
  CheckRefused(*store,
               {Add(E("b"), "acct/name", Value::String("b")),
                Add(E("b"), "acct/balance", Value::Long(3))},
               absl::StatusCode::kInvalidArgument,
               {"fails the predicate clojure.core/even?"});
  CHECK(Now(*store, a, "acct/balance") == std::vector<Value>{Value::Long(10)});
  // Retractions are not checked.
  REQUIRE(Run(*store, {Retract(E(a), "acct/balance", Value::Long(10))}).ok());

  // A predicate retracted no longer applies.
  REQUIRE(Run(*store, {Retract(Kw("acct/balance"), "db.attr/preds",
                               Value::Symbol("clojure.core/even?"))})
              .ok());
  CHECK(Run(*store, {Add(E(a), "acct/balance", Value::Long(3))}).ok());
  // A predicate installed in the same transaction applies to it.
  CheckRefused(*store,
               {Pred("acct/note", "blank?"),
                Add(E(a), "acct/note", Value::String("not blank"))},
               absl::StatusCode::kInvalidArgument, {"fails the predicate"});
}

TEST_CASE("attribute predicates mentatd does not have are refused") {
  TempDir dir;
  auto store = *Store::Open(dir.path());
  REQUIRE(Run(*store, AccountSchema()).ok());
  CheckRefused(*store, {Pred("acct/balance", "my.app/valid?")},
               absl::StatusCode::kInvalidArgument,
               {":acct/balance: :db.attr/preds names my.app/valid?",
                "runs no user code", "pos?", "blank?"});
  CheckRefused(*store, {Pred("acct/name", "pos?")},
               absl::StatusCode::kInvalidArgument,
               {":acct/name: :db.attr/preds names pos?, which does not take "
                ":db.type/string values"});
  CheckRefused(*store,
               {Add(Kw("acct/guard"), "db.attr/preds", Value::Symbol("pos?"))},
               absl::StatusCode::kInvalidArgument, {"not an attribute"});
  // A string where a symbol belongs.
  CheckRefused(
      *store, {Add(Kw("acct/balance"), "db.attr/preds", Value::String("pos?"))},
      absl::StatusCode::kInvalidArgument, {":db.type/symbol"});
  // Defined with the attribute, in one map.
  std::vector<TxOp> fresh = Attr("acct/limit", "db.type/double");
  fresh.push_back(
      Add(E("attr-acct/limit"), "db.attr/preds", Value::Symbol("odd?")));
  CheckRefused(*store, std::move(fresh), absl::StatusCode::kInvalidArgument,
               {"odd?, which does not take :db.type/double"});
}

TEST_CASE("entity specs: :db/ensure checks required attributes") {
  TempDir dir;
  auto store = *Store::Open(dir.path());
  REQUIRE(Run(*store, AccountSchema()).ok());

  auto ok = Run(*store, {Add(E("a"), "acct/name", Value::String("Ann")),
                         Add(E("a"), "acct/balance", Value::Long(5)),
                         Ensure(E("a"), "acct/guard")});
  REQUIRE_MESSAGE(ok.ok(), ok.status().ToString());
  const EntityId a = ok->tempids.at("a");
  // :db/ensure is a request, not a fact: nothing of it is written.
  for (const Datom& d : ok->datoms) CHECK(d.a != ids::kDbEnsure);
  CHECK(Now(*store, a, "db/ensure").empty());

  CheckRefused(*store,
               {Add(E("b"), "acct/name", Value::String("Ben")),
                Ensure(E("b"), "acct/guard")},
               absl::StatusCode::kFailedPrecondition,
               {"does not satisfy entity spec :acct/guard",
                "it lacks :acct/balance (required by :db.entity/attrs)"});
  CheckRefused(*store, {Ensure(E("c"), "acct/guard")},
               absl::StatusCode::kFailedPrecondition,
               {"it lacks :acct/balance, :acct/name"});
  // What the entity already holds counts.
  CHECK(Run(*store, {Add(E(a), "acct/note", Value::String("n")),
                     Ensure(E(a), "acct/guard")})
            .ok());
  // So does what the transaction retracts.
  CheckRefused(*store,
               {Retract(E(a), "acct/balance", Value::Long(5)),
                Ensure(E(a), "acct/guard")},
               absl::StatusCode::kFailedPrecondition,
               {StrCat("entity ", a, " does not satisfy"), ":acct/balance"});
  // A replaced value is still a value.
  CHECK(Run(*store, {Add(E(a), "acct/balance", Value::Long(6)),
                     Ensure(E(a), "acct/guard")})
            .ok());
  // Without :db/ensure nothing is checked.
  CHECK(Run(*store, {Add(E("d"), "acct/note", Value::String("free"))}).ok());
}

TEST_CASE("entity specs: bad specs and bad uses are refused") {
  TempDir dir;
  auto store = *Store::Open(dir.path());
  REQUIRE(Run(*store, AccountSchema()).ok());
  CheckRefused(*store,
               {Add(E("x"), "acct/name", Value::String("x")),
                Ensure(E("x"), "acct/name")},
               absl::StatusCode::kInvalidArgument,
               {":db/ensure names :acct/name, which is not an entity spec"});
  CheckRefused(
      *store,
      {Add(Kw("acct/guard"), "db.entity/attrs", Value::Keyword("acct/none"))},
      absl::StatusCode::kInvalidArgument,
      {":db.entity/attrs of :acct/guard names :acct/none, which is "
       "no attribute"});
  CheckRefused(
      *store,
      {Add(Kw("acct/guard"), "db.entity/preds", Value::Symbol("my.app/ok?"))},
      absl::StatusCode::kInvalidArgument,
      {":db.entity/preds is not supported", "no user code"});
  TxOp retract = Ensure(Kw("acct/guard"), "acct/guard");
  retract.kind = TxOp::Kind::kRetract;
  CheckRefused(*store, {std::move(retract)}, absl::StatusCode::kInvalidArgument,
               {":db/ensure is never stored"});
  // A spec defined in the transaction that uses it.
  CHECK(
      Run(*store, {Add(E("s"), "db/ident", Value::Keyword("acct/named")),
                   Add(E("s"), "db.entity/attrs", Value::Keyword("acct/name")),
                   Add(E("y"), "acct/name", Value::String("y")),
                   AddRef(E("y"), "db/ensure", E("s"))})
          .ok());
}

TEST_CASE("entity specs and predicates hold for Db::With as for a commit") {
  TempDir dir;
  auto store = *Store::Open(dir.path());
  REQUIRE(Run(*store, AccountSchema()).ok());
  REQUIRE(Run(*store, {Pred("acct/balance", "pos?")}).ok());
  auto base = store->Latest();

  auto missing = base->With(Tx({Add(E("b"), "acct/name", Value::String("B")),
                                Ensure(E("b"), "acct/guard")}));
  CHECK(missing.status().code() == absl::StatusCode::kFailedPrecondition);
  auto negative =
      base->With(Tx({Add(E("b"), "acct/balance", Value::Long(-1))}));
  CHECK(negative.status().code() == absl::StatusCode::kInvalidArgument);
  auto fine = base->With(Tx({Add(E("b"), "acct/name", Value::String("B")),
                             Add(E("b"), "acct/balance", Value::Long(1)),
                             Ensure(E("b"), "acct/guard")}));
  REQUIRE_MESSAGE(fine.ok(), fine.status().ToString());
  for (const Datom& d : fine->report.datoms) CHECK(d.a != ids::kDbEnsure);
  // On top of a speculative value, its datoms count.
  const EntityId b = fine->report.tempids.at("b");
  auto chained = fine->db_after->With(Tx({Ensure(E(b), "acct/guard")}));
  CHECK_MESSAGE(chained.ok(), chained.status().ToString());
  CHECK(store->Latest()->basis_tx() == base->basis_tx());
}

TEST_CASE("entity specs and predicates hold for a bulk import") {
  TempDir dir;
  auto store = *Store::Open(dir.path());
  REQUIRE(Run(*store, AccountSchema()).ok());
  REQUIRE(Run(*store, {Pred("acct/balance", "pos?")}).ok());
  std::vector<TxRequest> txs;
  txs.push_back(Tx({Add(E("a"), "acct/name", Value::String("A")),
                    Add(E("a"), "acct/balance", Value::Long(1)),
                    Ensure(E("a"), "acct/guard")}));
  txs.push_back(Tx({Add(E("b"), "acct/name", Value::String("B")),
                    Ensure(E("b"), "acct/guard")}));
  VectorImportSource missing(txs);
  auto report = store->Import(&missing);
  CHECK(report.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK_MESSAGE(
      report.status().message().find(
          "does not satisfy entity spec :acct/guard") != std::string::npos,
      report.status().ToString());
  txs.pop_back();
  txs.push_back(Tx({Add(E("c"), "acct/balance", Value::Long(-1))}));
  VectorImportSource negative(txs);
  report = store->Import(&negative);
  CHECK(report.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(report.status().message().find("fails the predicate pos?") !=
        std::string::npos);
}

}  // namespace
}  // namespace mentat::storage
