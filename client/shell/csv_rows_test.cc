#include "shell/csv_rows.h"

#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

namespace mentat::cli {
namespace {

// Feeds `text` line by line; the records, or the first error.
std::vector<std::vector<std::string>> Records(const std::string& text,
                                              std::string* error = nullptr) {
  CsvRecordReader reader;
  std::vector<std::vector<std::string>> out;
  size_t at = 0;
  uint32_t line = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    end = end == std::string::npos ? text.size() : end + 1;
    absl::StatusOr<bool> complete =
        reader.Feed(std::string_view(text).substr(at, end - at), ++line);
    at = end;
    if (!complete.ok()) {
      if (error != nullptr) *error = std::string(complete.status().message());
      return out;
    }
    if (*complete) {
      std::vector<std::string> r = reader.TakeRecord();
      if (!r.empty()) out.push_back(r);
    }
  }
  if (error != nullptr && reader.in_quotes()) *error = "open quote";
  return out;
}

using Rows = std::vector<std::vector<std::string>>;

TEST_CASE("CSV records as RFC 4180 writes them") {
  CHECK(Records("a,b\r\n1,2\r\n") == Rows{{"a", "b"}, {"1", "2"}});
  CHECK(Records("a,,c,\n") == Rows{{"a", "", "c", ""}});
  CHECK(Records("\"x, y\",\"say \"\"hi\"\"\"\n") ==
        Rows{{"x, y", "say \"hi\""}});
  CHECK(Records("\"two\nlines\",z\n") == Rows{{"two\nlines", "z"}});
  CHECK(Records("\"\",1\n") == Rows{{"", "1"}});
  CHECK(Records("\n\nq\n") == Rows{{"q"}});  // blank lines pass
  CHECK(Records("last,line") == Rows{{"last", "line"}});
  std::string error;
  Records("ab\"c\n", &error);
  CHECK(error.find("a quote inside an unquoted field") != std::string::npos);
  error.clear();
  Records("\"ab\"c\n", &error);
  CHECK(error.find("text after a closing quote") != std::string::npos);
  error.clear();
  Records("\"open\n", &error);
  CHECK(error == "open quote");
}

TEST_CASE("CSV rows become entity maps by the attributes' types") {
  const std::map<std::string, std::string> types = {
      {"p/name", ":db.type/string"},  {"p/age", ":db.type/long"},
      {"p/score", ":db.type/double"}, {"p/ok", ":db.type/boolean"},
      {"p/kind", ":db.type/keyword"}, {"p/owner", ":db.type/ref"},
      {"u/email", ":db.type/string"}, {"p/big", ":db.type/bigint"},
      {"p/at", ":db.type/instant"},   {"p/blob", ":db.type/bytes"}};
  auto mapping = CsvMapping::Make(
      {"name", ":p/age", "p/score", "ok", "kind", "who", "skip", "db/id"},
      {{"name", ":p/name"},
       {"ok", "p/ok"},
       {"kind", ":p/kind"},
       {"who", ":p/owner->:u/email"},
       {"skip", ""}},
      types);
  REQUIRE_MESSAGE(mapping.ok(), mapping.status().ToString());
  std::string out;
  auto any = mapping->AppendEntity(
      {"A \"q\"\\", "42", "3", "Yes", "x/y", "a@x", "ignored", "t1"}, &out);
  REQUIRE(any.ok());
  CHECK(*any);
  CHECK(out ==
        "{:p/name \"A \\\"q\\\"\\\\\" :p/age 42 :p/score 3.0 :p/ok true "
        ":p/kind :x/y :p/owner [:u/email \"a@x\"] :db/id \"t1\"}");
  out.clear();
  any = mapping->AppendEntity({"", "", "", "", "", "", "x", ""}, &out);
  REQUIRE(any.ok());
  CHECK(!*any);
  CHECK(out.empty());

  auto refused = [&](std::vector<std::string> row) {
    std::string ignored;
    auto r = mapping->AppendEntity(row, &ignored);
    return r.ok() ? std::string() : std::string(r.status().message());
  };
  CHECK(refused({"n", "4x", "", "", "", "", "", ""}) ==
        "column 2 (:p/age, :p/age, :db.type/long): not an integer: \"4x\"");
  CHECK(refused({"n", "99999999999999999999", "", "", "", "", "", ""})
            .find("beyond 64 bits") != std::string::npos);
  CHECK(refused({"n", "", "nan", "", "", "", "", ""})
            .find("not a decimal number") != std::string::npos);
  CHECK(refused({"n", "", "", "maybe", "", "", "", ""}).find("not a boolean") !=
        std::string::npos);
  CHECK(refused({"n", "", "", "", "a b", "", "", ""}).find("not a keyword") !=
        std::string::npos);
  CHECK(refused({"n"}) == "the row has 1 fields, the header 8");

  auto make_error = [&](std::vector<std::string> header,
                        std::vector<std::pair<std::string, std::string>> map) {
    auto m = CsvMapping::Make(header, map, types);
    return m.ok() ? std::string() : std::string(m.status().message());
  };
  CHECK(make_error({"p/nme"}, {}).find("did you mean :p/name?") !=
        std::string::npos);
  CHECK(make_error({"p/name", "p/name"}, {}).find("named by two columns") !=
        std::string::npos);
  CHECK(make_error({"p/name"}, {{"b", ":p/age"}})
            .find("--map names column b, which the header does not have") !=
        std::string::npos);
  CHECK(make_error({"a"}, {{"a", ":p/age->:u/email"}}).find("not a ref") !=
        std::string::npos);
  CHECK(make_error({""}, {}).find("has no name") != std::string::npos);
  auto blob = CsvMapping::Make({"p/blob"}, {}, types);
  REQUIRE(blob.ok());
  std::string ignored;
  auto r = blob->AppendEntity({"AAEC"}, &ignored);
  CHECK(!r.ok());
  CHECK(r.status().message().find("cannot be read from CSV") !=
        std::string::npos);
}

TEST_CASE("--map options split at the first '='") {
  auto m = ParseColumnMap(" who = :p/owner->:u/email ");
  REQUIRE(m.ok());
  CHECK(m->first == "who");
  CHECK(m->second == ":p/owner->:u/email");
  m = ParseColumnMap("skip=");
  REQUIRE(m.ok());
  CHECK(m->second.empty());
  CHECK(!ParseColumnMap("nothing").ok());
  CHECK(!ParseColumnMap("=x").ok());
}

}  // namespace
}  // namespace mentat::cli
