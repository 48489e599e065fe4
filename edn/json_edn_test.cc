#include "mentat/edn/json_edn.h"

#include <doctest/doctest.h>

#include <string>

#include "mentat/edn/edn_printer.h"

namespace mentat::edn {
namespace {

std::string JsonAsEdn(const std::string& json) {
  absl::StatusOr<EdnValue> v = JsonToEdn(json, "input 1");
  if (!v.ok()) return "error: " + std::string(v.status().message());
  return PrintEdn(*v);
}

TEST_CASE("json to edn: the documented mapping") {
  CHECK(JsonAsEdn("null") == "nil");
  CHECK(JsonAsEdn("true") == "true");
  CHECK(JsonAsEdn("-42") == "-42");
  CHECK(JsonAsEdn("18446744073709551615") == "18446744073709551615N");
  CHECK(JsonAsEdn("1.5") == "1.5");
  CHECK(JsonAsEdn("2.0") == "2.0");
  CHECK(JsonAsEdn(R"(":user/email")") == ":user/email");
  CHECK(JsonAsEdn(R"("::not a keyword")") == "\":not a keyword\"");
  CHECK(JsonAsEdn(R"("plain")") == "\"plain\"");
  CHECK(JsonAsEdn(R"([1, ":a", [2]])") == "[1 :a [2]]");
  CHECK(JsonAsEdn(R"({"#inst": "2024-01-02T03:04:05Z"})") ==
        "#inst \"2024-01-02T03:04:05Z\"");
  CHECK(JsonAsEdn(R"({"#inst": 0})") == "#inst \"1970-01-01T00:00:00Z\"");
  CHECK(JsonAsEdn(R"({"#uuid": "f81d4fae-7dec-11d0-a765-00a0c91e6bf6"})") ==
        "#uuid \"f81d4fae-7dec-11d0-a765-00a0c91e6bf6\"");
  CHECK(JsonAsEdn(R"({"#uuid": "F81D4FAE-7DEC-11D0-A765-00A0C91E6BF6"})") ==
        "#uuid \"f81d4fae-7dec-11d0-a765-00a0c91e6bf6\"");
  CHECK(JsonAsEdn(R"({"#ref": 17592186045418})") == "17592186045418");
  CHECK(JsonAsEdn(R"({"#bigint": "123456789012345678901234"})") ==
        "123456789012345678901234N");
  CHECK(JsonAsEdn(R"({"#bigint": "-007"})") == "-7N");
  CHECK(JsonAsEdn(R"({"#bigint": "-0"})") == "0N");
  CHECK(JsonAsEdn(R"({"#bigint": 12})") == "12N");
  CHECK(JsonAsEdn(R"({"#bigdec": "1.50"})") == "1.50M");
  CHECK(JsonAsEdn(R"({"#keyword": "a/b"})") == ":a/b");
  CHECK(JsonAsEdn(R"({"#symbol": "x"})") == "x");
  CHECK(JsonAsEdn(R"({"#string": ":x"})") == "\":x\"");
  CHECK(JsonAsEdn(R"({"#set": [1, 2]})") == "#{1 2}");
  CHECK(JsonAsEdn(R"({"#list": [1, 2]})") == "(1 2)");
  CHECK(JsonAsEdn(R"({":a/b": 1, "c": 2})") == "{:a/b 1, \"c\" 2}");
  CHECK(JsonAsEdn(R"({"name": "x\"y"})") == R"({"name" "x\"y"})");
  // NDJSON entity lines, as the shell imports them.
  CHECK(JsonAsEdn(R"({":user/email": "a@b.c", ":user/age": 42})") ==
        R"({:user/email "a@b.c", :user/age 42})");
  CHECK(JsonAsEdn(R"({":issue/assignee": [":user/email", "a@b.c"]})") ==
        R"({:issue/assignee [:user/email "a@b.c"]})");
}

TEST_CASE("json to edn: errors") {
  CHECK(JsonAsEdn("[1,").starts_with("error: input 1 (JSON)"));
  CHECK(JsonAsEdn("{").starts_with("error: input 1 (JSON)"));
  CHECK(JsonAsEdn(R"({"#inst": "yesterday"})").starts_with("error"));
  CHECK(
      JsonAsEdn(R"({"#inst": "2025-02-31"})").find("day 31 is out of range") !=
      std::string::npos);
  CHECK(JsonAsEdn(R"({"#uuid": 1})").starts_with("error"));
  // A keyword must read back as EDN (json_edn_fuzz regression).
  CHECK(JsonAsEdn(R"(":p/a{{ge")").find("cannot contain '{'") !=
        std::string::npos);
  CHECK(JsonAsEdn(R"({"#bigdec": "01.50"})").find("not an EDN decimal") !=
        std::string::npos);
  CHECK(JsonAsEdn(R"({"#bigint": "1.5"})").find("not a whole number") !=
        std::string::npos);
  CHECK(JsonAsEdn(R"({"#bigint": "-"})").find("not a whole number") !=
        std::string::npos);
  CHECK(JsonAsEdn(R"({"#nope": 1})").find("unknown tag") != std::string::npos);
  CHECK(JsonAsEdn(R"({"#set": [1, 1]})").find("duplicate") !=
        std::string::npos);
  CHECK(JsonAsEdn("\"\xff\"").starts_with("error"));
  CHECK(JsonAsEdn(std::string(600, '[') + std::string(600, ']'))
            .starts_with("error"));
  JsonReadOptions shallow;
  shallow.max_depth = 2;
  CHECK_FALSE(JsonToEdn("[[[1]]]", "x", shallow).ok());
  CHECK(JsonToEdn("[[1]]", "x", shallow).ok());
}

}  // namespace
}  // namespace mentat::edn
