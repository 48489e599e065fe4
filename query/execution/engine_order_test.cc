// Joins in entity order (PatternSpec::entity_order): with enough rows in
// ascending entity order, the planner walks the looked-up attributes'
// AEVT datoms forward instead of hashing one and seeking the other per
// row; the answers are the nested loop's and the hash join's.

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "execution/engine_test_support.h"

namespace mentat::query {
namespace {

using engine_testing::EngineFixture;
using engine_testing::Join;
using storage::Basis;

constexpr int kIssues = 3000;

// Issue i: open when i % 3 == 0 (else closed), priority i % 6, titled
// "t<i>" unless i % 7 == 0; in three transactions, so that the entities
// of one state interleave with the other's.
void LoadMany(EngineFixture& f) {
  for (int start = 0; start < kIssues; start += 1000) {
    std::string tx = "[";
    for (int i = start; i < start + 1000; ++i) {
      StrAppend(&tx, "{:db/id \"i", i, "\" :issue/state ",
                i % 3 == 0 ? ":state/open" : ":state/closed",
                " :issue/priority ", i % 6);
      if (i % 7 != 0) StrAppend(&tx, " :issue/title \"t", i, "\"");
      StrAppend(&tx, "}\n");
    }
    f.Tx(tx + "]");
  }
}

std::string Want(EngineFixture& f, int min) {
  std::vector<std::string> rows;
  for (int i = 0; i < kIssues; i += 3) {
    if (i % 6 < min || i % 7 == 0) continue;
    rows.push_back(
        StrCat("[", f.Id(StrCat("i", i)), " \"t", i, "\" ", i % 6, "]"));
  }
  std::sort(rows.begin(), rows.end());
  return Join(rows);
}

constexpr const char* kQ4 =
    "[:find ?i ?title ?priority :in $ ?min :where "
    "[?i :issue/state :state/open] [?i :issue/priority ?priority] "
    "[?i :issue/title ?title] [(>= ?priority ?min)]]";

int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

TEST_CASE("engine: q4 at scale joins priority and title in entity order") {
  bool eager = false;
  SUBCASE("reading RocksDB") {}
  // With columns, the same steps probe the columns instead.
  SUBCASE("reading columns") { eager = true; }
  EngineFixture f(eager);
  LoadMany(f);
  // The priority step walks (1000 open issues, a gap of 3 datoms) where
  // it was a hash join; the range's guess leaves too few rows (333) to
  // walk the titles.
  const std::string plan = f.Explain(kQ4, "[4]");
  CHECK_MESSAGE(Count(plan, "MergeJoin [?i :issue/priority") == 1, plan);
  // Without the range, both walk.
  const char* both =
      "[:find ?i ?title ?priority :where [?i :issue/state :state/open] "
      "[?i :issue/priority ?priority] [?i :issue/title ?title]]";
  const std::string walks = f.Explain(both);
  CHECK_MESSAGE(Count(walks, "AEVT a+e in entity order") == 2, walks);
  CHECK(f.Rows(both) == Want(f, 0));
  for (int min : {4, 0, 6}) {
    CAPTURE(min);
    CHECK(f.Rows(kQ4, StrCat("[", min, "]")) == Want(f, min));
  }
  if (eager) {
    f.store().store().WaitForColumns();
    CHECK(f.Rows(kQ4, "[4]") == Want(f, 4));
  }
}

TEST_CASE("engine: few rows seek, many rows walk, with the same answers") {
  EngineFixture f;
  LoadMany(f);
  const char* by_id = "[:find ?t :in $ ?i :where [?i :issue/title ?t]]";
  const std::string one = StrCat("[", f.Id("i3"), "]");
  CHECK(f.Explain(by_id, one).find("MergeJoin") == std::string::npos);
  CHECK(f.Rows(by_id, one) == "[\"t3\"]\n");
  // Closed issues with a title: two of every three entities, in order,
  // some without one.
  const char* closed =
      "[:find ?i ?t :where [?i :issue/state :state/closed] "
      "[?i :issue/title ?t]]";
  const std::string plan = f.Explain(closed);
  CHECK_MESSAGE(plan.find("MergeJoin") != std::string::npos, plan);
  size_t want = 0;
  for (int i = 0; i < kIssues; ++i) want += i % 3 != 0 && i % 7 != 0;
  CHECK(f.Q(closed).rows.size() == want);
}

}  // namespace
}  // namespace mentat::query
