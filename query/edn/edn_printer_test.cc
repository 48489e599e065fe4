#include "mentat/query/edn/edn_printer.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "mentat/query/edn/edn_reader.h"

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

// Random values for the round-trip property.
class RandomEdn {
 public:
  explicit RandomEdn(uint64_t seed) : rng_(seed) {}

  EdnValue Value(int depth) {
    const int kinds = depth > 4 ? 12 : 17;
    switch (Uniform(0, kinds - 1)) {
      case 0:
        return EdnValue::Nil();
      case 1:
        return EdnValue::Bool(Uniform(0, 1) == 1);
      case 2:
        return EdnValue::Int(Int64());
      case 3:
        return EdnValue::Float(Double());
      case 4:
        return EdnValue::String(Text());
      case 5:
        return EdnValue::Keyword(Name());
      case 6:
        return EdnValue::Symbol(Name());
      case 7:
        return EdnValue::Char(CodePoint());
      case 8: {
        std::string digits = Uniform(0, 1) ? "-" : "";
        digits += static_cast<char>('1' + Uniform(0, 8));
        for (int i = Uniform(0, 40); i > 0; --i) {
          digits += static_cast<char>('0' + Uniform(0, 9));
        }
        return EdnValue::BigInt(digits);
      }
      case 9: {
        std::string text = std::to_string(Int64() % 100000);
        if (Uniform(0, 1)) text += "." + std::to_string(Uniform(0, 99999));
        if (Uniform(0, 3) == 0) text += "e" + std::to_string(Uniform(-20, 20));
        return EdnValue::BigDec(text);
      }
      case 10:
        return EdnValue::Inst(Int64());
      case 11: {
        std::string bytes(16, '\0');
        for (char& b : bytes) b = static_cast<char>(Uniform(0, 255));
        return EdnValue::Uuid(bytes);
      }
      case 12:
        return EdnValue::List(Items(depth));
      case 13:
        return EdnValue::Vector(Items(depth));
      case 14: {
        // Distinct keys: each new key is checked against the previous.
        std::vector<EdnValue> kv;
        for (int n = Uniform(0, 20); n > 0; --n) {
          EdnValue key = Value(depth + 1);
          bool dup = false;
          for (size_t i = 0; i < kv.size(); i += 2) dup = dup || kv[i] == key;
          if (dup) continue;
          kv.push_back(std::move(key));
          kv.push_back(Value(depth + 1));
        }
        return EdnValue::Map(std::move(kv));
      }
      case 15: {
        std::vector<EdnValue> items;
        for (EdnValue& item : Items(depth)) {
          bool dup = false;
          for (const EdnValue& seen : items) dup = dup || seen == item;
          if (!dup) items.push_back(std::move(item));
        }
        return EdnValue::Set(std::move(items));
      }
      default:
        return EdnValue::Tagged(Uniform(0, 1) ? "my/tag" : "point",
                                Value(depth + 1));
    }
  }

 private:
  int Uniform(int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng_);
  }

  int64_t Int64() {
    switch (Uniform(0, 3)) {
      case 0:
        return Uniform(-10, 10);
      case 1:
        return Uniform(0, 1) ? std::numeric_limits<int64_t>::max()
                             : std::numeric_limits<int64_t>::min();
      default:
        return static_cast<int64_t>(rng_());
    }
  }

  double Double() {
    switch (Uniform(0, 5)) {
      case 0:
        return Uniform(-1000, 1000) / 8.0;
      case 1: {
        const double specials[] = {std::numeric_limits<double>::infinity(),
                                   -std::numeric_limits<double>::infinity(),
                                   std::nan(""),
                                   -0.0,
                                   0.0,
                                   std::numeric_limits<double>::denorm_min()};
        return specials[Uniform(0, 5)];
      }
      default: {
        // Any finite bit pattern.
        for (;;) {
          const uint64_t bits = rng_();
          double d;
          std::memcpy(&d, &bits, sizeof d);
          if (std::isfinite(d)) return d;
        }
      }
    }
  }

  uint32_t CodePoint() {
    switch (Uniform(0, 4)) {
      case 0:
        return static_cast<uint32_t>(Uniform(0, 0x7F));
      case 1:
        return static_cast<uint32_t>(Uniform(0x80, 0xD7FF));
      case 2:
        return static_cast<uint32_t>(Uniform(0xE000, 0x10FFFF));
      default:
        return static_cast<uint32_t>(Uniform(0x20, 0x7E));
    }
  }

  std::string Text() {
    std::string s;
    for (int n = Uniform(0, 30); n > 0; --n) {
      const uint32_t cp = CodePoint();
      if (cp < 0x80) {
        s.push_back(static_cast<char>(cp));
      } else if (cp < 0x800) {
        s.push_back(static_cast<char>(0xC0 | cp >> 6));
        s.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
      } else if (cp < 0x10000) {
        s.push_back(static_cast<char>(0xE0 | cp >> 12));
        s.push_back(static_cast<char>(0x80 | (cp >> 6 & 0x3F)));
        s.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
      } else {
        s.push_back(static_cast<char>(0xF0 | cp >> 18));
        s.push_back(static_cast<char>(0x80 | (cp >> 12 & 0x3F)));
        s.push_back(static_cast<char>(0x80 | (cp >> 6 & 0x3F)));
        s.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
      }
    }
    return s;
  }

  std::string Part() {
    static constexpr char kFirst[] = "abcxyzABZ*!_?$%&=<>";
    static constexpr char kRest[] = "abcxyzABZ0123456789*+!-_?$%&=<>.:#";
    std::string s(1, kFirst[Uniform(0, sizeof kFirst - 2)]);
    for (int n = Uniform(0, 10); n > 0; --n) {
      s.push_back(kRest[Uniform(0, sizeof kRest - 2)]);
    }
    return s;
  }

  std::string Name() {
    if (Uniform(0, 1)) return Part();
    return Part() + "/" + Part();
  }

  std::vector<EdnValue> Items(int depth) {
    std::vector<EdnValue> items;
    for (int n = Uniform(0, 6); n > 0; --n) items.push_back(Value(depth + 1));
    return items;
  }

  std::mt19937_64 rng_;
};

TEST_CASE("edn printer: random values round-trip") {
  RandomEdn random(20250304);
  for (int i = 0; i < 3000; ++i) {
    EdnValue v = random.Value(0);
    CheckRoundTrip(v);
  }
}

}  // namespace
}  // namespace mentat::edn
