#include "mentat/edn/edn_scan.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "mentat/edn/edn_printer.h"
#include "mentat/edn/edn_reader.h"
#include "testing/random_edn.h"

namespace mentat::edn {
namespace {

std::vector<std::string> Forms(std::string_view text) {
  std::vector<std::string> out;
  for (const EdnFormSpan& f : ScanEdn(text).forms) {
    out.emplace_back(text.substr(f.begin, f.end - f.begin));
  }
  return out;
}

TEST_CASE("edn scan: completeness follows brackets, strings and comments") {
  CHECK(IsCompleteEdn("[:find ?e :where [?e :a/b 1]]"));
  CHECK_FALSE(IsCompleteEdn("[:find ?e\n :where [?e :a/b 1]"));
  CHECK_FALSE(IsCompleteEdn("[:find ?e :where [?e :a/b \"x]"));
  CHECK(IsCompleteEdn("[:find ?e :where [?e :a/b \"[[\"]]"));
  CHECK_FALSE(IsCompleteEdn("[:a ; ]]]\n"));
  CHECK(IsCompleteEdn("[:a ; ]]]\n]"));
  CHECK(IsCompleteEdn("[\\] \\[ \\newline]"));
  CHECK(IsCompleteEdn("#{1 2}"));
  CHECK_FALSE(IsCompleteEdn("#{1 2"));
  CHECK(IsCompleteEdn("\"a \\\" [\""));
  // A stray closer is complete: the reader reports it.
  CHECK(IsCompleteEdn("]"));
  CHECK(ScanEdn("]").stray_closer);
  CHECK(IsCompleteEdn(""));
  CHECK(ScanEdn("[1 [2").unclosed_at == 0);
  CHECK(ScanEdn("1 \"ab").unclosed_at == 2);
}

TEST_CASE("edn scan: top-level forms with tags and discards") {
  CHECK(Forms("[:find ?e] \"a@b\" 42") ==
        std::vector<std::string>{"[:find ?e]", "\"a@b\"", "42"});
  CHECK(Forms("#inst \"2024-01-01\" #uuid \"x\"") ==
        std::vector<std::string>{"#inst \"2024-01-01\"", "#uuid \"x\""});
  CHECK(Forms("#_ [1 2] 3") == std::vector<std::string>{"3"});
  CHECK(Forms("#_ #inst \"2024-01-01\" 3") == std::vector<std::string>{"3"});
  CHECK(Forms("[:a/b \"c\"] , {:x 1}") ==
        std::vector<std::string>{"[:a/b \"c\"]", "{:x 1}"});
  CHECK(Forms("; nothing\n").empty());
  CHECK(Forms("#{1} :k ##NaN") ==
        std::vector<std::string>{"#{1}", ":k", "##NaN"});
  CHECK(Forms("#my/tag [1] \\a") ==
        std::vector<std::string>{"#my/tag [1]", "\\a"});
  // A character of several UTF-8 bytes is one form.
  CHECK(Forms("\\\u00e9 \\\u20ac[1]") ==
        std::vector<std::string>{"\\\u00e9", "\\\u20ac", "[1]"});
}

TEST_CASE("edn scan: balance fed line by line") {
  EdnBalance b;
  b.Feed("[{:a \"x]\" ; ]]\n");
  CHECK_FALSE(b.balanced());
  b.Feed(" :b \\]}\n");
  CHECK_FALSE(b.balanced());
  b.Feed("]\n");
  CHECK(b.balanced());
  b.Feed("\"open");
  CHECK_FALSE(b.balanced());
  b.Reset();
  CHECK(b.balanced());
}

TEST_CASE("edn scan: positions are the reader's") {
  const std::string_view text = "ab\ncde\n";
  CHECK(EdnPositionAt(text, 0).line == 1);
  CHECK(EdnPositionAt(text, 0).column == 1);
  CHECK(EdnPositionAt(text, 4).line == 2);
  CHECK(EdnPositionAt(text, 4).column == 2);
  CHECK(EdnPositionAt(text, 99).line == 3);
  CHECK(EdnOffsetAt(text, {2, 2}) == 4);
  CHECK(EdnOffsetAt(text, {2, 99}) == 6);
  CHECK(EdnOffsetAt(text, {9, 1}) == text.size());

  // A reader error's position names the byte EdnOffsetAt finds.
  const std::string bad = "[1 2\n  {:a 1 :a 2}]";
  absl::StatusOr<EdnValue> read = ParseEdn(bad);
  REQUIRE_FALSE(read.ok());
  std::optional<EdnPosition> at = EdnErrorPosition(read.status());
  REQUIRE(at.has_value());
  const size_t offset = EdnOffsetAt(bad, *at);
  CHECK(EdnPositionAt(bad, offset).line == at->line);
  CHECK(EdnPositionAt(bad, offset).column == at->column);
}

// For text the reader reads, the scan finds the same forms: each span reads
// to the reader's form and ends where the reader's offset says it ended.
TEST_CASE("edn scan: spans are the reader's forms, over random values") {
  testing::RandomEdn random(20250611);
  const char* separators[] = {" ", "\n", ", ", " ; note ]\"\n",
                              "\t#_ [1 \"]\"] "};
  for (int i = 0; i < 500; ++i) {
    std::string text;
    std::vector<EdnValue> values;
    for (int n = i % 5; n >= 0; --n) {
      values.push_back(random.Value(0));
      PrintEdnTo(values.back(), &text);
      text += separators[(i + n) % 5];
    }
    const EdnScan scan = ScanEdn(text);
    CHECK(scan.depth == 0);
    CHECK_FALSE(scan.in_string);
    CHECK(IsCompleteEdn(text));
    REQUIRE(scan.forms.size() == values.size());
    EdnReader reader(text);
    for (size_t k = 0; k < values.size(); ++k) {
      EdnValue form;
      absl::StatusOr<bool> more = reader.Next(&form);
      REQUIRE(more.ok());
      REQUIRE(*more);
      const EdnFormSpan span = scan.forms[k];
      CHECK(span.end == reader.offset());
      absl::StatusOr<EdnValue> alone = ParseEdn(
          std::string_view(text).substr(span.begin, span.end - span.begin));
      REQUIRE(alone.ok());
      CHECK(*alone == values[k]);
    }
    EdnBalance balance;
    balance.Feed(text);
    CHECK(balance.balanced());
  }
}

}  // namespace
}  // namespace mentat::edn
