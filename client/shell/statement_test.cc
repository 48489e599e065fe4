#include "shell/statement.h"

#include <doctest/doctest.h>

namespace mentat::cli {
namespace {

TEST_CASE("statements: classify a top-level form") {
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

TEST_CASE("statements: complete and blank") {
  CHECK(IsCompleteStatement("[:find ?e :where [?e :a/b 1]]"));
  CHECK_FALSE(IsCompleteStatement("[:find ?e\n :where [?e :a/b 1]"));
  CHECK(IsCompleteStatement(".import some [file"));
  CHECK_FALSE(IsCompleteStatement(".q [:find ?e"));
  CHECK(IsBlankStatement("  ; a comment"));
  CHECK_FALSE(IsBlankStatement(".dbs"));
  CHECK_FALSE(IsBlankStatement("\"open"));
}

}  // namespace
}  // namespace mentat::cli
