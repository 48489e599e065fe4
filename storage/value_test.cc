#include "mentat/storage/value.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <unordered_set>
#include <vector>

#include "mentat/storage/datom.h"
#include "mentat/storage/tx_op.h"
#include "mentat/storage/value_codec.h"

namespace mentat::storage {
namespace {

constexpr ValueType kAllTypes[] = {
    ValueType::kRef,     ValueType::kBoolean, ValueType::kLong,
    ValueType::kBigInt,  ValueType::kDouble,  ValueType::kBigDec,
    ValueType::kInstant, ValueType::kUuid,    ValueType::kKeyword,
    ValueType::kString,  ValueType::kBytes,   ValueType::kUri,
    ValueType::kSymbol};

TEST_CASE("ValueTypeIdent and ValueTypeFromIdent") {
  CHECK(ValueTypeIdent(ValueType::kRef) == ":db.type/ref");
  CHECK(ValueTypeIdent(ValueType::kBigDec) == ":db.type/bigdec");
  CHECK(ValueTypeIdent(ValueType::kBytes) == ":db.type/bytes");
  CHECK(ValueTypeIdent(ValueType::kInstant) == ":db.type/instant");
  CHECK(ValueTypeIdent(ValueType::kUri) == ":db.type/uri");
  CHECK(ValueTypeIdent(ValueType::kSymbol) == ":db.type/symbol");
  for (ValueType t : kAllTypes) {
    std::string_view ident = ValueTypeIdent(t);
    REQUIRE(ident.substr(0, 9) == ":db.type/");
    ValueType got = ValueType::kBytes;
    CHECK(ValueTypeFromIdent(ident, &got));
    CHECK(got == t);
    got = ValueType::kBytes;
    CHECK(ValueTypeFromIdent(ident.substr(1), &got));
    CHECK(got == t);
  }
  ValueType t;
  CHECK_FALSE(ValueTypeFromIdent("", &t));
  CHECK_FALSE(ValueTypeFromIdent(":", &t));
  CHECK_FALSE(ValueTypeFromIdent(":db.type/int", &t));
  CHECK_FALSE(ValueTypeFromIdent("::db.type/long", &t));
  CHECK_FALSE(ValueTypeFromIdent(":db.type/Long", &t));
}

TEST_CASE("Value equality and order") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK(Value::Double(-0.0) == Value::Double(0.0));
  CHECK((Value::Double(-0.0) <=> Value::Double(0.0)) == 0);
  CHECK(Value::Double(nan) == Value::Double(-nan));
  CHECK(Value::Double(nan) >
        Value::Double(std::numeric_limits<double>::infinity()));
  CHECK(Value::Long(1) != Value::Ref(1));
  CHECK(Value::Ref(100) < Value::Boolean(false));  // by type tag first
  CHECK(Value::Long(-5) < Value::Long(3));
  CHECK(Value::Long(std::numeric_limits<int64_t>::min()) <
        Value::Long(std::numeric_limits<int64_t>::max()));
  CHECK(Value::Boolean(false) < Value::Boolean(true));
  CHECK(Value::String("ab") < Value::String(std::string_view("ab\0", 3)));
  CHECK(Value::String(std::string_view("ab\0", 3)) < Value::String("abc"));
  CHECK(Value::String("z") < Value::String("\xC3\xA9"));  // unsigned bytes
  CHECK(Value::BigInt("-10") < Value::BigInt("-9"));
  CHECK(Value::BigInt("9") < Value::BigInt("10"));
  CHECK(Value::BigDec("1.5") < Value::BigDec("1.50001"));
  CHECK(Value::BigDec("-2") < Value::BigDec("-1.5"));
  CHECK(Value::Keyword("a/b") == Value::Keyword("a/b"));
  CHECK(Value::Keyword("a/b") != Value::String("a/b"));
  Value def;
  CHECK(def == Value::Long(0));
}

TEST_CASE("ValueHash agrees with equality") {
  ValueHash h;
  CHECK(h(Value::Double(-0.0)) == h(Value::Double(0.0)));
  CHECK(h(Value::Double(std::nan("1"))) == h(Value::Double(std::nan("2"))));
  CHECK(h(Value::BigDec("1.5")) == h(*ParseBigDec("1.50")));
  std::unordered_set<Value, ValueHash> set;
  set.insert(Value::Long(1));
  set.insert(Value::Ref(1));
  set.insert(Value::String("x"));
  set.insert(Value::Keyword("x"));
  set.insert(Value::Double(0.0));
  set.insert(Value::Double(-0.0));
  CHECK(set.size() == 5);
  CHECK(set.count(Value::String("x")) == 1);
  CHECK(set.count(Value::Bytes("x")) == 0);
}

TEST_CASE("Value copies") {
  Value a = Value::String(std::string(100, 'q'));
  Value b = a;
  CHECK(b == a);
  b = Value::Long(3);
  CHECK(b.as_long() == 3);
  CHECK(a.text().size() == 100);
  Value c = std::move(a);
  CHECK(c.text() == std::string(100, 'q'));
}

TEST_CASE("Value::DebugString") {
  CHECK(Value::Long(42).DebugString() == "42");
  CHECK(Value::Long(-7).DebugString() == "-7");
  CHECK(Value::Ref(17592186045418).DebugString() == "17592186045418");
  CHECK(Value::Double(1.5).DebugString() == "1.5");
  CHECK(Value::Double(2).DebugString() == "2.0");
  CHECK(Value::Double(1e300).DebugString() == "1e+300");
  CHECK(Value::Double(std::nan("")).DebugString() == "##NaN");
  CHECK(Value::Double(-std::numeric_limits<double>::infinity()).DebugString() ==
        "##-Inf");
  CHECK(Value::String("a\"b\\c\nd").DebugString() == "\"a\\\"b\\\\c\\nd\"");
  CHECK(Value::String(std::string_view("\0", 1)).DebugString() ==
        "\"\\u0000\"");
  CHECK(Value::Keyword("user/email").DebugString() == ":user/email");
  CHECK(Value::Boolean(true).DebugString() == "true");
  CHECK(Value::Boolean(false).DebugString() == "false");
  // 2025-01-02T03:04:05Z is 1735787045 seconds after the epoch.
  CHECK(Value::Instant(1735787045000006).DebugString() ==
        "#inst \"2025-01-02T03:04:05.000006Z\"");
  CHECK(Value::Instant(1735787045123000).DebugString() ==
        "#inst \"2025-01-02T03:04:05.123Z\"");
  CHECK(Value::Instant(0).DebugString() ==
        "#inst \"1970-01-01T00:00:00.000Z\"");
  CHECK(Value::Instant(-1).DebugString() ==
        "#inst \"1969-12-31T23:59:59.999999Z\"");
  CHECK(Value::Uuid(std::string_view("\x12\x34\x56\x78\x9a\xbc\xde\xf0"
                                     "\x01\x23\x45\x67\x89\xab\xcd\xef",
                                     16))
            .DebugString() == "#uuid \"12345678-9abc-def0-0123-456789abcdef\"");
  CHECK(Value::BigInt("-123").DebugString() == "-123N");
  CHECK(Value::BigDec("1.5").DebugString() == "1.5M");
  CHECK(Value::Bytes("hi").DebugString() == "#bytes \"aGk=\"");
  CHECK(Value::Uri("https://x/\"y").DebugString() ==
        "#uri \"https://x/\\\"y\"");
  CHECK(Value::Symbol("ns/sym").DebugString() == "ns/sym");
  // Extreme instants still render.
  CHECK(!Value::Instant(std::numeric_limits<int64_t>::min())
             .DebugString()
             .empty());
  CHECK(!Value::Instant(std::numeric_limits<int64_t>::max())
             .DebugString()
             .empty());
}

TEST_CASE("Datom::DebugString") {
  Datom d{.e = 17592186045418,
          .a = 72,
          .v = Value::String("x"),
          .tx = 13194139534313,
          .added = false};
  CHECK(d.DebugString() == "[17592186045418 72 \"x\" 13194139534313 false]");
  Datom d2 = d;
  CHECK(d2 == d);
  d2.v = Value::Keyword("x");
  CHECK_FALSE(d2 == d);
}

TEST_CASE("TxOp::DebugString") {
  TxOp add;
  add.kind = TxOp::Kind::kAdd;
  add.e = EntityRef::TempId("t1");
  add.a = EntityRef::Ident(":user/email");
  add.v = TxValue::Scalar(Value::String("x"));
  CHECK(add.DebugString() == "[:db/add \"t1\" :user/email \"x\"]");
  CHECK(add.a.name == "user/email");

  TxOp retract;
  retract.kind = TxOp::Kind::kRetract;
  retract.e = EntityRef::LookupRef("user/email", Value::String("x"));
  retract.a = EntityRef::Id(72);
  retract.v = TxValue::Entity(EntityRef::Ident("status/open"));
  CHECK(retract.DebugString() ==
        "[:db/retract [:user/email \"x\"] 72 :status/open]");
  CHECK(retract.e.kind == EntityRef::Kind::kLookupRef);
  CHECK(*retract.e.lookup_value == Value::String("x"));

  TxOp attr;
  attr.kind = TxOp::Kind::kRetractAttr;
  attr.e = EntityRef::Id(5);
  attr.a = EntityRef::Ident("user/name");
  CHECK(attr.DebugString() == "[:db/retract 5 :user/name]");

  TxOp ent;
  ent.kind = TxOp::Kind::kRetractEntity;
  ent.e = EntityRef::TxTempId();
  CHECK(ent.DebugString() == "[:db/retractEntity \"datomic.tx\"]");
  CHECK(ent.e.kind == EntityRef::Kind::kTxTempId);

  TxOp cas;
  cas.kind = TxOp::Kind::kCas;
  cas.e = EntityRef::Id(5);
  cas.a = EntityRef::Ident("acct/balance");
  cas.old_is_nil = true;
  cas.v = TxValue::Scalar(Value::Long(10));
  CHECK(cas.DebugString() == "[:db/cas 5 :acct/balance nil 10]");
  cas.old_is_nil = false;
  cas.old = TxValue::Scalar(Value::Long(7));
  CHECK(cas.DebugString() == "[:db/cas 5 :acct/balance 7 10]");

  EntityRef by_id = EntityRef::LookupRef("x/y", Value::Long(3));
  by_id.lookup_attr_id = 99;
  CHECK(by_id.DebugString() == "[99 3]");
  CHECK(TxValue::Scalar(Value::Long(3)).kind == TxValue::Kind::kScalar);
  CHECK(TxValue::Entity(EntityRef::Id(3)).kind == TxValue::Kind::kEntity);
}

}  // namespace
}  // namespace mentat::storage
