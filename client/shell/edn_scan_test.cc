#include "shell/edn_scan.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace mentat::cli {
namespace {

std::vector<std::string> Forms(std::string_view text) {
  std::vector<std::string> out;
  for (const FormSpan& f : ScanEdn(text).forms) {
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
  // A stray closer is complete: the server reports it.
  CHECK(IsCompleteEdn("]"));
  CHECK(ScanEdn("]").stray_closer);
  CHECK(IsCompleteEdn(""));
}

TEST_CASE("edn scan: top-level forms with tags and discards") {
  CHECK(Forms("[:find ?e] \"a@b\" 42") ==
        std::vector<std::string>{"[:find ?e]", "\"a@b\"", "42"});
  CHECK(Forms("#inst \"2024-01-01\" #uuid \"x\"") ==
        std::vector<std::string>{"#inst \"2024-01-01\"", "#uuid \"x\""});
  CHECK(Forms("#_ [1 2] 3") == std::vector<std::string>{"3"});
  CHECK(Forms("[:a/b \"c\"] , {:x 1}") ==
        std::vector<std::string>{"[:a/b \"c\"]", "{:x 1}"});
  CHECK(Forms("; nothing\n").empty());
  CHECK(Forms("#{1} :k") == std::vector<std::string>{"#{1}", ":k"});
}

TEST_CASE("edn scan: classify") {
  CHECK(ClassifyForm("[:find ?e :where [?e :a/b]]") == FormKind::kQuery);
  CHECK(ClassifyForm("[ \n :find ?e]") == FormKind::kQuery);
  CHECK(ClassifyForm("{:find [?e] :where [[?e :a/b]]}") == FormKind::kQuery);
  CHECK(ClassifyForm("{:where [[?e :a/b]] :find [?e]}") == FormKind::kQuery);
  CHECK(ClassifyForm("[[:db/add \"a\" :a/b 1]]") == FormKind::kTransaction);
  CHECK(ClassifyForm("[{:a/b 1}]") == FormKind::kTransaction);
  CHECK(ClassifyForm("[]") == FormKind::kTransaction);
  CHECK(ClassifyForm("{:a/b 1}") == FormKind::kOther);
  CHECK(ClassifyForm(":find") == FormKind::kOther);
  CHECK(ClassifyForm("{:a :find}") == FormKind::kOther);
}

TEST_CASE("edn scan: positions") {
  const std::string_view text = "ab\ncde\n";
  CHECK(PositionAt(text, 0).line == 1);
  CHECK(PositionAt(text, 4).line == 2);
  CHECK(PositionAt(text, 4).column == 2);
  CHECK(OffsetAt(text, 2, 2) == 4);
  CHECK(OffsetAt(text, 2, 99) == 6);
  CHECK(OffsetAt(text, 9, 1) == text.size());
}

}  // namespace
}  // namespace mentat::cli
