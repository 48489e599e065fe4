// Big values in errors and logs: messages and log lines quote values,
// forms and query texts as excerpts ("…(N bytes)"), never whole.

#include <doctest/doctest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <sstream>

#include "test_support.h"

namespace mentat::server::testing {
namespace {

constexpr char kDocSchema[] = R"([
  {:db/ident :doc/a :db/valueType :db.type/string
   :db/cardinality :db.cardinality/one}
  {:db/ident :doc/n :db/valueType :db.type/long
   :db/cardinality :db.cardinality/one}])";

// The server's log lines while it lives (spdlog's default logger is
// swapped before the server starts and back after it stops: swapping it
// while threads log is not safe).
class CapturedLog {
 public:
  CapturedLog() : previous_(spdlog::default_logger()) {
    auto logger = std::make_shared<spdlog::logger>(
        "capture", std::make_shared<spdlog::sinks::ostream_sink_mt>(out_));
    logger->set_level(spdlog::level::info);
    spdlog::set_default_logger(logger);
  }
  ~CapturedLog() { spdlog::set_default_logger(previous_); }
  std::string text() {
    spdlog::default_logger()->flush();
    return out_.str();
  }

 private:
  std::shared_ptr<spdlog::logger> previous_;
  std::ostringstream out_;
};

grpc::Status QueryStatus(TestServer& t, const pb::QueryRequest& req) {
  return RunQuery(t.stub(), req, 60000).status;
}

// A refusal whose message quotes an excerpt of the big value, not all of
// it.
void ExpectExcerpt(const std::string& what, const grpc::Status& s,
                   const std::string& marker) {
  CAPTURE(what);
  CHECK_MESSAGE(s.error_code() == grpc::StatusCode::INVALID_ARGUMENT,
                StatusText(s).substr(0, 300));
  CHECK_MESSAGE(s.error_message().size() < 1024, s.error_message().size());
  CHECK_MESSAGE(s.error_message().find(marker) != std::string::npos,
                s.error_message().substr(0, 300));
  MESSAGE(what, " -> ", StatusText(s));
}

TEST_CASE("server: messages and log lines quote big values as excerpts") {
  CapturedLog log;
  {
    TestServer t([](ServerConfig* c) {
      c->log_level = "info";
      c->slow_query_ms = 0;  // every query's text is logged
    });
    Transact(t, kDocSchema);
    const std::string kib8(8 << 10, 'x');
    // Issue 16: echoed whole (twice), this error's metadata was over the
    // client's limit: RESOURCE_EXHAUSTED "received initial metadata size
    // exceeds limit" instead of the error.
    ExpectExcerpt(
        "an 8 KiB string for a long attribute",
        TransactStatus(t, "[[:db/add \"d\" :doc/n \"" + kib8 + "\"]]"),
        "\u2026(8192 bytes)");
    ExpectExcerpt("an 8 MiB string for a long attribute",
                  TransactStatus(t, "[[:db/add \"d\" :doc/n \"" +
                                        std::string(8 << 20, 'y') + "\"]]"),
                  "\u2026(8388608 bytes)");
    ExpectExcerpt("an 8 KiB attribute name",
                  TransactStatus(t, "[[:db/add \"d\" :doc/" + kib8 + " 1]]"),
                  "bytes)");
    ExpectExcerpt("an 8 KiB unknown ident",
                  TransactStatus(t, "[[:db/add :no/" + kib8 + " :doc/n 1]]"),
                  "bytes)");
    ExpectExcerpt(
        "an 8 KiB tempid in a refused op",
        TransactStatus(t, "[[:db/add \"" + kib8 + "\" :doc/n \"not a long\"]]"),
        "bytes)");
    pb::QueryRequest q;
    q.set_query("[:find ?e :where [?e :doc/n \"" + kib8 + "\"]]");
    ExpectExcerpt("an 8 KiB string constant for a long attribute",
                  QueryStatus(t, q), "bytes)");
    q.set_query("[:find ?e :in $ ?t :where [?e :doc/n ?t]]");
    q.add_inputs()->set_json("{\"#inst\": \"" + kib8 + "\"}");
    ExpectExcerpt("an 8 KiB #inst in a JSON input", QueryStatus(t, q),
                  "bytes)");
    q.Clear();
    q.set_query("[:find ?e :where [?e :doc/a \"" + kib8 + "\"]]");
    CHECK(QueryStatus(t, q).ok());  // logged as slow (slow_query_ms 0)
  }
  const std::string text = log.text();
  std::istringstream lines(text);
  std::string line;
  size_t longest = 0;
  int quoted = 0;
  while (std::getline(lines, line)) {
    longest = std::max(longest, line.size());
    if (line.find("bytes)") != std::string::npos) ++quoted;
  }
  // Before: an 8 MiB log line.
  CHECK_MESSAGE(longest < 4096, longest);
  CHECK(quoted >= 5);
  CHECK(text.find("slow query") != std::string::npos);
}

}  // namespace
}  // namespace mentat::server::testing
