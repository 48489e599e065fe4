// A cluster (docs/replication.md, phase 2) with a real etcd and three real
// mentatd processes on loopback: one node wins and is primary, the others
// follow it; kill -9 of the primary elects the most caught-up replica,
// which takes writes and has what was acknowledged and replicated before;
// a primary stopped past its lease refuses writes when it runs again and
// rejoins as a replica; a killed primary restarted rejoins as a replica;
// a former primary's unreplicated tail is set aside, and reads waiting on
// that copy answer UNAVAILABLE instead of keeping it open; a primary that
// loses etcd stops taking writes and still reads what it acknowledged; a
// follower of another cluster is refused.
// Every wait polls with a deadline (never a sleep as synchronisation).

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <mutex>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "mentat/v1/replication.grpc.pb.h"
#include "test_support.h"
#include "testing/etcd_process.h"
#include "testing/mentatd_process.h"

namespace mentat::server::testing {
namespace {

// Short leases keep the test's wall time modest: a failover takes about
// the TTL.
constexpr char kTtl[] = "2";
// Every wait's deadline: generous for a busy 2-core machine.
constexpr auto kDeadline = std::chrono::seconds(60);

// A cluster node: its data directory survives the process (a restart).
struct ClusterNodeProcess {
  // `listen_port` 0: any free port.
  ClusterNodeProcess(const std::string& dir, const std::string& id,
                     const std::string& etcd, int incarnation = 0,
                     int listen_port = 0)
      : id(id) {
    const std::string log =
        dir + "/" + id + "." + std::to_string(incarnation) + ".log";
    std::vector<std::string> args = {"--data-dir",
                                     dir + "/" + id,
                                     "--listen",
                                     "127.0.0.1:" + std::to_string(listen_port),
                                     "--http",
                                     "127.0.0.1:0",
                                     "--sync-commits=false",
                                     "--readers-per-node",
                                     "2",
                                     "--block-cache",
                                     "16M",
                                     "--cluster",
                                     "test",
                                     "--etcd",
                                     etcd,
                                     "--node-id",
                                     id,
                                     "--lease-ttl",
                                     kTtl};
    process =
        std::make_unique<MentatdProcess>(args, std::vector<std::string>{}, log);
    port = process->WaitForPort(std::chrono::seconds(30));
    REQUIRE_MESSAGE(port > 0, process->log());
    static const std::regex kHttp(R"(HTTP on port (\d+))");
    std::smatch m;
    const std::string text = process->log();
    REQUIRE(std::regex_search(text, m, kHttp));
    http_port = std::stoi(m[1]);
    address = "127.0.0.1:" + std::to_string(port);
    stub = pb::Mentat::NewStub(
        grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  }
  // 0 primary, 1 replica, 2 candidate (mentat_cluster_role).
  int Role() const {
    return static_cast<int>(
        MetricValue(HttpGet(http_port, "/metrics"), "mentat_cluster_role"));
  }
  double Metric(const std::string& name) const {
    return MetricValue(HttpGet(http_port, "/metrics"), name);
  }
  grpc::Status Transact(const std::string& edn,
                        pb::TransactResponse* resp = nullptr) {
    pb::TransactRequest req;
    req.set_tx_data(edn);
    pb::TransactResponse ignored;
    auto ctx = Ctx(10000);
    return stub->Transact(ctx.get(), req, resp != nullptr ? resp : &ignored);
  }

  std::string id;
  std::unique_ptr<MentatdProcess> process;
  int port = 0;
  int http_port = 0;
  std::string address;
  std::unique_ptr<pb::Mentat::Stub> stub;
};

// The first message of a Follow of "default" at `address` by a follower
// that has seen `min_term`, or the status that ended the stream.
grpc::Status FollowFirst(const std::string& address, uint64_t min_term,
                         pb::FollowResponse* first,
                         const std::string& cluster = "") {
  auto stub = pb::Replication::NewStub(
      grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  auto ctx = Ctx(10000);
  pb::FollowRequest req;
  req.set_database("default");
  req.set_min_term(min_term);
  req.set_follower("test");
  req.set_cluster(cluster);
  auto reader = stub->Follow(ctx.get(), req);
  if (reader->Read(first)) {
    ctx->TryCancel();
    reader->Finish();
    return grpc::Status::OK;
  }
  return reader->Finish();
}

grpc::Status AckAt(const std::string& address, uint64_t term,
                   int64_t applied_tx, const std::string& cluster = "") {
  auto stub = pb::Replication::NewStub(
      grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  auto ctx = Ctx(10000);
  pb::AckRequest req;
  req.set_database("default");
  req.set_applied_tx(applied_tx);
  req.set_term(term);
  req.set_follower("test");
  req.set_cluster(cluster);
  pb::AckResponse resp;
  return stub->Ack(ctx.get(), req, &resp);
}

bool Before(std::chrono::steady_clock::time_point until) {
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  return std::chrono::steady_clock::now() < until;
}

// The one node of `nodes` that says it is primary, once every other says
// it is a replica; nullptr at the deadline.
ClusterNodeProcess* WaitForPrimary(
    const std::vector<ClusterNodeProcess*>& nodes) {
  const auto until = std::chrono::steady_clock::now() + kDeadline;
  do {
    ClusterNodeProcess* primary = nullptr;
    int replicas = 0;
    for (ClusterNodeProcess* n : nodes) {
      const int role = n->Role();
      if (role == 0) primary = n;
      if (role == 1) replicas++;
    }
    if (primary != nullptr && replicas == static_cast<int>(nodes.size()) - 1) {
      return primary;
    }
  } while (Before(until));
  return nullptr;
}

// Polls until `edn` commits at `node` (a new primary takes writes once
// its stores are promoted); the last status.
grpc::Status TransactUntilOk(ClusterNodeProcess& node, const std::string& edn,
                             pb::TransactResponse* resp) {
  const auto until = std::chrono::steady_clock::now() + kDeadline;
  grpc::Status s;
  do {
    s = node.Transact(edn, resp);
    if (s.ok()) return s;
  } while (Before(until));
  return s;
}

constexpr char kNames[] = "[:find ?n :where [?e :person/name ?n]]";

// The names at `node` once it has `min_basis` (retrying while its copy of
// the database is still being bootstrapped).
std::vector<std::string> NamesAt(ClusterNodeProcess& node, int64_t min_basis) {
  const auto until = std::chrono::steady_clock::now() + kDeadline;
  QueryOutcome q;
  do {
    pb::QueryRequest req;
    req.set_query(kNames);
    req.set_min_basis_tx(min_basis);
    q = RunQuery(*node.stub, req, 20000);
    if (q.status.ok()) break;
  } while (Before(until));
  REQUIRE_MESSAGE(q.status.ok(), StatusText(q.status));
  std::vector<std::string> out;
  for (const pb::Row& r : q.rows) out.push_back(r.values(0).string_value());
  std::sort(out.begin(), out.end());
  return out;
}

std::string Names(int from, int n) {
  std::string edn = "[";
  for (int i = from; i < from + n; ++i) {
    edn += "{:person/name \"p" + std::to_string(i) + "\"}";
  }
  return edn + "]";
}

TEST_CASE(
    "cluster: election, writes, failover after kill -9, a stale primary "
    "refuses writes, former primaries rejoin as replicas") {
  TempDir dir;
  EtcdProcess etcd(dir.path());
  if (!etcd.available()) {
    MESSAGE(
        "etcd is not installed (deploy/install-deps.sh test installs "
        "etcd-server): the cluster test is skipped");
    return;
  }
  REQUIRE_MESSAGE(etcd.WaitReady(), etcd.log());
  std::vector<std::unique_ptr<ClusterNodeProcess>> owned;
  for (const char* id : {"n1", "n2", "n3"}) {
    owned.push_back(
        std::make_unique<ClusterNodeProcess>(dir.path(), id, etcd.endpoint()));
  }
  std::vector<ClusterNodeProcess*> all = {owned[0].get(), owned[1].get(),
                                          owned[2].get()};

  // One node wins; writes to it succeed; the replicas reach its basis.
  ClusterNodeProcess* first = WaitForPrimary(all);
  REQUIRE_MESSAGE(first != nullptr, all[0]->process->log());
  const double first_term = first->Metric("mentat_cluster_term");
  CHECK(first_term > 0);
  pb::TransactResponse resp;
  REQUIRE(TransactUntilOk(*first, kPeopleSchema, &resp).ok());
  REQUIRE(TransactUntilOk(*first, Names(0, 20), &resp).ok());
  const int64_t acknowledged = resp.tx();
  const std::vector<std::string> before = NamesAt(*first, acknowledged);
  CHECK(before.size() == 20);
  std::vector<ClusterNodeProcess*> replicas;
  for (ClusterNodeProcess* n : all) {
    if (n == first) continue;
    replicas.push_back(n);
    CHECK(NamesAt(*n, acknowledged) == before);
    // A replica refuses writes, naming the primary.
    grpc::Status refused = n->Transact(Names(100, 1));
    CHECK(refused.error_code() == grpc::StatusCode::FAILED_PRECONDITION);
    CHECK(refused.error_message().find(first->address) != std::string::npos);
  }

  // Terms on Follow: the primary's stream carries its term; it refuses a
  // follower that has seen a later term (it would be a deposed primary);
  // a replica is no primary of any term. Ack checks the term the same way.
  {
    const auto term = static_cast<uint64_t>(first_term);
    pb::FollowResponse follow;
    grpc::Status s = FollowFirst(first->address, term, &follow);
    CHECK_MESSAGE(s.ok(), StatusText(s));
    CHECK(follow.term() == term);
    CHECK(!follow.acks_wanted());  // asynchronous durability
    s = FollowFirst(first->address, term + 1000, &follow);
    CHECK(s.error_code() == grpc::StatusCode::FAILED_PRECONDITION);
    CHECK_MESSAGE(s.error_message().find("deposed") != std::string::npos,
                  StatusText(s));
    CHECK(s.error_message().find(std::to_string(term)) != std::string::npos);
    s = FollowFirst(replicas[0]->address, term, &follow);
    CHECK(s.error_code() == grpc::StatusCode::FAILED_PRECONDITION);
    CHECK_MESSAGE(
        s.error_message().find("replica in term " + std::to_string(term)) !=
            std::string::npos,
        StatusText(s));
    CHECK(AckAt(first->address, term, acknowledged).ok());
    CHECK(AckAt(first->address, term + 1, acknowledged).error_code() ==
          grpc::StatusCode::FAILED_PRECONDITION);

    // A follower of another cluster (a leader key or an address that
    // reaches this node by mistake) is refused by log, checkpoint and
    // acknowledgement alike, naming both clusters; one of this cluster is
    // served.
    s = FollowFirst(first->address, term, &follow, "other");
    CHECK(s.error_code() == grpc::StatusCode::FAILED_PRECONDITION);
    CHECK_MESSAGE(s.error_message().find(
                      "cluster \"other\", this node to cluster \"test\"") !=
                      std::string::npos,
                  StatusText(s));
    s = FollowFirst(first->address, term, &follow, "test");
    CHECK_MESSAGE(s.ok(), StatusText(s));
    grpc::Status ack = AckAt(first->address, term, acknowledged, "other");
    CHECK(ack.error_code() == grpc::StatusCode::FAILED_PRECONDITION);
    CHECK(ack.error_message().find("\"other\"") != std::string::npos);
    auto stub = pb::Replication::NewStub(grpc::CreateChannel(
        first->address, grpc::InsecureChannelCredentials()));
    auto ctx = Ctx(10000);
    pb::SnapshotRequest snapshot;
    snapshot.set_database("default");
    snapshot.set_cluster("other");
    auto reader = stub->Snapshot(ctx.get(), snapshot);
    pb::SnapshotChunk chunk;
    CHECK_FALSE(reader->Read(&chunk));
    s = reader->Finish();
    CHECK(s.error_code() == grpc::StatusCode::FAILED_PRECONDITION);
    CHECK(s.error_message().find("\"other\"") != std::string::npos);
  }

  // kill -9 of the primary: a replica is elected in a later term and
  // takes writes; what the replicas had is there.
  first->process->Kill();
  ClusterNodeProcess* second = WaitForPrimary(replicas);
  REQUIRE_MESSAGE(second != nullptr, replicas[0]->process->log());
  CHECK(second->Metric("mentat_cluster_term") > first_term);
  CHECK(second->Metric("mentat_cluster_elections_won_total") == 1);
  REQUIRE(TransactUntilOk(*second, Names(20, 5), &resp).ok());
  const int64_t after_failover = resp.tx();
  std::vector<std::string> expected = NamesAt(*second, after_failover);
  CHECK(expected.size() == 25);
  for (const std::string& name : before) {
    CHECK(std::find(expected.begin(), expected.end(), name) != expected.end());
  }
  ClusterNodeProcess* third = replicas[0] == second ? replicas[1] : replicas[0];
  CHECK(NamesAt(*third, after_failover) == expected);

  // A stale primary: stopped past its lease, the other node wins; when it
  // runs again its writes are refused, and it follows the new primary.
  second->process->Signal(SIGSTOP);
  ClusterNodeProcess* fourth = WaitForPrimary({third});
  second->process->Signal(SIGCONT);
  REQUIRE_MESSAGE(fourth == third, third->process->log());
  grpc::Status stale = second->Transact(Names(200, 1));
  CHECK(!stale.ok());
  CHECK((stale.error_code() == grpc::StatusCode::UNAVAILABLE ||
         stale.error_code() == grpc::StatusCode::FAILED_PRECONDITION));
  MESSAGE("a stale primary's write: ", StatusText(stale));
  // The deposed primary serves no follower of the new term.
  pb::FollowResponse follow;
  grpc::Status deposed = FollowFirst(
      second->address,
      static_cast<uint64_t>(third->Metric("mentat_cluster_term")), &follow);
  CHECK_MESSAGE(deposed.error_code() == grpc::StatusCode::FAILED_PRECONDITION,
                StatusText(deposed));
  REQUIRE(TransactUntilOk(*third, Names(25, 5), &resp).ok());
  const int64_t latest = resp.tx();
  expected = NamesAt(*third, latest);
  CHECK(expected.size() == 30);
  CHECK(WaitForPrimary({third, second}) == third);
  CHECK(NamesAt(*second, latest) == expected);

  // The primary killed first comes back with its data: a replica of the
  // current primary, with everything.
  owned.push_back(std::make_unique<ClusterNodeProcess>(dir.path(), first->id,
                                                       etcd.endpoint(), 1));
  ClusterNodeProcess* back = owned.back().get();
  CHECK(WaitForPrimary({third, second, back}) == third);
  CHECK(NamesAt(*back, latest) == expected);
  CHECK(back->Metric("mentat_cluster_tails_discarded_total") == 0);
  grpc::Status at_back = back->Transact(Names(300, 1));
  CHECK(at_back.error_code() == grpc::StatusCode::FAILED_PRECONDITION);
  CHECK(at_back.error_message().find(third->address) != std::string::npos);
}

// The first file under `dir` whose name contains `part`, or "".
std::string FindUnder(const std::string& dir, const std::string& part) {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (e.path().filename().string().find(part) != std::string::npos) {
      return e.path().string();
    }
  }
  return "";
}

TEST_CASE(
    "cluster: a former primary's unreplicated tail is moved aside and the "
    "database bootstrapped from the new primary") {
  TempDir dir;
  EtcdProcess etcd(dir.path());
  if (!etcd.available()) {
    MESSAGE("etcd is not installed: the cluster test is skipped");
    return;
  }
  REQUIRE_MESSAGE(etcd.WaitReady(), etcd.log());
  std::vector<std::unique_ptr<ClusterNodeProcess>> owned;
  for (const char* id : {"n1", "n2", "n3"}) {
    owned.push_back(
        std::make_unique<ClusterNodeProcess>(dir.path(), id, etcd.endpoint()));
  }
  ClusterNodeProcess* primary =
      WaitForPrimary({owned[0].get(), owned[1].get(), owned[2].get()});
  REQUIRE(primary != nullptr);
  pb::TransactResponse resp;
  REQUIRE(TransactUntilOk(*primary, kPeopleSchema, &resp).ok());
  REQUIRE(TransactUntilOk(*primary, Names(0, 10), &resp).ok());
  const int64_t replicated = resp.tx();
  std::vector<std::string> replica_ids;
  for (auto& n : owned) {
    if (n.get() == primary) continue;
    CHECK(NamesAt(*n, replicated).size() == 10);
    replica_ids.push_back(n->id);
    n->process->Kill();
  }
  // With both replicas down, the primary acknowledges a transaction no
  // other node receives (asynchronous mode), then dies.
  REQUIRE(TransactUntilOk(*primary, Names(50, 3), &resp).ok());
  const std::string primary_id = primary->id;
  primary->process->Kill();

  // The replicas come back and elect one of them, which writes on.
  owned.push_back(std::make_unique<ClusterNodeProcess>(
      dir.path(), replica_ids[0], etcd.endpoint(), 1));
  owned.push_back(std::make_unique<ClusterNodeProcess>(
      dir.path(), replica_ids[1], etcd.endpoint(), 1));
  ClusterNodeProcess* a = owned[owned.size() - 2].get();
  ClusterNodeProcess* b = owned.back().get();
  ClusterNodeProcess* next = WaitForPrimary({a, b});
  REQUIRE(next != nullptr);
  REQUIRE(TransactUntilOk(*next, Names(60, 2), &resp).ok());
  // One transaction more than the old primary's log holds: a read at this
  // basis can never be answered by the old primary's copy.
  REQUIRE(TransactUntilOk(*next, Names(70, 2), &resp).ok());
  const int64_t latest = resp.tx();
  const std::vector<std::string> expected = NamesAt(*next, latest);
  CHECK(expected.size() == 14);

  // Reads that wait for `latest` at the old primary, sent from before it
  // starts (its port is chosen now; wait_for_ready holds them until it
  // listens) and on until one is answered by its new copy. Those waiting
  // on the copy being set aside must end at once with UNAVAILABLE naming
  // why: a wait that went on would keep the old store open and the new
  // copy from opening until the wait's deadline.
  const int back_port = FreeLoopbackPort();
  const std::string back_address = "127.0.0.1:" + std::to_string(back_port);
  std::mutex outcomes_mu;
  std::vector<grpc::Status> outcomes;
  std::vector<std::thread> readers;
  for (int r = 0; r < 3; ++r) {
    readers.emplace_back([&] {
      grpc::ChannelArguments args;
      args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 20);
      args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 20);
      args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 50);
      auto stub = pb::Mentat::NewStub(grpc::CreateCustomChannel(
          back_address, grpc::InsecureChannelCredentials(), args));
      const auto until = std::chrono::steady_clock::now() + kDeadline;
      do {
        pb::QueryRequest req;
        req.set_query(kNames);
        req.set_min_basis_tx(latest);
        auto ctx = Ctx(40000);
        ctx->set_wait_for_ready(true);
        pb::QueryResponse resp;
        const grpc::Status s = stub->QueryFirst(ctx.get(), req, &resp);
        {
          std::lock_guard<std::mutex> lock(outcomes_mu);
          outcomes.push_back(s);
        }
        if (s.ok()) return;
      } while (Before(until));
    });
  }

  // The old primary rejoins: its tail is refused by the new primary, so
  // its database is moved aside (kept) and bootstrapped again.
  owned.push_back(std::make_unique<ClusterNodeProcess>(
      dir.path(), primary_id, etcd.endpoint(), 1, back_port));
  ClusterNodeProcess* back = owned.back().get();
  const auto until = std::chrono::steady_clock::now() + kDeadline;
  while (back->Metric("mentat_cluster_tails_discarded_total") < 1 &&
         Before(until)) {
  }
  CHECK(back->Metric("mentat_cluster_tails_discarded_total") == 1);
  CHECK(NamesAt(*back, latest) == expected);
  for (std::thread& t : readers) t.join();
  CHECK(
      !FindUnder(dir.path() + "/" + primary_id, "default.discarded-").empty());
  CHECK(back->process->log().find("moved it aside") != std::string::npos);
  // RocksDB's refusal of a second open of the same path.
  CHECK(back->process->log().find("lock hold") == std::string::npos);

  // Each reader was answered by the new copy in the end; before that, only
  // UNAVAILABLE naming the set-aside copy or the copy being made, never a
  // wait that ran to its deadline.
  int answered = 0;
  int set_aside = 0;
  for (const grpc::Status& s : outcomes) {
    if (s.ok()) {
      answered++;
      continue;
    }
    CHECK_MESSAGE(s.error_code() == grpc::StatusCode::UNAVAILABLE,
                  StatusText(s));
    CHECK_MESSAGE(s.error_message().find("did not reach min_basis_tx") ==
                      std::string::npos,
                  StatusText(s));
    if (s.error_message().find("was set aside on this node") !=
        std::string::npos) {
      set_aside++;
    }
  }
  CHECK(answered == 3);
  MESSAGE(outcomes.size(), " reads at the rejoining node, ", set_aside,
          " of them waiting on the copy set aside");
  WARN_MESSAGE(set_aside > 0,
               "no read was waiting on the old copy when it was set aside");
}

TEST_CASE("cluster: a primary that loses etcd stops taking writes") {
  // Nothing may be acknowledged once this node cannot know it is still
  // the primary: another node could win the key when its lease expires.
  // Reads go on, and what was acknowledged before is all there.
  TempDir dir;
  auto etcd = std::make_unique<EtcdProcess>(dir.path());
  if (!etcd->available()) {
    MESSAGE("etcd is not installed: the cluster test is skipped");
    return;
  }
  REQUIRE_MESSAGE(etcd->WaitReady(), etcd->log());
  ClusterNodeProcess node(dir.path(), "n1", etcd->endpoint());
  REQUIRE_MESSAGE(WaitForPrimary({&node}) != nullptr, node.process->log());
  pb::TransactResponse resp;
  REQUIRE(TransactUntilOk(node, kPeopleSchema, &resp).ok());
  REQUIRE(TransactUntilOk(node, Names(0, 5), &resp).ok());
  const int64_t acknowledged = resp.tx();

  etcd.reset();  // killed: the lease cannot be renewed
  const auto until = std::chrono::steady_clock::now() + kDeadline;
  grpc::Status s;
  int written_after = 0;
  do {
    s = node.Transact(Names(100 + written_after, 1));
    if (!s.ok()) break;
    ++written_after;  // still within the lease it renewed last
  } while (Before(until));
  REQUIRE_MESSAGE(!s.ok(), "writes still acknowledged 60 s after etcd died");
  MESSAGE("refused after ", written_after,
          " more acknowledged writes: ", s.error_message());
  CHECK(s.error_code() == grpc::StatusCode::UNAVAILABLE);
  CHECK_MESSAGE((s.error_message().find("etcd lease") != std::string::npos ||
                 s.error_message().find("has no primary") != std::string::npos),
                s.error_message());
  // It keeps refusing (no write slips through later), and it still reads
  // everything it acknowledged.
  for (int i = 0; i < 5; ++i) {
    CHECK(node.Transact(Names(200 + i, 1)).error_code() ==
          grpc::StatusCode::UNAVAILABLE);
  }
  const std::vector<std::string> names = NamesAt(node, acknowledged);
  CHECK(names.size() == static_cast<size_t>(5 + written_after));
  CHECK(std::find(names.begin(), names.end(), "p200") == names.end());
}

TEST_CASE("cluster: etcd unreachable at start is a clear error") {
  TempDir dir;
  std::filesystem::create_directories(dir.path());
  const std::string nowhere = "127.0.0.1:" + std::to_string(FreeLoopbackPort());
  MentatdProcess p(
      {"--data-dir", dir.path() + "/n", "--listen", "127.0.0.1:0", "--cluster",
       "test", "--etcd", nowhere, "--node-id", "n1", "--lease-ttl", kTtl},
      {}, dir.path() + "/n.log");
  CHECK(p.WaitForPort(std::chrono::seconds(30)) == 0);
  const int status = p.Wait();
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) != 0);
  const std::string log = p.log();
  CHECK_MESSAGE(log.find("cannot get a lease from etcd") != std::string::npos,
                log);
  CHECK(log.find(nowhere) != std::string::npos);
}

}  // namespace
}  // namespace mentat::server::testing
