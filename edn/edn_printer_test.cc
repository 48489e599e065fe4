#include "mentat/edn/edn_printer.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "mentat/edn/edn_reader.h"
#include "testing/random_edn.h"

namespace mentat::edn {
namespace {

std::string Msg(const absl::Status& s) {
  return std::string(s.message().data(), s.message().size());
}

EdnValue Read(std::string_view text) {
  absl::StatusOr<EdnValue> v = ParseEdn(text);
  INFO("input: ", std::string(text));
  REQUIRE_MESSAGE(v.ok(), Msg(v.status()));
  return *std::move(v);
}

// Prints what `text` reads as.
std::string Reprint(std::string_view text) { return PrintEdn(Read(text)); }

void CheckRoundTrip(const EdnValue& v) {
  const std::string printed = PrintEdn(v);
  absl::StatusOr<EdnValue> back = ParseEdn(printed);
  INFO("printed: ", printed);
  REQUIRE_MESSAGE(back.ok(), Msg(back.status()));
  CHECK(*back == v);
  CHECK(PrintEdn(*back) == printed);
}

TEST_CASE("edn printer: scalars") {
  CHECK(Reprint("nil") == "nil");
  CHECK(Reprint("true") == "true");
  CHECK(Reprint("false") == "false");
  CHECK(Reprint("+42") == "42");
  CHECK(Reprint("-9223372036854775808") == "-9223372036854775808");
  CHECK(Reprint("12N") == "12N");
  CHECK(Reprint("99999999999999999999") == "99999999999999999999N");
  CHECK(Reprint("1.50M") == "1.50M");
  CHECK(Reprint("1e3M") == "1e3M");
  CHECK(Reprint(":a/b") == ":a/b");
  CHECK(Reprint("foo.bar/baz") == "foo.bar/baz");
  CHECK(Reprint("/") == "/");
}

TEST_CASE("edn printer: floats") {
  CHECK(PrintEdn(EdnValue::Float(1.0)) == "1.0");
  CHECK(PrintEdn(EdnValue::Float(1.5)) == "1.5");
  CHECK(PrintEdn(EdnValue::Float(-0.0)) == "-0.0");
  CHECK(PrintEdn(EdnValue::Float(0.1)) == "0.1");
  CHECK(PrintEdn(EdnValue::Float(100.0)) == "100.0");
  CHECK(PrintEdn(EdnValue::Float(1e300)) == "1e+300");
  CHECK(PrintEdn(EdnValue::Float(1.5e-7)) == "1.5e-07");
  CHECK(PrintEdn(EdnValue::Float(std::numeric_limits<double>::infinity())) ==
        "##Inf");
  CHECK(PrintEdn(EdnValue::Float(-std::numeric_limits<double>::infinity())) ==
        "##-Inf");
  CHECK(PrintEdn(EdnValue::Float(std::nan(""))) == "##NaN");
  for (double d :
       {0.1, 1.0 / 3, 2.0 / 3, 1e21, 1e22, 123456789.125,
        std::numeric_limits<double>::max(), std::numeric_limits<double>::min(),
        std::numeric_limits<double>::denorm_min(),
        std::numeric_limits<double>::epsilon(), -0.0}) {
    CheckRoundTrip(EdnValue::Float(d));
  }
  CHECK(std::signbit(Read(PrintEdn(EdnValue::Float(-0.0))).as_double()));
}

TEST_CASE("edn printer: strings and characters") {
  CHECK(PrintEdn(EdnValue::String("plain")) == "\"plain\"");
  CHECK(PrintEdn(EdnValue::String("q\"b\\n\nt\tr\rb\bf\f")) ==
        R"("q\"b\\n\nt\tr\rb\bf\f")");
  CHECK(PrintEdn(EdnValue::String(std::string("\0\x01\x1f", 3))) ==
        R"("\u0000\u0001\u001f")");
  CHECK(PrintEdn(EdnValue::String("caf\xC3\xA9")) == "\"caf\xC3\xA9\"");
  CHECK(PrintEdn(EdnValue::Char('a')) == "\\a");
  CHECK(PrintEdn(EdnValue::Char('\n')) == "\\newline");
  CHECK(PrintEdn(EdnValue::Char('\r')) == "\\return");
  CHECK(PrintEdn(EdnValue::Char(' ')) == "\\space");
  CHECK(PrintEdn(EdnValue::Char('\t')) == "\\tab");
  CHECK(PrintEdn(EdnValue::Char('\f')) == "\\formfeed");
  CHECK(PrintEdn(EdnValue::Char('\b')) == "\\backspace");
  CHECK(PrintEdn(EdnValue::Char(1)) == "\\u0001");
  CHECK(PrintEdn(EdnValue::Char(0xE9)) == "\\\xC3\xA9");
  for (uint32_t c : {uint32_t{'\\'}, uint32_t{'"'}, uint32_t{'('},
                     uint32_t{','}, uint32_t{';'}, uint32_t{'u'}, uint32_t{0},
                     uint32_t{0x7F}, uint32_t{0xFFFF}, uint32_t{0x1F600}}) {
    CheckRoundTrip(EdnValue::Vector({EdnValue::Char(c), EdnValue::Int(1)}));
  }
}

TEST_CASE("edn printer: collections and tagged literals") {
  CHECK(Reprint("[1 2 3]") == "[1 2 3]");
  CHECK(Reprint("(1 (2) [])") == "(1 (2) [])");
  CHECK(Reprint("{:a 1, :b [2]}") == "{:a 1, :b [2]}");
  CHECK(Reprint("#{}") == "#{}");
  CHECK(Reprint("#{:x}") == "#{:x}");
  CHECK(Reprint("#my/tag {:a 1}") == "#my/tag {:a 1}");
  CHECK(Reprint("#inst \"2025-03-04T11:22:00+01:00\"") ==
        "#inst \"2025-03-04T10:22:00Z\"");
  CHECK(Reprint("#inst \"2025-03-04T10:22:00.000001Z\"") ==
        "#inst \"2025-03-04T10:22:00.000001Z\"");
  CHECK(Reprint("#uuid \"F81D4FAE-7DEC-11D0-A765-00A0C91E6BF6\"") ==
        "#uuid \"f81d4fae-7dec-11d0-a765-00a0c91e6bf6\"");
}

TEST_CASE("edn printer: abbreviated") {
  EdnValue big = Read("[1 2 3 4 5 6 7 8 9 10 11 12 13 14 15]");
  CHECK(PrintEdnAbbreviated(big, 100) == PrintEdn(big));
  CHECK(PrintEdnAbbreviated(big, 10) == "[1 2 3 4 5...");
  std::vector<EdnValue> many(100000, EdnValue::Keyword("a/b"));
  const std::string s = PrintEdnAbbreviated(EdnValue::Vector(many), 100);
  CHECK(s.size() == 103);
  // Cuts on a character boundary.
  CHECK(PrintEdnAbbreviated(EdnValue::String("\xC3\xA9\xC3\xA9"), 2) ==
        "\"\"...");
  CHECK(PrintEdnAbbreviated(EdnValue::String("\xC3\xA9\xC3\xA9"), 4) ==
        "\"\xC3\xA9\"...");
  // A long text is quoted as an excerpt whose size marker fits the
  // budget; it is never printed whole first.
  const std::string huge(8 << 20, 'x');
  const std::string e =
      PrintEdnAbbreviated(EdnValue::Vector({EdnValue::String(huge)}), 100);
  CHECK(e == "[\"" + std::string(50, 'x') + "\"\u2026(8388608 bytes)]");
  CHECK(PrintEdnAbbreviated(EdnValue::Keyword("a/" + huge), 100).size() < 100);
}

TEST_CASE("edn printer: random values round-trip") {
  testing::RandomEdn random(20250304);
  for (int i = 0; i < 3000; ++i) {
    EdnValue v = random.Value(0);
    CheckRoundTrip(v);
  }
}

}  // namespace
}  // namespace mentat::edn
