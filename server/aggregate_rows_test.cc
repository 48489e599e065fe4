// Rows of aggregates, and rows that :order, :limit or :offset shape, as
// the client reads them. A row of plain values and aggregates that are
// numbers goes to the wire from the engine's values, any other as EDN
// (ResultEmitter::ValuesRow): whichever way each row goes, the values,
// their types and the rows' order are the query's.

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "test_support.h"

namespace mentat::server::testing {
namespace {

constexpr char kMaxLong[] = "9223372036854775807";

// 300 people tagged :t/k<i % 3>, aged i % 100; two more tagged :t/big,
// aged the largest long, whose sum is a bigint.
void LoadTagged(TestServer& t) {
  Transact(t, kPeopleSchema);
  Transact(t, People(0, 300));
  std::string tags = "[";
  for (int i = 0; i < 300; ++i) {
    tags += "{:db/id [:person/name \"person " + std::to_string(i) +
            "\"] :person/tag :t/k" + std::to_string(i % 3) + "}";
  }
  Transact(t, tags + "]");
  Transact(t, std::string("[{:person/name \"big 1\" :person/age ") + kMaxLong +
                  " :person/tag :t/big} {:person/name \"big 2\" :person/age " +
                  kMaxLong + " :person/tag :t/big}]");
}

// The sum of i % 100 over the 300 people with i % 3 == k.
int64_t AgeSum(int k) {
  int64_t sum = 0;
  for (int i = k; i < 300; i += 3) sum += i % 100;
  return sum;
}

// Each row as text, one value after another, with its kind: what the
// client would read.
std::string RowText(const pb::Row& row) {
  std::string text;
  for (const pb::Value& v : row.values()) {
    if (!text.empty()) text += " ";
    switch (v.kind_case()) {
      case pb::Value::kKeyword:
        text += ":" + v.keyword();
        break;
      case pb::Value::kLongValue:
        text += "long " + std::to_string(v.long_value());
        break;
      case pb::Value::kDoubleValue:
        text += "double " + std::to_string(v.double_value());
        break;
      case pb::Value::kBigint:
        text += "bigint " + v.bigint();
        break;
      case pb::Value::kStringValue:
        text += "\"" + v.string_value() + "\"";
        break;
      default:
        text += "kind " + std::to_string(v.kind_case());
    }
  }
  return text;
}

std::vector<std::string> Served(TestServer& t, const std::string& query) {
  pb::QueryRequest req;
  req.set_query(query);
  QueryOutcome streamed = RunQuery(t.stub(), req);
  REQUIRE_MESSAGE(streamed.status.ok(), StatusText(streamed.status));
  std::vector<std::string> rows;
  for (const pb::Row& r : streamed.rows) rows.push_back(RowText(r));
  // QueryFirst answers the same rows in one reply.
  pb::QueryResponse first;
  auto ctx = Ctx();
  grpc::Status s = t.stub().QueryFirst(ctx.get(), req, &first);
  REQUIRE_MESSAGE(s.ok(), StatusText(s));
  CHECK_FALSE(first.more());
  std::vector<std::string> first_rows;
  for (const pb::Row& r : first.rows()) first_rows.push_back(RowText(r));
  CHECK(first_rows == rows);
  return rows;
}

// The rows, sorted, one to a line: a relation's rows come in no order.
std::string Sorted(std::vector<std::string> rows) {
  std::sort(rows.begin(), rows.end());
  std::string text;
  for (const std::string& r : rows) text += r + "\n";
  return text;
}

// In order, one to a line.
std::string Lines(const std::vector<std::string>& rows) {
  std::string text;
  for (const std::string& r : rows) text += r + "\n";
  return text;
}

std::string Double(double d) { return "double " + std::to_string(d); }

void CheckAggregateRows(TestServer& t) {
  LoadTagged(t);
  const std::string k0 =
      "long " + std::to_string(AgeSum(0)) + " " + Double(AgeSum(0) / 100.0);
  const std::string k1 =
      "long " + std::to_string(AgeSum(1)) + " " + Double(AgeSum(1) / 100.0);
  const std::string k2 =
      "long " + std::to_string(AgeSum(2)) + " " + Double(AgeSum(2) / 100.0);
  const std::string big =
      "bigint 18446744073709551614 " + Double(9223372036854775807.0);

  SUBCASE("counts") {
    CHECK(
        Sorted(Served(t, "[:find ?t (count ?e) :where [?e :person/tag ?t]]")) ==
        ":t/big long 2\n:t/k0 long 100\n:t/k1 long 100\n:t/k2 long 100\n");
  }

  SUBCASE("a bigint sum among long ones, in order both ways") {
    const std::string q =
        "[:find ?t (sum ?a) (avg ?a) :with ?e :where [?e :person/tag ?t] "
        "[?e :person/age ?a] :order ";
    // The bigint's row (as EDN) first, then rows of numbers.
    CHECK(Lines(Served(t, q + "?t]")) == ":t/big " + big + "\n:t/k0 " + k0 +
                                             "\n:t/k1 " + k1 + "\n:t/k2 " + k2 +
                                             "\n");
    // Rows of numbers, then the bigint's last.
    CHECK(Lines(Served(t, q + "(desc ?t)]")) == ":t/k2 " + k2 + "\n:t/k1 " +
                                                    k1 + "\n:t/k0 " + k0 +
                                                    "\n:t/big " + big + "\n");
  }

  SUBCASE("a string aggregate beside a count") {
    CHECK(Sorted(Served(t,
                        "[:find ?t (min ?n) (count ?e) :where [?e :person/tag "
                        "?t] [?e :person/name ?n]]")) ==
          ":t/big \"big 1\" long 2\n:t/k0 \"person 0\" long 100\n"
          ":t/k1 \"person 1\" long 100\n:t/k2 \"person 101\" long 100\n");
  }

  SUBCASE(":limit and :offset over ordered counts") {
    CHECK(Lines(Served(t,
                       "[:find ?t (count ?e) :where [?e :person/tag ?t] "
                       ":order ?t :limit 2 :offset 1]")) ==
          ":t/k0 long 100\n:t/k1 long 100\n");
  }

  SUBCASE("plain values, ordered, past an offset, up to a limit") {
    CHECK(Lines(Served(t,
                       "[:find ?n ?a :where [?e :person/name ?n] "
                       "[?e :person/age ?a] :order (desc ?a) ?n :limit 3 "
                       ":offset 1]")) ==
          std::string("\"big 2\" long ") + kMaxLong +
              "\n\"person 199\" long 99\n\"person 299\" long 99\n");
  }

  SUBCASE("a scalar count") {
    CHECK(Lines(Served(t, "[:find (count ?e) . :where [?e :person/age _]]")) ==
          "long 302\n");
  }
}

TEST_CASE("server: rows of aggregates, numbers and the rest") {
  TestServer t;
  CheckAggregateRows(t);
}

TEST_CASE("server: rows of aggregates on a reader thread") {
  TestServer t([](ServerConfig* c) { c->inline_point_reads = false; });
  CheckAggregateRows(t);
}

}  // namespace
}  // namespace mentat::server::testing
