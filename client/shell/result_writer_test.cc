#include "shell/result_writer.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "mentat/edn/edn_inst.h"
#include "shell/error_display.h"
#include "shell/progress_bar.h"

namespace mentat::cli {
namespace {

// Runs `fill` against a sink that writes into a temporary file, and returns
// what was written.
template <typename Fill>
std::string Capture(Fill fill) {
  std::FILE* f = std::tmpfile();
  {
    OutputSink sink(f, "", 0, 0);
    fill(&sink);
    sink.Finish();
  }
  std::rewind(f);
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  std::fclose(f);
  return out;
}

std::string Relation(OutputFormat format, bool header = true) {
  return Capture([&](OutputSink* sink) {
    WriterStyle style;
    style.format = format;
    style.header = header;
    style.row_count = header;
    ResultWriter w(sink, style, ResultShape::kRelation);
    w.Begin({"?e", "?name"});
    w.AddRow({Cell::Long(7), Cell::String("Ann")});
    w.AddRow({Cell::Long(12345), Cell::String("Bo, \"B\"")});
    w.End();
  });
}

TEST_CASE("result writer: aligned table with header and row count") {
  CHECK(Relation(OutputFormat::kTable) ==
        "    ?e | ?name\n"
        "-------+---------\n"
        "     7 | Ann\n"
        " 12345 | Bo, \"B\"\n"
        "(2 rows)\n");
  CHECK(Relation(OutputFormat::kTable, false) ==
        "     7 | Ann\n"
        " 12345 | Bo, \"B\"\n");
}

TEST_CASE("result writer: expanded table, a record per row") {
  const std::string out = Capture([&](OutputSink* sink) {
    WriterStyle style;
    style.expanded = true;
    ResultWriter w(sink, style, ResultShape::kRelation);
    w.Begin({"?e", "?name"});
    w.AddRow({Cell::Long(7), Cell::String("Ann")});
    w.AddRow({Cell::Long(12345), Cell::String("Bo, \"B\"")});
    w.End();
  });
  CHECK(out ==
        "-[ RECORD 1 ]-----\n"
        "?e    | 7\n"
        "?name | Ann\n"
        "-[ RECORD 2 ]-----\n"
        "?e    | 12345\n"
        "?name | Bo, \"B\"\n"
        "(2 rows)\n");
  // Records count on across the table's chunks.
  const std::string many = Capture([&](OutputSink* sink) {
    WriterStyle style;
    style.expanded = true;
    style.row_count = false;
    ResultWriter w(sink, style, ResultShape::kCollection);
    w.Begin({"?x"});
    for (size_t i = 0; i < ResultWriter::kTableChunk + 2; ++i) {
      w.AddRow({Cell::Long(static_cast<int64_t>(i))});
    }
    w.End();
  });
  const std::string last =
      "-[ RECORD " + std::to_string(ResultWriter::kTableChunk + 2) +
      " ]----\n?x | " + std::to_string(ResultWriter::kTableChunk + 1) + "\n";
  REQUIRE(many.size() >= last.size());
  CHECK(many.substr(many.size() - last.size()) == last);
}

TEST_CASE("result writer: csv quotes per RFC 4180") {
  CHECK(Relation(OutputFormat::kCsv) ==
        "?e,?name\n7,Ann\n12345,\"Bo, \"\"B\"\"\"\n");
  CHECK(CsvField("a\nb") == "\"a\nb\"");
  CHECK(CsvField("plain") == "plain");
  CHECK(CsvField(" lead") == "\" lead\"");
}

TEST_CASE("result writer: edn and json") {
  CHECK(Relation(OutputFormat::kEdn) ==
        "[[7 \"Ann\"]\n [12345 \"Bo, \\\"B\\\"\"]]\n");
  CHECK(Relation(OutputFormat::kJson) ==
        "[{\"e\": 7, \"name\": \"Ann\"},\n"
        " {\"e\": 12345, \"name\": \"Bo, \\\"B\\\"\"}]\n");
  const std::string scalar = Capture([](OutputSink* sink) {
    WriterStyle style;
    style.format = OutputFormat::kEdn;
    ResultWriter w(sink, style, ResultShape::kScalar);
    w.Begin({"?e"});
    w.End();
  });
  CHECK(scalar == "nil\n");
  const std::string collection = Capture([](OutputSink* sink) {
    WriterStyle style;
    style.format = OutputFormat::kJson;
    ResultWriter w(sink, style, ResultShape::kCollection);
    w.Begin({"?e"});
    w.AddRow({Cell::Keyword("a/b")});
    w.AddRow({Cell::Keyword("c")});
    w.End();
  });
  CHECK(collection == "[\":a/b\", \":c\"]\n");
}

TEST_CASE("cell: edn and json of every kind") {
  CHECK(ToEdn(Cell::Instant(0)) == "#inst \"1970-01-01T00:00:00Z\"");
  CHECK(ToEdn(Cell::Instant(1735689600123000)) ==
        "#inst \"2025-01-01T00:00:00.123Z\"");
  CHECK(edn::FormatInstant(-1) == "1969-12-31T23:59:59.999999Z");
  CHECK(ToEdn(Cell::Double(1)) == "1.0");
  CHECK(ToEdn(Cell::Double(NAN)) == "##NaN");
  CHECK(ToJson(Cell::Double(INFINITY)) == "{\"#double\": \"Infinity\"}");
  CHECK(ToEdn(Cell::BigInt("12")) == "12N");
  CHECK(ToEdn(Cell::BigDec("1.5")) == "1.5M");
  CHECK(ToEdn(Cell::String("a\"b\n")) == "\"a\\\"b\\n\"");
  CHECK(ToJson(Cell::String("\x01\xff")) == "\"\\u0001\\ufffd\"");
  CHECK(ToJson(Cell::Keyword("a/b")) == "\":a/b\"");
  CHECK(ToEdn(Cell::Bytes("hi!")) == "#bytes \"aGkh\"");
  CHECK(Base64("h") == "aA==");
  CHECK(ToJson(Cell::Instant(0)) == "{\"#inst\": \"1970-01-01T00:00:00Z\"}");
  Cell map = Cell::Collection(
      Cell::Kind::kMap,
      {Cell::Keyword("db/id"), Cell::Long(1), Cell::Keyword("a/b"),
       Cell::Collection(Cell::Kind::kVector, {Cell::Long(1), Cell::Nil()})});
  CHECK(ToEdn(map) == "{:db/id 1, :a/b [1 nil]}");
  CHECK(ToJson(map) == "{\":db/id\": 1, \":a/b\": [1, null]}");
  CHECK(ToPlainText(Cell::String("x")) == "x");
  CHECK(ToPlainText(Cell::Nil()).empty());
}

TEST_CASE("cell: pretty EDN breaks long maps") {
  std::vector<Cell> items;
  for (int i = 0; i < 6; ++i) {
    items.push_back(Cell::Keyword("issue/attribute-" + std::to_string(i)));
    items.push_back(Cell::String("some value " + std::to_string(i)));
  }
  const std::string pretty =
      PrettyEdn(Cell::Collection(Cell::Kind::kMap, items));
  CHECK(pretty.find("\n :issue/attribute-1 \"some value 1\"") !=
        std::string::npos);
  CHECK(PrettyEdn(Cell::Collection(Cell::Kind::kMap,
                                   {Cell::Keyword("a"), Cell::Long(1)})) ==
        "{:a 1}");
}

TEST_CASE("output sink: pages only what does not fit") {
  std::FILE* f = std::tmpfile();
  {
    // "cat" stands in for the pager; short output never reaches it.
    OutputSink sink(f, "cat >/dev/null", 10, 80);
    sink.Write("one\ntwo\n");
    sink.Finish();
  }
  std::rewind(f);
  char buf[64] = {};
  CHECK(std::fread(buf, 1, sizeof buf - 1, f) == 8);
  std::fclose(f);

  std::FILE* g = std::tmpfile();
  {
    OutputSink sink(g, "cat >/dev/null", 3, 80);
    for (int i = 0; i < 5; ++i) sink.Write("line\n");
    sink.Finish();
  }
  // Paged: nothing went to the file.
  CHECK(std::ftell(g) == 0);
  std::fclose(g);
}

TEST_CASE("error display: caret under the reported position") {
  ErrorContext ctx;
  ctx.input = ".q [:find ?e :where [?e :user/emial \"x\"]]";
  ctx.request_offset = 3;
  const std::string out =
      RenderError("line 1, column 22: unknown attribute :user/emial", ctx);
  CHECK(out ==
        "ERROR: unknown attribute :user/emial\n"
        "LINE 1: .q [:find ?e :where [?e :user/emial \"x\"]]\n"
        "                                ^\n");

  ErrorContext multi;
  multi.input = "[:find ?e\n :where [?e :a/b ?x]\n [(foo ?x)]]";
  multi.first_line = 10;
  multi.source = "script.edn:10: ";
  CHECK(RenderError("line 3, column 3: unknown function foo", multi) ==
        "script.edn:10: ERROR: unknown function foo\n"
        "LINE 12:  [(foo ?x)]]\n"
        "           ^\n");

  ErrorContext none;
  none.input = "[:a]";
  CHECK(RenderError("database not found", none) ==
        "ERROR: database not found\n");
  CHECK(RenderError("line 9, column 1: past the end", none) ==
        "ERROR: line 9, column 1: past the end\n");
  const auto pos = ParseMessagePosition("line 3, column 14: bad");
  REQUIRE(pos.has_value());
  CHECK(pos->line == 3);
  CHECK(pos->column == 14);
  CHECK(pos->rest == "bad");
  CHECK_FALSE(ParseMessagePosition("line x").has_value());
}

TEST_CASE("progress: bar, rate and ETA") {
  ImportProgress p;
  p.bytes_done = 512 * 1024;
  p.bytes_total = 1024 * 1024;
  p.datoms = 50000;
  p.elapsed_seconds = 2;
  const std::string line = RenderProgress(p, 80);
  CHECK(line.size() <= 80);
  CHECK(line.find(" 50%") != std::string::npos);
  CHECK(line.find("25.0K datoms/s") != std::string::npos);
  CHECK(line.find("ETA 0:02") != std::string::npos);
  CHECK(line.find("512.0 KB/1.0 MB") != std::string::npos);
  p.bytes_total = 0;
  CHECK(RenderProgress(p, 80).find("ETA") == std::string::npos);
  CHECK(HumanDuration(3725) == "1:02:05");
  CHECK(HumanCount(1234567) == "1.23M");
}

}  // namespace
}  // namespace mentat::cli
