#include "shell/json_edn.h"

#include <doctest/doctest.h>

#include "shell/edn_literal.h"
#include "shell/edn_scan.h"

namespace mentat::cli {
namespace {

std::string Edn(std::string_view json) {
  JsonToEdn converter;
  absl::StatusOr<std::string> out = converter.Convert(json);
  REQUIRE_MESSAGE(out.ok(), std::string(out.status().message()));
  return *out;
}

TEST_CASE("json to edn: the server's JSON mapping") {
  CHECK(Edn(R"({":user/email": "a@b.c", ":user/age": 42})") ==
        R"({:user/email "a@b.c", :user/age 42})");
  CHECK(Edn(R"({":issue/assignee": [":user/email", "a@b.c"]})") ==
        R"({:issue/assignee [:user/email "a@b.c"]})");
  CHECK(Edn(R"({":db/id": "t1", ":issue/state": ":state/open"})") ==
        R"({:db/id "t1", :issue/state :state/open})");
  CHECK(Edn(R"(["::x", null, true, 1.5, 18446744073709551615])") ==
        R"([":x" nil true 1.5 18446744073709551615N])");
  CHECK(Edn(R"({"#inst": "2025-01-02T03:04:05Z"})") ==
        R"(#inst "2025-01-02T03:04:05Z")");
  CHECK(Edn(R"({"#inst": 0})") == R"(#inst "1970-01-01T00:00:00Z")");
  CHECK(Edn(R"({"#uuid": "F81D4FAE-7DEC-11D0-A765-00A0C91E6BF6"})") ==
        R"(#uuid "f81d4fae-7dec-11d0-a765-00a0c91e6bf6")");
  CHECK(Edn(R"({"#set": [1, 2]})") == "#{1 2}");
  CHECK(Edn(R"({"#ref": 17592186045418})") == "17592186045418");
  CHECK(Edn(R"({"#bigdec": "1.50"})") == "1.50M");
  CHECK(Edn(R"({"#keyword": "a/b"})") == ":a/b");
  CHECK(Edn(R"({"name": "x\"y"})") == R"({"name" "x\"y"})");
  CHECK(Edn("2.0") == "2.0");

  JsonToEdn converter;
  CHECK_FALSE(converter.Convert("{").ok());
  CHECK_FALSE(converter.Convert(R"({"#inst": "yesterday"})").ok());
}

TEST_CASE("edn literals: entities, points, instants") {
  auto e = ParseEntity("17592186045418");
  REQUIRE(e.ok());
  CHECK(e->id() == 17592186045418);
  e = ParseEntity(":state/open");
  REQUIRE(e.ok());
  CHECK(e->ident() == "state/open");
  e = ParseEntity("[:user/email \"a@b.c\"]");
  REQUIRE(e.ok());
  CHECK(e->lookup().attribute() == "user/email");
  CHECK(e->lookup().value().string_value() == "a@b.c");
  CHECK_FALSE(ParseEntity("\"x\"").ok());
  CHECK_FALSE(ParseEntity("[:a]").ok());

  auto p = ParseTxPoint("1005");
  REQUIRE(p.ok());
  CHECK_FALSE(p->is_instant);
  CHECK(p->tx == 1005);
  p = ParseTxPoint("#inst \"2025-01-01T00:00:00Z\"");
  REQUIRE(p.ok());
  CHECK(p->is_instant);
  CHECK(p->instant_micros == 1735689600000000);
  p = ParseTxPoint("2025-01-01");
  REQUIRE(p.ok());
  CHECK(p->instant_micros == 1735689600000000);
  CHECK_FALSE(ParseTxPoint("soon").ok());

  CHECK(*ParseInstant("2025-01-01T01:00:00+01:00") == 1735689600000000);
  CHECK(*ParseInstant("1970-01-01T00:00:00.5Z") == 500000);
  CHECK_FALSE(ParseInstant("2025-13-01").ok());

  auto v = ParseScalar("#uuid \"f81d4fae-7dec-11d0-a765-00a0c91e6bf6\"");
  REQUIRE(v.ok());
  CHECK(FormatUuid(v->uuid()) == "f81d4fae-7dec-11d0-a765-00a0c91e6bf6");
  CHECK(ParseScalar("-3")->long_value() == -3);
  CHECK(ParseScalar("2.5")->double_value() == 2.5);
  CHECK(ParseScalar("\"a\\\"b\"")->string_value() == "a\"b");
}

TEST_CASE("edn balance: fed line by line") {
  EdnBalance b;
  b.Feed("[{:a \"]\" ; ]]\n");
  CHECK_FALSE(b.balanced());
  b.Feed(" :b \\] }\n");
  CHECK_FALSE(b.balanced());
  b.Feed("]\n");
  CHECK(b.balanced());
}

}  // namespace
}  // namespace mentat::cli
