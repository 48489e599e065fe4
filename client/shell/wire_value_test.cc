#include "shell/wire_value.h"

#include <doctest/doctest.h>

#include <string>

#include "mentat/edn/edn_reader.h"

namespace mentat::cli {
namespace {

std::string Message(const absl::Status& status) {
  return std::string(status.message());
}

TEST_CASE("wire values: entities") {
  auto e = ParseEntity("17592186045418");
  REQUIRE(e.ok());
  CHECK(e->id() == 17592186045418);
  e = ParseEntity(" :state/open ");
  REQUIRE(e.ok());
  CHECK(e->ident() == "state/open");
  e = ParseEntity("[:user/email \"a@b.c\"]");
  REQUIRE(e.ok());
  CHECK(e->lookup().attribute() == "user/email");
  CHECK(e->lookup().value().string_value() == "a@b.c");
  e = ParseEntity("[:user/id #uuid \"f81d4fae-7dec-11d0-a765-00a0c91e6bf6\"]");
  REQUIRE(e.ok());
  CHECK(e->lookup().value().uuid().size() == 16);
  CHECK_FALSE(ParseEntity("\"x\"").ok());
  CHECK(Message(ParseEntity("[:a]").status())
            .starts_with("a lookup ref is [:attribute value]"));
  CHECK(Message(ParseEntity("[1 2]").status())
            .starts_with("a lookup ref starts with an attribute keyword"));
  // The shared reader's error, with its reason.
  CHECK(Message(ParseEntity("[:a \"x]").status())
            .starts_with("an entity is an id, an :ident or a lookup ref "
                         "(line 1, column "));
}

TEST_CASE("wire values: transaction points") {
  auto p = ParseTxPoint("1005");
  REQUIRE(p.ok());
  CHECK_FALSE(p->is_instant);
  CHECK(p->tx == 1005);
  p = ParseTxPoint("#inst \"2025-01-01T00:00:00Z\"");
  REQUIRE(p.ok());
  CHECK(p->is_instant);
  CHECK(p->instant_micros == 1735689600000000);
  p = ParseTxPoint("\"2025-01-01T01:00:00+01:00\"");
  REQUIRE(p.ok());
  CHECK(p->instant_micros == 1735689600000000);
  p = ParseTxPoint("2025-01-01");
  REQUIRE(p.ok());
  CHECK(p->instant_micros == 1735689600000000);
  p = ParseTxPoint("2024-02-29T12:00");
  REQUIRE(p.ok());
  CHECK(p->is_instant);
  CHECK(Message(ParseTxPoint("soon").status())
            .starts_with("expected a tx id, a t, or an instant"));
}

// Issue 16 item 16: the shell's own date parser checked only day <= 31, so
// 2025-02-31 became March 3. Dates that name no day are refused, with why.
TEST_CASE("wire values: instants that name no real time are refused") {
  CHECK(Message(ParseTxPoint("2025-02-31").status()) ==
        "invalid instant \"2025-02-31\": day 31 is out of range (1-28)");
  CHECK(Message(ParseTxPoint("2023-02-29").status()) ==
        "invalid instant \"2023-02-29\": day 29 is out of range (1-28)");
  CHECK(Message(ParseTxPoint("2025-04-31T10:00:00Z").status())
            .starts_with("invalid instant \"2025-04-31T10:00:00Z\": day 31"));
  CHECK(Message(ParseTxPoint("2025-13-01").status()) ==
        "invalid instant \"2025-13-01\": month 13 is out of range (1-12)");
  CHECK(Message(ParseTxPoint("2025-01-01T24:00:00Z").status()) ==
        "invalid instant \"2025-01-01T24:00:00Z\": hour 24 is out of range "
        "(0-23)");
  CHECK(Message(ParseTxPoint("2016-12-31T23:59:60Z").status()) ==
        "invalid instant \"2016-12-31T23:59:60Z\": leap seconds are not "
        "supported");
  CHECK(Message(ParseTxPoint("2025-01-01T00:00:00+24:00").status())
            .find("offset hour 24 is out of range") != std::string::npos);
  CHECK(Message(ParseTxPoint("\"2025-02-31\"").status()) ==
        "invalid instant \"2025-02-31\": day 31 is out of range (1-28)");
  CHECK(Message(ParseTxPoint("#inst \"2025-02-31\"").status())
            .find("day 31 is out of range (1-28)") != std::string::npos);
}

TEST_CASE("wire values: EDN to the wire's typed values") {
  auto read = [](std::string_view text) {
    absl::StatusOr<edn::EdnValue> v = edn::ParseEdn(text);
    REQUIRE(v.ok());
    return ToWireValue(*v);
  };
  CHECK(read("nil").nil());
  CHECK(read("-3").long_value() == -3);
  CHECK(read("2.5").double_value() == 2.5);
  CHECK(read("\"a\\\"b\"").string_value() == "a\"b");
  CHECK(read(":a/b").keyword() == "a/b");
  CHECK(read("12N").bigint() == "12");
  CHECK(read("1.50M").bigdec() == "1.50");
  CHECK(read("\\a").char_value() == 'a');
  CHECK(read("#inst \"1970-01-01T00:00:00.5Z\"").instant_micros() == 500000);
  CHECK(read("[1 (2)]").list().values(1).list().values(0).long_value() == 2);
  CHECK(read("#{1}").set().values_size() == 1);
  CHECK(read("{:a 1}").map().entries(0).key().keyword() == "a");
  CHECK(read("#my/tag 1").tagged().tag() == "my/tag");
}

}  // namespace
}  // namespace mentat::cli
