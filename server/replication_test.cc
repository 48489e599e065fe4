// Replication (docs/replication.md) with real mentatd processes: a replica
// bootstraps from the primary's snapshot, follows its log, answers every
// read as the primary does at the same basis, honours min_basis_tx,
// refuses writes naming the primary, resumes after a restart; bad input
// to the Replication service gets clear errors.

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "mentat/v1/replication.grpc.pb.h"
#include "replica.h"
#include "snapshot_receiver.h"
#include "test_support.h"
#include "testing/mentatd_process.h"

namespace mentat::server::testing {
namespace {

// A wait for replication is a read with min_basis_tx and this deadline:
// the test never sleeps, the server answers once it has the basis.
constexpr int kWaitMs = 30000;

std::vector<std::string> NodeArgs(const std::string& data_dir) {
  return {"--data-dir",
          data_dir,
          "--listen",
          "127.0.0.1:0",
          "--http",
          "127.0.0.1:0",
          "--sync-commits=false",
          "--readers-per-node",
          "2",
          "--log-level",
          "info",
          "--block-cache",
          "16M"};
}

int HttpPort(const MentatdProcess& p) {
  static const std::regex kHttp(R"(HTTP on port (\d+))");
  std::smatch m;
  const std::string log = p.log();
  if (!std::regex_search(log, m, kHttp)) return 0;
  return std::stoi(m[1]);
}

// A node: the process and a stub.
struct Node {
  Node(const std::string& dir, const std::string& name,
       std::vector<std::string> extra = {})
      : log(dir + "/" + name + ".log") {
    std::vector<std::string> args = NodeArgs(dir + "/" + name);
    args.insert(args.end(), extra.begin(), extra.end());
    process =
        std::make_unique<MentatdProcess>(args, std::vector<std::string>{}, log);
    port = process->WaitForPort();
    REQUIRE_MESSAGE(port > 0, process->log());
    address = "127.0.0.1:" + std::to_string(port);
    channel = grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
    stub = pb::Mentat::NewStub(channel);
    replication = pb::Replication::NewStub(channel);
  }
  std::string log;
  std::unique_ptr<MentatdProcess> process;
  int port = 0;
  std::string address;
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<pb::Mentat::Stub> stub;
  std::unique_ptr<pb::Replication::Stub> replication;
};

pb::TransactResponse MustTransact(Node& n, const std::string& edn) {
  pb::TransactRequest req;
  req.set_tx_data(edn);
  pb::TransactResponse resp;
  auto ctx = Ctx(20000);
  grpc::Status s = n.stub->Transact(ctx.get(), req, &resp);
  REQUIRE_MESSAGE(s.ok(), StatusText(s), " for ", edn);
  return resp;
}

// Rows of a query as sorted text (sets compare as sets).
std::vector<std::string> Rows(const QueryOutcome& q) {
  std::vector<std::string> out;
  for (const pb::Row& r : q.rows) out.push_back(r.SerializeAsString());
  std::sort(out.begin(), out.end());
  return out;
}

QueryOutcome QueryAt(Node& n, const std::string& query, int64_t min_basis,
                     pb::Basis basis = {}) {
  pb::QueryRequest req;
  req.set_query(query);
  req.set_min_basis_tx(min_basis);
  *req.mutable_basis() = basis;
  return RunQuery(*n.stub, req, kWaitMs);
}

std::vector<std::string> DatomsAt(Node& n, pb::Index index, pb::Basis basis,
                                  int64_t min_basis) {
  pb::DatomsRequest req;
  req.set_index(index);
  *req.mutable_basis() = basis;
  req.set_min_basis_tx(min_basis);
  auto ctx = Ctx(kWaitMs);
  auto reader = n.stub->Datoms(ctx.get(), req);
  pb::DatomsResponse msg;
  std::vector<std::string> out;
  while (reader->Read(&msg)) {
    for (const pb::Datom& d : msg.datoms())
      out.push_back(d.SerializeAsString());
  }
  grpc::Status s = reader->Finish();
  REQUIRE_MESSAGE(s.ok(), StatusText(s));
  return out;
}

std::vector<std::string> TxRangeAt(Node& n, int64_t min_basis) {
  pb::TxRangeRequest req;
  req.set_min_basis_tx(min_basis);
  auto ctx = Ctx(kWaitMs);
  auto reader = n.stub->TxRange(ctx.get(), req);
  pb::TxRangeResponse msg;
  std::vector<std::string> out;
  while (reader->Read(&msg)) {
    for (const auto& t : msg.transactions())
      out.push_back(t.SerializeAsString());
  }
  grpc::Status s = reader->Finish();
  REQUIRE_MESSAGE(s.ok(), StatusText(s));
  return out;
}

pb::Basis AsOf(int64_t tx) {
  pb::Basis b;
  b.set_kind(pb::Basis::AS_OF);
  b.set_tx(tx);
  return b;
}

pb::Basis Kind(pb::Basis::Kind k) {
  pb::Basis b;
  b.set_kind(k);
  return b;
}

constexpr char kNames[] =
    "[:find ?e ?n ?a :where [?e :person/name ?n] [?e :person/age ?a]]";

// Writes a history with retractions, refs and a schema change.
int64_t WriteHistory(Node& primary, int from) {
  MustTransact(primary, People(from, 50));
  MustTransact(primary, "[{:db/id [:person/name \"person " +
                            std::to_string(from) +
                            "\"] :person/age 99 :person/tag [:x/a :x/b]}]");
  MustTransact(primary, "[[:db/retract [:person/name \"person " +
                            std::to_string(from + 1) + "\"] :person/age " +
                            std::to_string((from + 1) % 100) + "]]");
  MustTransact(primary, "[[:db/add [:person/name \"person " +
                            std::to_string(from + 2) +
                            "\"] :person/friend [:person/name \"person " +
                            std::to_string(from + 3) + "\"]]]");
  return MustTransact(primary, "[[:db/retractEntity [:person/name \"person " +
                                   std::to_string(from + 4) + "\"]]]")
      .tx();
}

// Every read RPC, at the primary and at the replica, at basis `tx`.
void CheckSameReads(Node& primary, Node& replica, int64_t tx) {
  const QueryOutcome pq = QueryAt(primary, kNames, tx);
  const QueryOutcome rq = QueryAt(replica, kNames, tx);
  REQUIRE_MESSAGE(pq.status.ok(), StatusText(pq.status));
  REQUIRE_MESSAGE(rq.status.ok(), StatusText(rq.status));
  CHECK(pq.basis_tx == rq.basis_tx);
  CHECK(Rows(pq) == Rows(rq));
  CHECK(!pq.rows.empty());
  const int64_t earlier = tx - 3;
  CHECK(Rows(QueryAt(primary, kNames, tx, AsOf(earlier))) ==
        Rows(QueryAt(replica, kNames, tx, AsOf(earlier))));
  const char* history =
      "[:find ?e ?a ?tx ?added :where [?e :person/age ?a ?tx ?added]]";
  CHECK(Rows(QueryAt(primary, history, tx, Kind(pb::Basis::HISTORY))) ==
        Rows(QueryAt(replica, history, tx, Kind(pb::Basis::HISTORY))));

  for (pb::Index index : {pb::EAVT, pb::AEVT, pb::AVET, pb::VAET}) {
    CHECK(DatomsAt(primary, index, {}, tx) == DatomsAt(replica, index, {}, tx));
    CHECK(DatomsAt(primary, index, Kind(pb::Basis::HISTORY), tx) ==
          DatomsAt(replica, index, Kind(pb::Basis::HISTORY), tx));
    CHECK(DatomsAt(primary, index, AsOf(earlier), tx) ==
          DatomsAt(replica, index, AsOf(earlier), tx));
  }
  CHECK(TxRangeAt(primary, tx) == TxRangeAt(replica, tx));

  pb::PullRequest pull;
  pull.set_pattern("[* {:person/friend [:person/name]}]");
  pull.mutable_entity()->mutable_lookup()->set_attribute("person/name");
  pull.mutable_entity()->mutable_lookup()->mutable_value()->set_string_value(
      "person 2");
  pull.set_min_basis_tx(tx);
  pb::PullResponse pp, rp;
  {
    auto c1 = Ctx(kWaitMs), c2 = Ctx(kWaitMs);
    REQUIRE(primary.stub->Pull(c1.get(), pull, &pp).ok());
    REQUIRE(replica.stub->Pull(c2.get(), pull, &rp).ok());
  }
  CHECK(pp.SerializeAsString() == rp.SerializeAsString());

  pb::PullManyRequest many;
  many.set_pattern("[*]");
  for (int i = 0; i < 8; ++i) {
    auto* e = many.add_entities()->mutable_lookup();
    e->set_attribute("person/name");
    e->mutable_value()->set_string_value("person " + std::to_string(i));
  }
  many.set_min_basis_tx(tx);
  pb::PullManyResponse pm, rm;
  {
    auto c1 = Ctx(kWaitMs), c2 = Ctx(kWaitMs);
    REQUIRE(primary.stub->PullMany(c1.get(), many, &pm).ok());
    REQUIRE(replica.stub->PullMany(c2.get(), many, &rm).ok());
  }
  CHECK(pm.SerializeAsString() == rm.SerializeAsString());

  pb::SchemaRequest schema;
  schema.set_min_basis_tx(tx);
  pb::SchemaResponse ps, rs;
  {
    auto c1 = Ctx(kWaitMs), c2 = Ctx(kWaitMs);
    REQUIRE(primary.stub->Schema(c1.get(), schema, &ps).ok());
    REQUIRE(replica.stub->Schema(c2.get(), schema, &rs).ok());
  }
  CHECK(ps.SerializeAsString() == rs.SerializeAsString());

  pb::StatsRequest stats;
  stats.set_value_counts(true);
  stats.set_min_basis_tx(tx);
  pb::StatsResponse pst, rst;
  {
    auto c1 = Ctx(kWaitMs), c2 = Ctx(kWaitMs);
    REQUIRE(primary.stub->Stats(c1.get(), stats, &pst).ok());
    REQUIRE(replica.stub->Stats(c2.get(), stats, &rst).ok());
  }
  CHECK(pst.basis_tx() == rst.basis_tx());
  CHECK(pst.basis_tx_instant_micros() == rst.basis_tx_instant_micros());
  REQUIRE(pst.attributes_size() == rst.attributes_size());
  for (int i = 0; i < pst.attributes_size(); ++i) {
    CHECK(pst.attributes(i).SerializeAsString() ==
          rst.attributes(i).SerializeAsString());
  }

  pb::ExplainRequest explain;
  explain.set_query(kNames);
  explain.set_min_basis_tx(tx);
  pb::ExplainResponse pe, re;
  {
    auto c1 = Ctx(kWaitMs), c2 = Ctx(kWaitMs);
    REQUIRE(primary.stub->Explain(c1.get(), explain, &pe).ok());
    REQUIRE(replica.stub->Explain(c2.get(), explain, &re).ok());
  }
  CHECK(pe.plan() == re.plan());
}

TEST_CASE(
    "replication: a fresh replica bootstraps, follows, and answers "
    "every read as the primary; writes there are refused") {
  TempDir dir;
  std::filesystem::create_directories(dir.path());
  Node primary(dir.path(), "primary");
  MustTransact(primary, kPeopleSchema);
  MustTransact(primary, "[{:db/ident :x/a} {:db/ident :x/b}]");
  WriteHistory(primary, 0);

  Node replica(
      dir.path(), "replica",
      {"--replica-of", primary.address, "--max-basis-wait-ms", "1000"});
  // Written after the replica started: they come through Follow.
  int64_t tx = WriteHistory(primary, 100);
  CheckSameReads(primary, replica, tx);
  CHECK(replica.process->log().find("bootstrapped at basis") !=
        std::string::npos);

  SUBCASE("read-your-writes through min_basis_tx") {
    for (int i = 0; i < 20; ++i) {
      const int64_t t = MustTransact(primary, "[{:person/name \"ryw " +
                                                  std::to_string(i) + "\"}]")
                            .tx();
      pb::QueryRequest req;
      req.set_query("[:find ?e . :in $ ?n :where [?e :person/name ?n]]");
      req.add_inputs()->set_edn("\"ryw " + std::to_string(i) + "\"");
      // A t works as well as a tx id.
      req.set_min_basis_tx(t & ((int64_t{1} << 42) - 1));
      QueryOutcome q = RunQuery(*replica.stub, req, kWaitMs);
      REQUIRE_MESSAGE(q.status.ok(), StatusText(q.status));
      REQUIRE(q.rows.size() == 1);
      CHECK(q.basis_tx >= t);
    }
    // A basis the primary never wrote: UNAVAILABLE once the wait's bound
    // (--max-basis-wait-ms, shorter than the call's deadline) passes,
    // naming the basis the replica has.
    pb::PullRequest pull;
    pull.set_pattern("[*]");
    pull.mutable_entity()->set_id(1);
    pull.set_min_basis_tx(tx + 1000000);
    pb::PullResponse resp;
    auto ctx = Ctx(20000);
    grpc::Status s = replica.stub->Pull(ctx.get(), pull, &resp);
    CHECK(s.error_code() == grpc::StatusCode::UNAVAILABLE);
    CHECK_MESSAGE(s.error_message().find("has basis") != std::string::npos,
                  s.error_message());
  }

  SUBCASE("writes at the replica are refused, naming the primary") {
    pb::TransactRequest req;
    req.set_tx_data("[{:person/name \"nope\"}]");
    pb::TransactResponse resp;
    auto ctx = Ctx();
    grpc::Status s = replica.stub->Transact(ctx.get(), req, &resp);
    CHECK(s.error_code() == grpc::StatusCode::FAILED_PRECONDITION);
    CHECK_MESSAGE(s.error_message().find(primary.address) != std::string::npos,
                  s.error_message());
    pb::CreateDatabaseRequest create;
    create.set_name("other");
    pb::CreateDatabaseResponse created;
    auto ctx2 = Ctx();
    s = replica.stub->CreateDatabase(ctx2.get(), create, &created);
    CHECK(s.error_code() == grpc::StatusCode::FAILED_PRECONDITION);
    CHECK(s.error_message().find(primary.address) != std::string::npos);
  }

  SUBCASE("metrics say role, applied basis and lag") {
    const std::string m = HttpGet(HttpPort(*replica.process), "/metrics");
    CHECK(m.find("mentat_replication_role 1") != std::string::npos);
    // Values move with the stream; that they are there is what counts.
    CHECK(m.find("mentat_replica_applied_basis_tx{database=\"default\"} ") !=
          std::string::npos);
    CHECK(m.find("mentat_replica_lag_tx{database=\"default\"} ") !=
          std::string::npos);
    CHECK(m.find("mentat_replica_lag_ms{database=\"default\"} ") !=
          std::string::npos);
    CHECK(m.find("mentat_replication_bytes_received_total ") !=
          std::string::npos);
    const std::string pm = HttpGet(HttpPort(*primary.process), "/metrics");
    CHECK(pm.find("mentat_replication_role 0") != std::string::npos);
    CHECK(pm.find("mentat_replication_followers 1") != std::string::npos);
  }
}

TEST_CASE("replication: a restarted replica resumes from its basis") {
  TempDir dir;
  std::filesystem::create_directories(dir.path());
  Node primary(dir.path(), "primary");
  MustTransact(primary, kPeopleSchema);
  MustTransact(primary, "[{:db/ident :x/a} {:db/ident :x/b}]");
  int64_t tx = WriteHistory(primary, 0);
  {
    Node replica(dir.path(), "replica", {"--replica-of", primary.address});
    CHECK(QueryAt(replica, kNames, tx).status.ok());
    replica.process->Kill();  // kill -9: what it applied is durable or not
  }
  tx = WriteHistory(primary, 200);
  Node again(dir.path(), "replica", {"--replica-of", primary.address});
  CheckSameReads(primary, again, tx);
  // It followed from its basis: no second bootstrap.
  CHECK(again.process->log().find("bootstrapping") == std::string::npos);
}

TEST_CASE(
    "replication: a Follow entry's term must be the one it was stored "
    "with") {
  TempDir dir;
  std::filesystem::create_directories(dir.path());
  Node primary(dir.path(), "primary");
  const int64_t tx = MustTransact(primary, kPeopleSchema).tx();

  // The primary's own entry, as Follow sends it.
  pb::LogEntry entry;
  {
    pb::FollowRequest req;
    auto ctx = Ctx(5000);
    auto reader = primary.replication->Follow(ctx.get(), req);
    pb::FollowResponse resp;
    while (reader->Read(&resp)) {
      for (const pb::LogEntry& e : resp.entries()) {
        if (e.tx() == tx) {
          entry = e;
          ctx->TryCancel();
        }
      }
    }
    reader->Finish().IgnoreError();  // cancelled once it had the entry
  }
  REQUIRE(entry.tx() == tx);
  CHECK(CheckEntryTerm(entry).ok());

  // Mislabelled: refused, naming both terms.
  pb::LogEntry relabelled = entry;
  relabelled.set_term(entry.term() + 7);
  absl::Status s = CheckEntryTerm(relabelled);
  CHECK(s.code() == absl::StatusCode::kDataLoss);
  CHECK_MESSAGE(s.message().find("term " + std::to_string(entry.term() + 7)) !=
                    std::string::npos,
                s.message());

  // A header that does not decode: refused too.
  pb::LogEntry cut = entry;
  cut.set_entry(std::string("\0\2", 2));
  CHECK_FALSE(CheckEntryTerm(cut).ok());
}

TEST_CASE("replication: bad Follow and Snapshot requests get clear errors") {
  TempDir dir;
  std::filesystem::create_directories(dir.path());
  Node primary(dir.path(), "primary");
  const int64_t tx = MustTransact(primary, kPeopleSchema).tx();

  auto follow = [&](int64_t after, int64_t instant) {
    pb::FollowRequest req;
    req.set_after_tx(after);
    req.set_after_tx_instant_micros(instant);
    auto ctx = Ctx(5000);
    auto reader = primary.replication->Follow(ctx.get(), req);
    pb::FollowResponse resp;
    while (reader->Read(&resp)) {
      ctx->TryCancel();
    }
    return reader->Finish();
  };
  grpc::Status s = follow(tx + 1000, 0);
  CHECK(s.error_code() == grpc::StatusCode::FAILED_PRECONDITION);
  CHECK_MESSAGE(s.error_message().find("ahead") != std::string::npos,
                s.error_message());
  s = follow(tx, 12345);
  CHECK(s.error_code() == grpc::StatusCode::FAILED_PRECONDITION);
  CHECK_MESSAGE(s.error_message().find("history differs") != std::string::npos,
                s.error_message());
  s = follow(-5, 0);
  CHECK(s.error_code() == grpc::StatusCode::INVALID_ARGUMENT);

  // A follower of a cluster: this node is in none, so it serves no such
  // follower its log, its checkpoint or its acknowledgements.
  {
    pb::FollowRequest req;
    req.set_cluster("prod");
    auto ctx = Ctx(5000);
    auto reader = primary.replication->Follow(ctx.get(), req);
    pb::FollowResponse resp;
    CHECK_FALSE(reader->Read(&resp));
    s = reader->Finish();
    CHECK(s.error_code() == grpc::StatusCode::FAILED_PRECONDITION);
    CHECK_MESSAGE(s.error_message().find("cluster \"prod\", this node to no "
                                         "cluster") != std::string::npos,
                  s.error_message());
  }
  {
    pb::SnapshotRequest req;
    req.set_cluster("prod");
    auto ctx = Ctx(5000);
    auto reader = primary.replication->Snapshot(ctx.get(), req);
    pb::SnapshotChunk chunk;
    CHECK_FALSE(reader->Read(&chunk));
    s = reader->Finish();
    CHECK(s.error_code() == grpc::StatusCode::FAILED_PRECONDITION);
    CHECK(s.error_message().find("\"prod\"") != std::string::npos);
  }

  {
    pb::SnapshotRequest req;
    req.set_database("nosuch");
    auto ctx = Ctx(5000);
    auto reader = primary.replication->Snapshot(ctx.get(), req);
    pb::SnapshotChunk chunk;
    while (reader->Read(&chunk)) {
    }
    CHECK(reader->Finish().error_code() == grpc::StatusCode::NOT_FOUND);
  }

  // A checkpoint an earlier process left (it crashed mid-stream; pid 1 is
  // never a mentatd's) goes when the next snapshot is taken.
  const std::filesystem::path stale = std::filesystem::path(dir.path()) /
                                      "primary" / ".replication-snapshots" /
                                      "default-1-0";
  std::filesystem::create_directories(stale);
  { std::ofstream(stale / "000001.sst") << "left behind"; }

  // A real snapshot, then fed to a receiver cut short and corrupted.
  std::vector<pb::SnapshotChunk> chunks;
  {
    pb::SnapshotRequest req;
    auto ctx = Ctx(20000);
    auto reader = primary.replication->Snapshot(ctx.get(), req);
    pb::SnapshotChunk chunk;
    while (reader->Read(&chunk)) chunks.push_back(chunk);
    grpc::Status done = reader->Finish();
    REQUIRE_MESSAGE(done.ok(), StatusText(done));
  }
  REQUIRE(chunks.size() >= 3);
  CHECK_FALSE(std::filesystem::exists(stale));
  CHECK(chunks.front().basis_tx() == tx);
  CHECK(chunks.back().last());
  {
    SnapshotReceiver whole("default", dir.path() + "/whole");
    for (const auto& c : chunks) REQUIRE(whole.Add(c).ok());
    CHECK(whole.Finish(absl::OkStatus()).ok());
  }
  {
    SnapshotReceiver cut("default", dir.path() + "/cut");
    for (size_t i = 0; i + 2 < chunks.size(); ++i) {
      REQUIRE(cut.Add(chunks[i]).ok());
    }
    absl::Status f = cut.Finish(absl::OkStatus());
    CHECK(f.code() == absl::StatusCode::kDataLoss);
    CHECK_MESSAGE(
        std::string(f.message()).find("cut short") != std::string::npos,
        f.ToString());
  }
  {
    SnapshotReceiver bad("default", dir.path() + "/bad");
    absl::Status st;
    for (auto c : chunks) {
      if (!c.data().empty()) c.mutable_data()->front() ^= 1;
      st = bad.Add(c);
      if (!st.ok()) break;
    }
    CHECK(st.code() == absl::StatusCode::kDataLoss);
    CHECK_MESSAGE(
        std::string(st.message()).find("SHA-256") != std::string::npos,
        st.ToString());
  }
}

}  // namespace
}  // namespace mentat::server::testing
