// Import: what is imported reads back exactly as if it had been transacted.

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <thread>

#include "test_support.h"

namespace mentat::server::testing {
namespace {

int64_t WallClockMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// `micros` (a whole number of milliseconds) as an EDN #inst.
std::string InstEdn(int64_t micros) {
  const time_t seconds = static_cast<time_t>(micros / 1000000);
  struct tm t;
  gmtime_r(&seconds, &t);
  char buf[64];
  snprintf(buf, sizeof(buf), "#inst \"%04d-%02d-%02dT%02d:%02d:%02d.%03dZ\"",
           t.tm_year + 1900, t.tm_mon + 1, t.tm_mday, t.tm_hour, t.tm_min,
           t.tm_sec, static_cast<int>(micros / 1000 % 1000));
  return buf;
}

// A history with explicit instants, so that two databases can be compared:
// schema, people, friends by lookup ref, renames, retractions, upserts.
// The instants are `base` plus 1 ms per transaction: no earlier than the
// databases' creation (instants never go back), so create the databases
// first and take `base` from the clock after; and not ahead of the clock
// by more than the transactor allows.
std::vector<std::string> History(int64_t base) {
  base -= base % 1000;
  std::vector<std::string> txs;
  int n = 0;
  auto instant = [&] {
    ++n;
    return "[:db/add \"datomic.tx\" :db/txInstant " + InstEdn(base + n * 1000) +
           "]";
  };
  std::string schema = kPeopleSchema;
  schema.insert(schema.size() - 1, " " + instant());
  txs.push_back(schema);
  for (int b = 0; b < 20; ++b) {
    std::string tx = People(b * 50, 50);
    tx.insert(tx.size() - 1, " " + instant());
    txs.push_back(tx);
  }
  for (int b = 0; b < 10; ++b) {
    std::string tx = "[";
    for (int i = b * 100; i < b * 100 + 100; i += 3) {
      tx += "[:db/add [:person/name \"person " + std::to_string(i) +
            "\"] :person/friend [:person/name \"person " +
            std::to_string((i * 7) % 1000) + "\"]] ";
      tx += "[:db/add [:person/name \"person " + std::to_string(i) +
            "\"] :person/tag :tag/t" + std::to_string(i % 4) + "] ";
    }
    txs.push_back(tx + instant() + "]");
  }
  // Changes: ages, retractions, upserts through the unique identity.
  for (int b = 0; b < 5; ++b) {
    std::string tx = "[";
    for (int i = b; i < 1000; i += 37) {
      tx += "{:person/name \"person " + std::to_string(i) + "\" :person/age " +
            std::to_string(200 + b) + "} ";
      tx += "[:db/retract [:person/name \"person " + std::to_string(i) +
            "\"] :person/tag :tag/t" + std::to_string(i % 4) + "] ";
    }
    txs.push_back(tx + instant() + "]");
  }
  return txs;
}

struct Imported {
  grpc::Status status;
  pb::ImportResponse response;
};

// Streams `txs` in messages of `per_message` transactions.
Imported RunImport(TestServer& t, const std::string& database,
                   const std::vector<std::string>& txs, size_t per_message) {
  Imported out;
  auto ctx = Ctx(60000);
  auto writer = t.stub().Import(ctx.get(), &out.response);
  pb::ImportRequest req;
  req.set_database(database);
  bool open = true;
  for (size_t i = 0; i < txs.size() && open; ++i) {
    req.add_tx_data(txs[i]);
    if (req.tx_data_size() == static_cast<int>(per_message)) {
      open = writer->Write(req);
      req.Clear();
    }
  }
  if (open && (req.tx_data_size() > 0 || !req.database().empty())) {
    writer->Write(req);
  }
  writer->WritesDone();
  out.status = writer->Finish();
  return out;
}

// The server installs its own schema when it creates a database, at the
// wall-clock time; the history's instants come after `base`.
std::string MaskCreationInstants(const std::string& text, int64_t base) {
  static const std::string kTag = "instant_micros: ";
  std::string out;
  size_t pos = 0;
  for (;;) {
    size_t at = text.find(kTag, pos);
    if (at == std::string::npos) break;
    at += kTag.size();
    size_t end = at;
    while (end < text.size() && std::isdigit(text[end])) ++end;
    out.append(text, pos, at - pos);
    const std::string digits = text.substr(at, end - at);
    out += !digits.empty() && std::stoll(digits) < base ? "creation" : digits;
    pos = end;
  }
  out.append(text, pos);
  return out;
}

// Everything a database can show about itself, as text.
std::string Dump(TestServer& t, const std::string& database, int64_t base) {
  std::string out;
  for (pb::Index index : {pb::EAVT, pb::AEVT, pb::AVET, pb::VAET}) {
    for (int kind : {pb::Basis::LATEST, pb::Basis::HISTORY}) {
      pb::DatomsRequest req;
      req.set_database(database);
      req.set_index(index);
      req.mutable_basis()->set_kind(static_cast<pb::Basis::Kind>(kind));
      auto ctx = Ctx();
      auto reader = t.stub().Datoms(ctx.get(), req);
      pb::DatomsResponse msg;
      out +=
          "index " + std::to_string(index) + "/" + std::to_string(kind) + "\n";
      while (reader->Read(&msg)) {
        for (const pb::Datom& d : msg.datoms())
          out += d.ShortDebugString() + "\n";
      }
      grpc::Status s = reader->Finish();
      REQUIRE_MESSAGE(s.ok(), StatusText(s));
    }
  }
  {
    pb::TxRangeRequest req;
    req.set_database(database);
    auto ctx = Ctx();
    auto reader = t.stub().TxRange(ctx.get(), req);
    pb::TxRangeResponse msg;
    out += "log\n";
    while (reader->Read(&msg)) {
      for (const pb::Transaction& tx : msg.transactions()) {
        out += tx.ShortDebugString() + "\n";
      }
    }
    grpc::Status s = reader->Finish();
    REQUIRE_MESSAGE(s.ok(), StatusText(s));
  }
  pb::StatsRequest req;
  req.set_database(database);
  req.set_value_counts(true);
  pb::StatsResponse resp;
  auto ctx = Ctx();
  grpc::Status s = t.stub().Stats(ctx.get(), req, &resp);
  REQUIRE_MESSAGE(s.ok(), StatusText(s));
  out += "stats basis " + std::to_string(resp.basis_tx()) + "\n";
  for (const pb::AttributeStats& a : resp.attributes()) {
    out += a.ShortDebugString() + "\n";
  }
  return MaskCreationInstants(out, base);
}

// "" if equal, else the first line where they differ.
std::string FirstDifference(const std::string& a, const std::string& b) {
  if (a == b) return "";
  size_t line_start = 0;
  int line = 1;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    if (a[i] != b[i]) break;
    if (a[i] == '\n') line_start = i + 1, ++line;
  }
  auto line_of = [&](const std::string& s) {
    size_t end = s.find('\n', line_start);
    return s.substr(line_start, end == std::string::npos ? std::string::npos
                                                         : end - line_start);
  };
  return "line " + std::to_string(line) + ":\n  " + line_of(a) + "\nvs\n  " +
         line_of(b);
}

int64_t CountPeople(TestServer& t, const std::string& database) {
  QueryOutcome q =
      Query(t, "[:find (count ?e) . :where [?e :person/name]]", {}, database);
  REQUIRE_MESSAGE(q.status.ok(), StatusText(q.status));
  if (q.rows.empty()) return 0;
  return q.rows[0].values(0).long_value();
}

TEST_CASE("server: import into an empty database reads back as transacted") {
  TestServer t;
  CreateDatabase(t, "imported");
  CreateDatabase(t, "transacted");
  const int64_t base = WallClockMicros();
  const std::vector<std::string> txs = History(base);
  Imported imported = RunImport(t, "imported", txs, 7);
  REQUIRE_MESSAGE(imported.status.ok(), StatusText(imported.status));
  CHECK(imported.response.method() == "ingest");
  CHECK(imported.response.transactions() == static_cast<int64_t>(txs.size()));
  int64_t datoms = 0;
  for (const std::string& tx : txs) {
    datoms += Transact(t, tx, "transacted").datom_count();
  }
  CHECK(imported.response.datoms() == datoms);
  CHECK(imported.response.last_tx() == imported.response.basis_tx());
  CHECK(imported.response.first_tx() < imported.response.last_tx());

  const std::string want = Dump(t, "transacted", base);
  CHECK(want.size() > 10000);
  CHECK(FirstDifference(Dump(t, "imported", base), want) == "");
  // And after a restart (what was ingested is durable and reopens alike).
  t.Restart();
  CHECK(FirstDifference(Dump(t, "imported", base), want) == "");
  CHECK(CountPeople(t, "imported") == 1000);
}

TEST_CASE("server: import into a non-empty database transacts in batches") {
  TestServer t;
  CreateDatabase(t, "db");
  CreateDatabase(t, "reference");
  const int64_t base = WallClockMicros();
  const std::vector<std::string> txs = History(base);
  Transact(t, txs[0], "db");
  const std::vector<std::string> rest(txs.begin() + 1, txs.end());
  Imported imported = RunImport(t, "db", rest, 4);
  REQUIRE_MESSAGE(imported.status.ok(), StatusText(imported.status));
  CHECK(imported.response.method() == "transact");
  CHECK(imported.response.transactions() == static_cast<int64_t>(rest.size()));
  CHECK(imported.response.basis_tx() == imported.response.last_tx());
  CHECK(CountPeople(t, "db") == 1000);

  for (const std::string& tx : txs) Transact(t, tx, "reference");
  CHECK(FirstDifference(Dump(t, "db", base), Dump(t, "reference", base)) == "");
}

TEST_CASE("server: a bad import transaction names its index") {
  TestServer t;
  CreateDatabase(t, "db");
  CreateDatabase(t, "db2");
  CreateDatabase(t, "db3");
  std::vector<std::string> txs = History(WallClockMicros());
  std::vector<std::string> bad = txs;
  // A type error in transaction 5: the 5 before it stay.
  bad[5] = R"([[:db/add "x" :person/age "old"]])";
  Imported imported = RunImport(t, "db", bad, 3);
  CHECK(imported.status.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK_MESSAGE(imported.status.error_message().find("transaction 5 ") !=
                    std::string::npos,
                imported.status.error_message());
  CHECK(CountPeople(t, "db") == 200);

  // A syntax error: the message names the transaction and the position.
  bad = txs;
  bad[8] = "[[:db/add \"x\" :person/name]\n {:a";
  imported = RunImport(t, "db2", bad, 3);
  CHECK(imported.status.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK_MESSAGE(imported.status.error_message().find("transaction 8 ") !=
                    std::string::npos,
                imported.status.error_message());
  CHECK_MESSAGE(
      imported.status.error_message().find("line 2") != std::string::npos,
      imported.status.error_message());
  CHECK(CountPeople(t, "db2") == 350);

  // The same in transact mode (a non-empty database), with a uniqueness
  // conflict.
  Transact(t, txs[0], "db3");
  bad = std::vector<std::string>(txs.begin() + 1, txs.begin() + 11);
  bad[6] = R"([{:person/name "zed" :person/email "e@x"}
               {:person/name "zed2" :person/email "e@x"}])";
  imported = RunImport(t, "db3", bad, 2);
  CHECK(imported.status.error_code() == grpc::StatusCode::FAILED_PRECONDITION);
  CHECK_MESSAGE(imported.status.error_message().find("transaction 6 ") !=
                    std::string::npos,
                imported.status.error_message());
  CHECK(CountPeople(t, "db3") >= 300);

  // Unknown database; no message at all.
  imported = RunImport(t, "nope", txs, 3);
  CHECK(imported.status.error_code() == grpc::StatusCode::NOT_FOUND);
  {
    pb::ImportResponse resp;
    auto ctx = Ctx();
    auto writer = t.stub().Import(ctx.get(), &resp);
    writer->WritesDone();
    grpc::Status s = writer->Finish();
    CHECK(s.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  }
}

TEST_CASE("server: one import at a time per database") {
  TestServer t;
  CreateDatabase(t, "db");
  pb::ImportResponse first_resp;
  std::unique_ptr<grpc::ClientContext> first_ctx;
  std::unique_ptr<grpc::ClientWriter<pb::ImportRequest>> first;
  pb::ImportRequest req;
  // Once the first import's first message has arrived, a second import
  // is refused. Whichever import's first message arrives first holds the
  // database: if the probe (which sends no transaction and imports
  // nothing) got there first, the first import was the one refused, and
  // the round starts again.
  grpc::Status second;
  for (int round = 0; round < 20; ++round) {
    first_ctx = Ctx(60000);
    first = t.stub().Import(first_ctx.get(), &first_resp);
    req.Clear();
    req.set_database("db");
    req.add_tx_data(kPeopleSchema);
    REQUIRE(first->Write(req));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    second = RunImport(t, "db", {}, 1).status;
    if (second.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) break;
    first->WritesDone();
    grpc::Status lost = first->Finish();
    REQUIRE_MESSAGE(lost.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED,
                    StatusText(lost));
  }
  CHECK(second.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED);
  CHECK(second.error_message().find("another import") != std::string::npos);

  req.Clear();
  req.add_tx_data(People(0, 10));
  REQUIRE(first->Write(req));
  first->WritesDone();
  grpc::Status s = first->Finish();
  REQUIRE_MESSAGE(s.ok(), StatusText(s));
  CHECK(first_resp.transactions() == 2);
  CHECK(CountPeople(t, "db") == 10);

  // Afterwards another import may run (the database is no longer empty).
  Imported again = RunImport(t, "db", {People(10, 5)}, 1);
  REQUIRE_MESSAGE(again.status.ok(), StatusText(again.status));
  CHECK(again.response.method() == "transact");
  CHECK(CountPeople(t, "db") == 15);
}

}  // namespace
}  // namespace mentat::server::testing
