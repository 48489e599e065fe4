#include "mentat/query/tx_data_parser.h"

#include <doctest/doctest.h>

#include <random>
#include <string>
#include <string_view>

#include "mentat/edn/edn_reader.h"
#include "mentat/storage/value_codec.h"

namespace mentat::query {
namespace {

using storage::EntityRef;
using storage::TxOp;
using storage::TxRequest;
using storage::TxValue;
using storage::Value;
using storage::ValueType;

std::string Msg(const absl::Status& s) {
  return std::string(s.message().data(), s.message().size());
}

TxRequest Parse(std::string_view text) {
  absl::StatusOr<TxRequest> tx = ParseTxData(text);
  INFO("input: ", std::string(text));
  REQUIRE_MESSAGE(tx.ok(), Msg(tx.status()));
  return *std::move(tx);
}

std::string Error(std::string_view text) {
  absl::StatusOr<TxRequest> tx = ParseTxData(text);
  INFO("input: ", std::string(text));
  REQUIRE(!tx.ok());
  CHECK(tx.status().code() == absl::StatusCode::kInvalidArgument);
  return Msg(tx.status());
}

void CheckId(const EntityRef& e, int64_t id) {
  CHECK(e.kind == EntityRef::Kind::kId);
  CHECK(e.id == id);
}

void CheckIdent(const EntityRef& e, std::string_view ident) {
  CHECK(e.kind == EntityRef::Kind::kIdent);
  CHECK(e.name == ident);
}

void CheckTempId(const EntityRef& e, std::string_view name) {
  CHECK(e.kind == EntityRef::Kind::kTempId);
  CHECK(e.name == name);
  CHECK_FALSE(e.nested);
}

void CheckLookupRef(const EntityRef& e, std::string_view attr,
                    const Value& value) {
  CHECK(e.kind == EntityRef::Kind::kLookupRef);
  CHECK(e.lookup_attr == attr);
  REQUIRE(e.lookup_value != nullptr);
  CHECK(*e.lookup_value == value);
}

void CheckScalar(const TxValue& v, const Value& expected) {
  CHECK(v.kind == TxValue::Kind::kScalar);
  CHECK(v.scalar == expected);
}

void CheckEntityValue(const TxValue& v, const EntityRef& expected) {
  REQUIRE(v.kind == TxValue::Kind::kEntity);
  CHECK(v.entity.kind == expected.kind);
  CHECK(v.entity.id == expected.id);
  CHECK(v.entity.name == expected.name);
}

TEST_CASE("tx-data: op forms") {
  SUBCASE(":db/add") {
    TxRequest tx = Parse("[[:db/add 1 :issue/title \"t\"]]");
    REQUIRE(tx.ops.size() == 1);
    const TxOp& op = tx.ops[0];
    CHECK(op.kind == TxOp::Kind::kAdd);
    CheckId(op.e, 1);
    CheckIdent(op.a, "issue/title");
    CheckScalar(op.v, Value::String("t"));
    CHECK(op.pos.line == 1);
    CHECK(op.pos.column == 2);
  }
  SUBCASE(":db/retract with and without a value") {
    TxRequest tx = Parse(
        "[[:db/retract :my/ident :a/b 3]\n"
        " [:db/retract \"t\" :a/b]]");
    REQUIRE(tx.ops.size() == 2);
    CHECK(tx.ops[0].kind == TxOp::Kind::kRetract);
    CheckIdent(tx.ops[0].e, "my/ident");
    CheckScalar(tx.ops[0].v, Value::Long(3));
    CHECK(tx.ops[1].kind == TxOp::Kind::kRetractAttr);
    CheckTempId(tx.ops[1].e, "t");
    CheckIdent(tx.ops[1].a, "a/b");
    CHECK(tx.ops[1].pos.line == 2);
    CHECK(tx.ops[1].pos.column == 2);
  }
  SUBCASE(":db/retractEntity and :db.fn/retractEntity") {
    TxRequest tx = Parse(
        "[[:db/retractEntity 5] [:db.fn/retractEntity [:user/email \"x\"]]]");
    REQUIRE(tx.ops.size() == 2);
    CHECK(tx.ops[0].kind == TxOp::Kind::kRetractEntity);
    CheckId(tx.ops[0].e, 5);
    CHECK(tx.ops[1].kind == TxOp::Kind::kRetractEntity);
    CheckLookupRef(tx.ops[1].e, "user/email", Value::String("x"));
  }
  SUBCASE(":db/cas") {
    TxRequest tx = Parse(
        "[[:db/cas 7 :account/balance 100 90]"
        " [:db.fn/cas 7 :account/owner nil \"bob\"]]");
    REQUIRE(tx.ops.size() == 2);
    const TxOp& cas = tx.ops[0];
    CHECK(cas.kind == TxOp::Kind::kCas);
    CheckId(cas.e, 7);
    CheckIdent(cas.a, "account/balance");
    CHECK_FALSE(cas.old_is_nil);
    CheckScalar(cas.old, Value::Long(100));
    CheckScalar(cas.v, Value::Long(90));
    CHECK(tx.ops[1].kind == TxOp::Kind::kCas);
    CHECK(tx.ops[1].old_is_nil);
    CheckScalar(tx.ops[1].v, Value::String("bob"));
  }
  SUBCASE("lists work like vectors, at both levels") {
    TxRequest tx =
        Parse("((:db/add \"a\" :x/y true) [:db/add \"b\" 10 false])");
    REQUIRE(tx.ops.size() == 2);
    CheckScalar(tx.ops[0].v, Value::Boolean(true));
    CheckId(tx.ops[1].a, 10);
  }
  SUBCASE("empty transaction") { CHECK(Parse("[]").ops.empty()); }
}

TEST_CASE("tx-data: entity positions") {
  TxRequest tx = Parse(
      "[[:db/add 17 :a/b 1]"
      " [:db/add :my/thing :a/b 1]"
      " [:db/add \"tmp\" :a/b 1]"
      " [:db/add \"datomic.tx\" :a/b 1]"
      " [:db/add [:user/email \"u@x\"] :a/b 1]"
      " [:db/add (lookup-ref :user/email \"v@x\") :a/b 1]"
      " [:db/add [42 \"w@x\"] :a/b 1]]");
  REQUIRE(tx.ops.size() == 7);
  CheckId(tx.ops[0].e, 17);
  CheckIdent(tx.ops[1].e, "my/thing");
  CheckTempId(tx.ops[2].e, "tmp");
  CHECK(tx.ops[3].e.kind == EntityRef::Kind::kTxTempId);
  CheckLookupRef(tx.ops[4].e, "user/email", Value::String("u@x"));
  CheckLookupRef(tx.ops[5].e, "user/email", Value::String("v@x"));
  CHECK(tx.ops[6].e.kind == EntityRef::Kind::kLookupRef);
  CHECK(tx.ops[6].e.lookup_attr_id == 42);
  CHECK(*tx.ops[6].e.lookup_value == Value::String("w@x"));
}

TEST_CASE("tx-data: values") {
  TxRequest tx = Parse(
      "[[:db/add 1 :a/long -5]"
      " [:db/add 1 :a/double 2.5]"
      " [:db/add 1 :a/bigint 12345678901234567890N]"
      " [:db/add 1 :a/bigdec 1.50M]"
      " [:db/add 1 :a/string \"s\"]"
      " [:db/add 1 :a/keyword :state/open]"
      " [:db/add 1 :a/boolean false]"
      " [:db/add 1 :a/instant #inst \"2025-03-04T10:22:00Z\"]"
      " [:db/add 1 :a/uuid #uuid \"f81d4fae-7dec-11d0-a765-00a0c91e6bf6\"]"
      " [:db/add 1 :a/ref [:user/email \"e\"]]"
      " [:db/add 1 :a/ref (lookup-ref :user/email \"f\")]"
      " [:db/add 1 :a/huge 99999999999999999999]]");
  REQUIRE(tx.ops.size() == 12);
  CheckScalar(tx.ops[0].v, Value::Long(-5));
  CheckScalar(tx.ops[1].v, Value::Double(2.5));
  CheckScalar(tx.ops[2].v, Value::BigInt("12345678901234567890"));
  CheckScalar(tx.ops[3].v, storage::ParseBigDec("1.50").value());
  CheckScalar(tx.ops[4].v, Value::String("s"));
  CheckScalar(tx.ops[5].v, Value::Keyword("state/open"));
  CheckScalar(tx.ops[6].v, Value::Boolean(false));
  CheckScalar(tx.ops[7].v, Value::Instant(1741083720000000LL));
  CHECK(tx.ops[8].v.scalar.type() == ValueType::kUuid);
  CHECK(tx.ops[8].v.scalar.text().size() == 16);
  REQUIRE(tx.ops[9].v.kind == TxValue::Kind::kEntity);
  CheckLookupRef(tx.ops[9].v.entity, "user/email", Value::String("e"));
  CheckLookupRef(tx.ops[10].v.entity, "user/email", Value::String("f"));
  CheckScalar(tx.ops[11].v, Value::BigInt("99999999999999999999"));
}

TEST_CASE("tx-data: map forms") {
  SUBCASE("with :db/id, one op per attribute at the key's position") {
    TxRequest tx = Parse(
        "[{:db/id \"i1\"\n"
        "  :issue/title \"Crash\"\n"
        "  :issue/priority 3}]");
    REQUIRE(tx.ops.size() == 2);
    for (const TxOp& op : tx.ops) {
      CHECK(op.kind == TxOp::Kind::kAdd);
      CheckTempId(op.e, "i1");
    }
    CheckIdent(tx.ops[0].a, "issue/title");
    CHECK(tx.ops[0].pos.line == 2);
    CHECK(tx.ops[0].pos.column == 3);
    CheckScalar(tx.ops[1].v, Value::Long(3));
    CHECK(tx.ops[1].pos.line == 3);
  }
  SUBCASE("without :db/id: a generated tempid per map") {
    TxRequest tx = Parse("[{:a/b 1 :a/c 2} {:a/b 3}]");
    REQUIRE(tx.ops.size() == 3);
    const EntityRef& e0 = tx.ops[0].e;
    CHECK(e0.kind == EntityRef::Kind::kTempId);
    CHECK(IsGeneratedTempId(e0.name));
    CHECK_FALSE(e0.nested);
    CHECK(tx.ops[1].e.name == e0.name);
    CHECK(IsGeneratedTempId(tx.ops[2].e.name));
    CHECK(tx.ops[2].e.name != e0.name);
    CHECK_FALSE(IsGeneratedTempId("tmp"));
  }
  SUBCASE("collections are several values; a keyword 2-vector is a lookup") {
    TxRequest tx = Parse(
        "[{:db/id 1\n"
        "  :issue/label [\"l1\" \"l7\"]\n"
        "  :issue/tags #{:a}\n"
        "  :issue/nums (1 2 3)\n"
        "  :issue/assignee [:user/email \"u@x\"]\n"
        "  :issue/watchers [[:user/email \"a\"] [:user/email \"b\"]]\n"
        "  :issue/none []}]");
    REQUIRE(tx.ops.size() == 2 + 1 + 3 + 1 + 2);
    CheckScalar(tx.ops[0].v, Value::String("l1"));
    CheckScalar(tx.ops[1].v, Value::String("l7"));
    CheckScalar(tx.ops[2].v, Value::Keyword("a"));
    CheckScalar(tx.ops[5].v, Value::Long(3));
    CheckIdent(tx.ops[6].a, "issue/assignee");
    REQUIRE(tx.ops[6].v.kind == TxValue::Kind::kEntity);
    CheckLookupRef(tx.ops[6].v.entity, "user/email", Value::String("u@x"));
    CheckLookupRef(tx.ops[7].v.entity, "user/email", Value::String("a"));
    CheckLookupRef(tx.ops[8].v.entity, "user/email", Value::String("b"));
    for (const TxOp& op : tx.ops) CheckId(op.e, 1);
  }
  SUBCASE("nested maps") {
    TxRequest tx = Parse(
        "[{:db/id \"order\"\n"
        "  :order/lines [{:line/sku \"a\" :line/qty 1}\n"
        "                {:line/sku \"b\"}]\n"
        "  :order/customer {:db/id [:customer/id 9] :customer/name \"n\"}\n"
        "  :order/note \"x\"}]");
    REQUIRE(tx.ops.size() == 8);
    // The parent's op comes first, then the nested map's ops.
    CheckTempId(tx.ops[0].e, "order");
    CheckIdent(tx.ops[0].a, "order/lines");
    REQUIRE(tx.ops[0].v.kind == TxValue::Kind::kEntity);
    const EntityRef line1 = tx.ops[0].v.entity;
    CHECK(line1.kind == EntityRef::Kind::kTempId);
    CHECK(line1.nested);
    CHECK(IsGeneratedTempId(line1.name));
    CHECK(tx.ops[1].e.name == line1.name);
    CheckIdent(tx.ops[1].a, "line/sku");
    CHECK(tx.ops[1].pos.line == 2);
    CHECK(tx.ops[2].e.name == line1.name);
    CheckScalar(tx.ops[2].v, Value::Long(1));
    const EntityRef line2 = tx.ops[3].v.entity;
    CHECK(line2.nested);
    CHECK(line2.name != line1.name);
    CHECK(tx.ops[4].e.name == line2.name);
    CHECK(tx.ops[4].pos.line == 3);
    // A nested map with its own :db/id refers to that entity.
    CheckIdent(tx.ops[5].a, "order/customer");
    REQUIRE(tx.ops[5].v.kind == TxValue::Kind::kEntity);
    CheckLookupRef(tx.ops[5].v.entity, "customer/id", Value::Long(9));
    CheckLookupRef(tx.ops[6].e, "customer/id", Value::Long(9));
    CheckScalar(tx.ops[6].v, Value::String("n"));
    CheckTempId(tx.ops[7].e, "order");
  }
  SUBCASE("reverse refs") {
    TxRequest tx = Parse(
        "[{:db/id \"u\"\n"
        "  :user/name \"Ann\"\n"
        "  :issue/_assignee [[:issue/id 1] 55 \"i3\"]\n"
        "  :issue/_reporter [:issue/id 2]\n"
        "  :_parent {:node/name \"child\"}}]");
    REQUIRE(tx.ops.size() == 1 + 3 + 1 + 2);
    for (int i = 1; i <= 3; ++i) {
      CheckIdent(tx.ops[i].a, "issue/assignee");
      CheckEntityValue(tx.ops[i].v, EntityRef::TempId("u"));
      CHECK(tx.ops[i].pos.line == 3);
    }
    CheckLookupRef(tx.ops[1].e, "issue/id", Value::Long(1));
    CheckId(tx.ops[2].e, 55);
    CheckTempId(tx.ops[3].e, "i3");
    CheckIdent(tx.ops[4].a, "issue/reporter");
    CheckLookupRef(tx.ops[4].e, "issue/id", Value::Long(2));
    CheckEntityValue(tx.ops[4].v, EntityRef::TempId("u"));
    // A nested map under a reverse key is the entity that refers back.
    CheckIdent(tx.ops[5].a, "parent");
    CHECK(tx.ops[5].e.nested);
    CheckEntityValue(tx.ops[5].v, EntityRef::TempId("u"));
    CHECK(tx.ops[6].e.name == tx.ops[5].e.name);
    CheckIdent(tx.ops[6].a, "node/name");
  }
  SUBCASE("reverse ref on a map without :db/id") {
    TxRequest tx = Parse("[{:user/name \"B\" :issue/_assignee 7}]");
    REQUIRE(tx.ops.size() == 2);
    CheckId(tx.ops[1].e, 7);
    CheckEntityValue(tx.ops[1].v, tx.ops[0].e);
  }
  SUBCASE("attribute ids as keys, :db/id as a keyword ident") {
    TxRequest tx = Parse("[{:db/id :my/thing 100 \"x\"}]");
    REQUIRE(tx.ops.size() == 1);
    CheckIdent(tx.ops[0].e, "my/thing");
    CheckId(tx.ops[0].a, 100);
  }
  SUBCASE("the typical import line") {
    TxRequest tx = Parse(
        "[{:db/id \"i123\" :issue/title \"Issue 123: crash\" :issue/state "
        ":state/open :issue/priority 3 :issue/assignee [:user/email "
        "\"user17@example.com\"] :issue/created-at #inst "
        "\"2025-03-04T10:22:00Z\" :issue/label [\"l1\" \"l7\"]}]");
    CHECK(tx.ops.size() == 7);
  }
}

TEST_CASE("tx-data: errors name the position and the form") {
  CHECK(Error("[[:db/ad 1 :a/b 2]]") ==
        "line 1, column 3: unknown operation :db/ad in [:db/ad 1 :a/b 2]");
  CHECK(Error("[[:db/add 1 :a/b]]") ==
        "line 1, column 2: :db/add takes 3 arguments (e a v), found 2 "
        "arguments in [:db/add 1 :a/b]");
  CHECK(Error("[[:db/retract 1]]") ==
        "line 1, column 2: :db/retract takes 2 or 3 arguments (e a, or e a "
        "v), found 1 argument in [:db/retract 1]");
  CHECK(Error("[[:db/retractEntity]]") ==
        "line 1, column 2: :db/retractEntity takes 1 argument (e), found 0 "
        "arguments in [:db/retractEntity]");
  CHECK(Error("[[:db/cas 1 :a/b 2]]").find(":db/cas takes 4 arguments") !=
        std::string::npos);
  CHECK(Error("[\n [:db/add nil :a/b 1]]") ==
        "line 2, column 11: nil is not an entity in [:db/add nil :a/b 1]");
  CHECK(Error("[[:db/add 1 :a/b nil]]") ==
        "line 1, column 18: nil is not a value; use :db/retract in [:db/add 1 "
        ":a/b nil]");
  CHECK(Error("[[:db/cas 1 :a/b 1 nil]]").find("nil is not a value") !=
        std::string::npos);
  CHECK(Error("[{:db/id 1 :a/b nil}]") ==
        "line 1, column 17: nil is not a value; use :db/retract in {:db/id 1, "
        ":a/b nil}");
  CHECK(Error("[{:db/id 1}]") ==
        "line 1, column 2: a map needs at least one attribute besides :db/id "
        "in {:db/id 1}");
  CHECK(Error("[{}]").find("line 1, column 2: a map needs at least one") == 0);
  CHECK(Error("[{:a/b {:db/id 3}}]").find("line 1, column 8: a map needs") ==
        0);
  CHECK(Error("{:db/add 1}") ==
        "line 1, column 1: tx-data must be a vector or list of forms, found a "
        "map {:db/add 1} in {:db/add 1}");
  CHECK(Error("[1 2]") ==
        "line 1, column 2: expected an operation like [:db/add e a v] or a "
        "map, found an integer 1 in 1");
  // A single operation without the vector around it gets told so.
  CHECK(Error("[:db/add \"a\" :a/b 1]") ==
        "line 1, column 2: expected an operation like [:db/add e a v] or a "
        "map, found a keyword :db/add; tx-data is a vector of operations: "
        "wrap a single one in another vector, [[:db/add ...]] in :db/add");
  CHECK(Error("[[]]") == "line 1, column 2: empty operation in []");
  CHECK(Error("[[1 2 3]]")
            .find("line 1, column 3: expected an operation "
                  "keyword") == 0);
  CHECK(Error("[[:db/add 1 \"attr\" 2]]") ==
        "line 1, column 13: expected an attribute (keyword or entity id), "
        "found a string \"attr\" in [:db/add 1 \"attr\" 2]");
  CHECK(Error("[[:db/add 1.5 :a/b 2]]")
            .find("line 1, column 11: expected an entity (id, ident, tempid "
                  "or lookup ref), found a float 1.5") == 0);
  CHECK(Error("[[:db/add 1 :a/b \\c]]")
            .find("line 1, column 18: a character \\c is not a value") == 0);
  CHECK(Error("[[:db/add 1 :a/b #uri 5]]")
            .find("line 1, column 18: #uri takes a string, found an integer "
                  "5") == 0);
  CHECK(Error("[[:db/add 1 :a/b #uri \"a b\"]]")
            .find("line 1, column 18: invalid URI \"a b\": not RFC 3986 "
                  "syntax at offset 1") == 0);
  CHECK(Error("[[:db/add 1 :a/b #my/tag 1]]")
            .find("line 1, column 18: unsupported tagged value #my/tag") == 0);
  CHECK(Error("[[:db/add 1 :a/b [1 2]]]")
            .find("line 1, column 18: a collection is not a value here") == 0);
  CHECK(Error("[[:db/add 1 :a/b {:c/d 1}]]")
            .find("line 1, column 18: a map is not a value here") == 0);
  CHECK(Error("[{:db/id 1 :a/b [[1 2]]}]")
            .find("line 1, column 18: a nested collection is not a value") ==
        0);
  CHECK(Error("[[:db/add [:user/email nil] :a/b 1]]")
            .find("line 1, column 24: a lookup ref value cannot be nil") == 0);
  CHECK(Error("[[:db/add [:user/email] :a/b 1]]")
            .find("line 1, column 11: a lookup ref has an attribute and a "
                  "value, found a vector [:user/email]") == 0);
  CHECK(Error("[[:db/add [\"x\" 1] :a/b 1]]")
            .find("line 1, column 12: a lookup ref attribute must be") == 0);
  CHECK(Error("[[:db/add (lookup-ref :a/b) :a/b 1]]")
            .find("line 1, column 11: a lookup ref has an attribute and a "
                  "value") == 0);
  CHECK(Error("[[:db/add (foo :a/b 1) :a/b 1]]")
            .find("line 1, column 11: expected an entity") == 0);
  CHECK(Error("[{:db/id 1 :a/_ 2}]")
            .find("line 1, column 12: invalid reverse attribute :a/_") == 0);
  CHECK(Error("[{:db/id 1 \"k\" 2}]")
            .find("line 1, column 12: expected an attribute") == 0);
  CHECK(Error("[{:db/id 1 :a/_b nil}]").find("nil is not a value") !=
        std::string::npos);
  CHECK(Error("[{:db/id 1 :a/_b [nil]}]")
            .find("line 1, column 19: nil is not an entity") == 0);
  CHECK(Error("[[:db/add 1 :a/b 1e3M]] x").find("line 1, column 25") == 0);
  // EDN syntax errors come through with their position.
  absl::StatusOr<TxRequest> bad = ParseTxData("[[:db/add 1 :a/b \"x]]");
  REQUIRE_FALSE(bad.ok());
  CHECK(Msg(bad.status()) == "line 1, column 18: unterminated string");
  // Positions are also available structurally.
  absl::StatusOr<TxRequest> pos = ParseTxData("[\n  [:db/ad 1 :a/b 2]]");
  std::optional<edn::EdnPosition> where = edn::EdnErrorPosition(pos.status());
  REQUIRE(where.has_value());
  CHECK(where->line == 2);
  CHECK(where->column == 4);
}

TEST_CASE("tx-data: long forms are abbreviated in messages") {
  std::string form = "[:db/ad 1 :a/b \"" + std::string(500, 'x') + "\"]";
  const std::string err = Error("[" + form + "]");
  CHECK(err.find("unknown operation :db/ad in [:db/ad 1 :a/b \"xxx") == 18);
  CHECK(err.size() < 160);
  CHECK(err.ends_with("\u2026(500 bytes)]"));
}

TEST_CASE("tx-data: values built in code carry no position") {
  edn::EdnValue tx = edn::EdnValue::Vector({edn::EdnValue::Vector(
      {edn::EdnValue::Keyword("db/nope"), edn::EdnValue::Int(1)})});
  absl::StatusOr<TxRequest> r = ParseTxData(tx);
  REQUIRE_FALSE(r.ok());
  CHECK(Msg(r.status()) == "unknown operation :db/nope in [:db/nope 1]");
  CHECK_FALSE(edn::EdnErrorPosition(r.status()).has_value());
}

TEST_CASE("tx-data: a 100,000-op transaction") {
  std::string text = "[";
  for (int i = 0; i < 100000; ++i) {
    text += "[:db/add \"e" + std::to_string(i) + "\" :a/b " +
            std::to_string(i) + "]\n";
  }
  text += "]";
  TxRequest tx = Parse(text);
  REQUIRE(tx.ops.size() == 100000);
  CheckTempId(tx.ops[99999].e, "e99999");
  CheckScalar(tx.ops[99999].v, Value::Long(99999));
  CHECK(tx.ops[99999].pos.line == 100000);

  std::string many = "[{:db/id 1 :a/many [";
  for (int i = 0; i < 100000; ++i) many += std::to_string(i) + " ";
  many += "]}]";
  CHECK(Parse(many).ops.size() == 100000);

  std::string maps = "[";
  for (int i = 0; i < 50000; ++i) {
    maps += "{:a/b " + std::to_string(i) + " :a/c {:d/e 1}}\n";
  }
  maps += "]";
  TxRequest nested = Parse(maps);
  CHECK(nested.ops.size() == 150000);
}

TEST_CASE("tx-data: mangled input fails cleanly") {
  const std::string seed_text =
      "[{:db/id \"o\" :o/lines [{:l/sku \"a\"} [:s/id 1]] :o/_by [7 \"x\"] "
      ":o/at #inst \"2025-01-01\"} [:db/add [:u/e \"m\"] :a/b 2.5] "
      "[:db/retract 1 :a/b] [:db/cas 1 :a/b nil 3] (:db/retractEntity 4)]";
  REQUIRE(ParseTxData(seed_text).ok());
  std::mt19937 rng(11);
  static constexpr char kBytes[] = "[]{}()\":_ 01nil";
  for (int i = 0; i < 5000; ++i) {
    std::string text = seed_text;
    const size_t at = rng() % text.size();
    if (rng() % 2) {
      text[at] = kBytes[rng() % (sizeof kBytes - 1)];
    } else {
      text.erase(at, 1 + rng() % 6);
    }
    absl::StatusOr<TxRequest> tx = ParseTxData(text);
    if (!tx.ok()) {
      INFO(text, " -> ", Msg(tx.status()));
      CHECK(Msg(tx.status()).compare(0, 5, "line ") == 0);
    }
  }
}

}  // namespace
}  // namespace mentat::query
