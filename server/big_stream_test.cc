// The long stream: 3 million rows streamed to the end, without
// error and without the server's memory growing with the result (about a
// second here, so it runs with the rest).

#include <doctest/doctest.h>

#include <fstream>

#include "test_support.h"

namespace mentat::server::testing {
namespace {

// Resident set size of this process, in bytes.
int64_t RssBytes() {
  std::ifstream in("/proc/self/statm");
  int64_t pages = 0, resident = 0;
  in >> pages >> resident;
  return resident * 4096;
}

TEST_CASE("server: 3 million rows stream in constant memory") {
  TestServer t;
  Transact(t, kPeopleSchema);
  // 1733 people of one age: 1733^2 = 3,003,289 pairs.
  constexpr int kPeople = 1733;
  for (int i = 0; i < kPeople; i += 1000) {
    std::string edn = "[";
    for (int j = i; j < std::min(kPeople, i + 1000); ++j) {
      edn += "{:person/name \"p" + std::to_string(j) + "\" :person/age 7}";
    }
    Transact(t, edn + "]");
  }
  pb::QueryRequest req;
  req.set_query("[:find ?a ?b :where [?a :person/age ?x] [?b :person/age ?x]]");
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::minutes(2));
  auto reader = t.stub().Query(&ctx, req);
  pb::QueryResponse msg;
  int64_t rows = 0;
  int64_t messages = 0;
  const int64_t rss_before = RssBytes();
  int64_t rss_peak = rss_before;
  const auto start = std::chrono::steady_clock::now();
  while (reader->Read(&msg)) {
    rows += msg.rows_size();
    if (++messages % 100 == 0) rss_peak = std::max(rss_peak, RssBytes());
  }
  const grpc::Status s = reader->Finish();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  REQUIRE_MESSAGE(s.ok(), StatusText(s));
  CHECK(rows == int64_t{kPeople} * kPeople);
  // Held whole, the result would take hundreds of megabytes (two EDN
  // values per row on the server, two protobuf values on the client).
  const int64_t growth = rss_peak - rss_before;
  CHECK(growth < int64_t{64} << 20);
  MESSAGE(rows, " rows in ", messages, " messages, ", seconds, " s (",
          rows / seconds / 1e6, " M rows/s); peak RSS growth ",
          growth / (1 << 20), " MiB");
}

}  // namespace
}  // namespace mentat::server::testing
