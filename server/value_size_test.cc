// Large values: Transact and Import refuse values over --max-value-bytes,
// and every stream (TxRange, Subscribe, Query, Datoms) splits what it
// sends so that no message is over the largest message, whatever the
// values' sizes.

#include <doctest/doctest.h>

#include <algorithm>
#include <map>

#include "test_support.h"

namespace mentat::server::testing {
namespace {

constexpr char kDocSchema[] = R"([
  {:db/ident :doc/a :db/valueType :db.type/string
   :db/cardinality :db.cardinality/one}
  {:db/ident :doc/b :db/valueType :db.type/string
   :db/cardinality :db.cardinality/one}
  {:db/ident :doc/c :db/valueType :db.type/string
   :db/cardinality :db.cardinality/one}
  {:db/ident :doc/n :db/valueType :db.type/long
   :db/cardinality :db.cardinality/one}])";

TEST_CASE("server: values over --max-value-bytes are refused") {
  {
    // The default: a quarter of the largest message, 16 MiB.
    TestServer t;
    Transact(t, kDocSchema);
    const grpc::Status s = TransactStatus(
        t, "[{:doc/a \"" + std::string((16 << 20) + 1, 'z') + "\"}]");
    CHECK(s.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
    CHECK_MESSAGE(
        s.error_message().find("a :db.type/string value of "
                               "16777217 bytes is over the limit "
                               "of 16777216 bytes per value "
                               "(--max-value-bytes)") != std::string::npos,
        s.error_message());
    MESSAGE("a value over the default limit -> ", StatusText(s));
  }
  TestServer t([](ServerConfig* c) { c->max_value_bytes = 1024; });
  Transact(t, kDocSchema);
  const std::string at_limit(1024, 'a');
  const std::string over(1025, 'b');
  Transact(t, "[{:doc/a \"" + at_limit + "\"}]");
  const std::map<std::string, std::string> refused = {
      {"an asserted value", "[[:db/add \"d\" :doc/a \"" + over + "\"]]"},
      {"a map value", "[{:doc/a \"ok\" :doc/b \"" + over + "\"}]"},
      {"a retracted value", "[[:db/retract 1 :doc/a \"" + over + "\"]]"},
      {"a cas old value", "[[:db/cas 1 :doc/a \"" + over + "\" \"x\"]]"},
      {"a tempid", "[[:db/add \"" + over + "\" :doc/a \"x\"]]"},
      {"a lookup ref's value",
       "[[:db/add [:doc/a \"" + over + "\"] :doc/n 1]]"},
  };
  for (const auto& [what, tx] : refused) {
    CAPTURE(what);
    const grpc::Status s = TransactStatus(t, tx);
    CHECK(s.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
    CHECK_MESSAGE(
        s.error_message().find("1025 bytes is over the limit of "
                               "1024 bytes per value") != std::string::npos,
        s.error_message());
    CHECK(s.error_message().find("line 1, column ") == 0);
  }
  // Import goes through the same check.
  CreateDatabase(t, "imported");
  pb::ImportResponse response;
  auto ctx = Ctx(60000);
  auto writer = t.stub().Import(ctx.get(), &response);
  pb::ImportRequest req;
  req.set_database("imported");
  req.add_tx_data(kDocSchema);
  req.add_tx_data("[{:doc/a \"" + over + "\"}]");
  writer->Write(req);
  writer->WritesDone();
  const grpc::Status s = writer->Finish();
  CHECK(s.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK_MESSAGE(s.error_message().find("import transaction 1 (counting from "
                                       "0) is refused: line 1, column ") !=
                    std::string::npos,
                s.error_message());
}

// A stub that accepts messages up to the server's largest only: any
// message over it fails the call.
std::unique_ptr<pb::Mentat::Stub> StrictStub(TestServer& t) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(t.config().max_message_bytes);
  args.SetInt("mentat.test.strict", 1);
  return pb::Mentat::NewStub(grpc::CreateCustomChannel(
      t.Address(), grpc::InsecureChannelCredentials(), args));
}

// The transactions of a log stream, their parts joined, by tx: the values
// of their datoms in order ("+" or "-" and the string or number).
struct LogRead {
  grpc::Status status;
  std::map<int64_t, std::vector<std::string>> txs;
  int parts = 0;  // entries with `continued`
  int messages = 0;
};

std::string Show(const pb::Datom& d) {
  std::string v = d.v().has_string_value()
                      ? d.v().string_value().substr(0, 1) + ":" +
                            std::to_string(d.v().string_value().size())
                      : std::to_string(d.v().long_value());
  return (d.added() ? "+" : "-") + v;
}

template <typename Response>
void Collect(const Response& m, LogRead* out, bool* pending) {
  ++out->messages;
  for (const pb::Transaction& t : m.transactions()) {
    auto& datoms = out->txs[t.tx()];
    for (const pb::Datom& d : t.datoms()) datoms.push_back(Show(d));
    if (t.continued()) ++out->parts;
    *pending = t.continued();
  }
}

TEST_CASE(
    "server: a transaction bigger than a message reads back whole through "
    "TxRange and Subscribe") {
  // Messages of at most 256 KiB; values of up to 100 KiB (the limit may
  // be half the largest message); streams aim at 64 KiB messages.
  TestServer t([](ServerConfig* c) {
    c->max_message_bytes = 256 << 10;
    c->max_value_bytes = 100 << 10;
  });
  Transact(t, kDocSchema);
  auto strict = StrictStub(t);
  const std::string a1(100 << 10, '1'), b1(100 << 10, '2');
  const std::string a2(100 << 10, '3'), b2(100 << 10, '4');
  pb::TransactResponse first = Transact(
      t, "[{:db/id \"d\" :doc/a \"" + a1 + "\" :doc/b \"" + b1 + "\"}]");
  const int64_t d = first.tempids().at("d");
  // Replacing both values: 2 retractions and 2 assertions of 100 KiB, more
  // than the largest message. Issue 16: such a transaction made every
  // TxRange and Subscribe from before it fail with "Sent message larger
  // than max".
  pb::TransactRequest replace;
  replace.set_tx_data("[[:db/add " + std::to_string(d) + " :doc/a \"" + a2 +
                      "\"] [:db/add " + std::to_string(d) + " :doc/b \"" + b2 +
                      "\"]]");
  replace.set_return_datoms(true);
  pb::TransactResponse second;
  {
    auto ctx = Ctx();
    grpc::Status s = strict->Transact(ctx.get(), replace, &second);
    REQUIRE_MESSAGE(s.ok(), StatusText(s));
  }
  // Committed; its datoms are too big to come back with the answer.
  CHECK(second.datoms_omitted());
  CHECK(second.datoms_size() == 0);
  CHECK(second.datom_count() == 5);

  const std::vector<std::string> want_second = {"+3:102400", "+4:102400",
                                                "-1:102400", "-2:102400"};
  auto check_second = [&](const std::vector<std::string>& got) {
    // The tx's own :db/txInstant is there too.
    std::vector<std::string> strings;
    for (const std::string& g : got) {
      if (g.find(':') != std::string::npos) strings.push_back(g);
    }
    std::sort(strings.begin(), strings.end());
    CHECK(got.size() == 5);
    CHECK(strings == want_second);
  };
  {
    LogRead read;
    pb::TxRangeRequest req;
    req.set_from_tx(first.tx());
    auto ctx = Ctx();
    auto reader = strict->TxRange(ctx.get(), req);
    pb::TxRangeResponse m;
    bool pending = false;
    while (reader->Read(&m)) Collect(m, &read, &pending);
    read.status = reader->Finish();
    REQUIRE_MESSAGE(read.status.ok(), StatusText(read.status));
    CHECK_FALSE(pending);
    CHECK(read.txs.size() == 2);
    CHECK(read.txs[first.tx()].size() == 3);  // 2 values and the instant
    check_second(read.txs[second.tx()]);
    CHECK(read.parts >= 2);
    MESSAGE("TxRange: ", read.messages, " messages, ", read.parts,
            " continued parts");
  }
  {
    LogRead read;
    pb::SubscribeRequest req;
    req.set_from_tx(first.tx());
    auto ctx = Ctx();
    auto reader = strict->Subscribe(ctx.get(), req);
    pb::SubscribeResponse m;
    bool pending = true;
    while ((read.txs.size() < 2 || pending) && reader->Read(&m)) {
      Collect(m, &read, &pending);
    }
    ctx->TryCancel();
    read.status = reader->Finish();
    CHECK_FALSE(pending);
    REQUIRE(read.txs.size() == 2);
    check_second(read.txs[second.tx()]);
  }
}

TEST_CASE("server: Query and Datoms split rows of big values into messages") {
  TestServer t([](ServerConfig* c) {
    c->max_message_bytes = 256 << 10;
    c->max_value_bytes = 100 << 10;
  });
  Transact(t, kDocSchema);
  for (int i = 0; i < 10; ++i) {
    const std::string v(80 << 10, static_cast<char>('a' + i));
    Transact(t, "[{:doc/a \"" + v + "\" :doc/b \"" + v + "\" :doc/c \"" + v +
                    "\" :doc/n " + std::to_string(i) + "}]");
  }
  auto strict = StrictStub(t);
  // Ten rows of 80 KiB: one message of 1,000 rows would be 800 KiB.
  pb::QueryRequest req;
  req.set_query("[:find ?n ?a :where [?e :doc/n ?n] [?e :doc/a ?a]]");
  QueryOutcome q = RunQuery(*strict, req);
  REQUIRE_MESSAGE(q.status.ok(), StatusText(q.status));
  CHECK(q.rows.size() == 10);
  CHECK(q.messages.size() >= 4);

  pb::DatomsRequest dreq;
  dreq.set_index(pb::AEVT);
  dreq.add_components()->set_keyword(":doc/a");
  {
    auto ctx = Ctx();
    auto reader = strict->Datoms(ctx.get(), dreq);
    pb::DatomsResponse m;
    int datoms = 0, messages = 0;
    while (reader->Read(&m)) {
      datoms += m.datoms_size();
      ++messages;
    }
    const grpc::Status s = reader->Finish();
    REQUIRE_MESSAGE(s.ok(), StatusText(s));
    CHECK(datoms == 10);
    CHECK(messages >= 4);
  }

  // A row of four 80 KiB values is bigger than a message can be: refused
  // with a message that says so, not sent.
  req.set_query(
      "[:find ?a ?b ?c ?d :where [?e :doc/n 0] [?e :doc/a ?a] [?e :doc/b ?b] "
      "[?e :doc/c ?c] [?f :doc/n 1] [?f :doc/a ?d]]");
  q = RunQuery(*strict, req);
  CHECK(q.status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED);
  CHECK_MESSAGE(q.status.error_message().find("row 1 of the result holds "
                                              "about") != std::string::npos,
                StatusText(q.status));
  MESSAGE("a row over the largest message -> ", StatusText(q.status));
}

}  // namespace
}  // namespace mentat::server::testing
