// A full disk under mentatd (docs/bad-input.md, "I/O faults"): the fault
// Env of the storage tests stands in for the disk of an in-process server.
// Writes answer RESOURCE_EXHAUSTED naming the database's directory, reads
// go on, /healthz and /metrics say so, and writes resume by themselves
// once the fault clears. Where the test may mount a tmpfs (root), the
// mentatd binary also runs on a real full disk.

#include <doctest/doctest.h>
#include <sys/mount.h>
#include <sys/wait.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "fault_env.h"
#include "test_support.h"
#include "testing/mentatd_process.h"

namespace mentat::server::testing {
namespace {

using storage::testing::Fault;
using storage::testing::FaultEnv;

TEST_CASE(
    "server: a full disk refuses writes clearly, reads go on, writes "
    "resume") {
  FaultEnv env;
  TestServer t([&](ServerConfig* c) { c->storage_env = &env; });
  const std::string db_dir = t.config().data_dir + "/default";
  Transact(t, kPeopleSchema);
  Transact(t, People(0, 10));
  const std::string names = "[:find ?n :where [_ :person/name ?n]]";

  env.Set(Fault::kNoSpace, ".log");
  // The commit that meets the full disk, and the next (which aborted
  // mentatd on a RocksDB assertion before).
  for (int i = 0; i < 3; ++i) {
    grpc::Status s = TransactStatus(t, People(100 + i, 1));
    MESSAGE("transact on a full disk: ", StatusText(s));
    CHECK(s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED);
    CHECK(s.error_message().find("no space left on the disk holding " +
                                 db_dir) != std::string::npos);
    CHECK(s.error_message().find("resume by themselves once space is freed") !=
          std::string::npos);
  }
  // Reads go on.
  QueryOutcome read = Query(t, names);
  CHECK_MESSAGE(read.status.ok(), StatusText(read.status));
  CHECK(read.rows.size() == 10);
  // Health says the truth: degraded (reads are served, so still 200).
  int status = 0;
  const std::string health =
      HttpGet(t.server().http_port(), "/healthz", &status);
  MESSAGE("/healthz: ", health);
  CHECK(status == 200);
  CHECK(health.starts_with("degraded: database default: writes are stopped"));
  CHECK(health.find("no space left on the disk holding " + db_dir) !=
        std::string::npos);
  const std::string metrics = HttpGet(t.server().http_port(), "/metrics");
  CHECK(metrics.find("mentat_writes_stopped{database=\"default\"} 1") !=
        std::string::npos);

  env.Set(Fault::kNone);
  grpc::Status resumed;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(90);
  do {
    resumed = TransactStatus(t, People(200, 1));
    if (resumed.ok()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  } while (resumed.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED &&
           std::chrono::steady_clock::now() < deadline);
  CHECK_MESSAGE(resumed.ok(), StatusText(resumed));
  CHECK(HttpGet(t.server().http_port(), "/healthz", &status) == "ok\n");
  CHECK(HttpGet(t.server().http_port(), "/metrics")
            .find("mentat_writes_stopped{database=\"default\"} 0") !=
        std::string::npos);
  read = Query(t, names);
  CHECK(read.rows.size() == 11);
  // Nothing committed is lost, and the refused ones are not there.
  t.Restart();
  read = Query(t, names);
  CHECK(read.rows.size() == 11);
}

// Fills the file system holding `path` with a file there; true once a
// write failed for want of space.
bool FillDisk(const std::string& path) {
  std::ofstream out(path, std::ios::binary);
  const std::string chunk(1 << 20, '\0');
  for (int i = 0; i < 4096 && out; ++i) out.write(chunk.data(), chunk.size());
  out.flush();
  return !out;
}

TEST_CASE("mentatd: a real full disk (a tmpfs), when the test may mount one") {
  TempDir dir;
  const std::string mnt = dir.path() + "/mnt";
  std::filesystem::create_directories(mnt);
  if (::mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=160m") != 0) {
    MESSAGE("skipped: cannot mount a tmpfs at ", mnt, " (",
            std::strerror(errno),
            "); the fault-Env cases cover the same paths");
    return;
  }
  struct Unmount {
    std::string path;
    ~Unmount() { ::umount2(path.c_str(), MNT_DETACH); }
  } unmount{mnt};
  const std::string data = mnt + "/data";
  const std::string filler = mnt + "/filler";
  const std::string log = dir.path() + "/log";
  const std::vector<std::string> args = {
      "--data-dir", data, "--listen",           "127.0.0.1:0",
      "--http",     "",   "--sync-commits=true"};
  auto transact = [](pb::Mentat::Stub& stub, const std::string& edn) {
    pb::TransactRequest req;
    req.set_tx_data(edn);
    pb::TransactResponse resp;
    auto ctx = Ctx();
    return stub.Transact(ctx.get(), req, &resp);
  };
  auto count = [](pb::Mentat::Stub& stub) -> int64_t {
    pb::QueryRequest req;
    req.set_query("[:find (count ?e) . :where [?e :p/name _]]");
    QueryOutcome out = RunQuery(stub, req);
    REQUIRE_MESSAGE(out.status.ok(), StatusText(out.status));
    return out.rows.empty() ? 0 : out.rows[0].values(0).long_value();
  };
  auto stub_at = [](int port) {
    return pb::Mentat::NewStub(
        grpc::CreateChannel("127.0.0.1:" + std::to_string(port),
                            grpc::InsecureChannelCredentials()));
  };
  const std::string big(1000000, 'x');
  int64_t acknowledged = 0;
  {
    MentatdProcess daemon(args, {}, log);
    const int port = daemon.WaitForPort(std::chrono::seconds(20));
    REQUIRE_MESSAGE(port > 0, daemon.log());
    auto stub = stub_at(port);
    grpc::Status s = transact(*stub,
                              "[{:db/ident :p/name :db/valueType "
                              ":db.type/string :db/cardinality "
                              ":db.cardinality/one}]");
    REQUIRE_MESSAGE(s.ok(), StatusText(s));
    REQUIRE(FillDisk(filler));
    // The WAL has space set aside: 1 MB values use it up.
    for (int i = 0; i < 200; ++i) {
      s = transact(*stub, "[{:p/name \"" + std::to_string(i) + big + "\"}]");
      if (!s.ok()) break;
      acknowledged++;
    }
    MESSAGE("the first refused commit: ", StatusText(s));
    REQUIRE(s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED);
    CHECK(s.error_message().find("no space left on the disk holding " + data +
                                 "/default") != std::string::npos);
    // The disk stays full past RocksDB's polls of the free space (every
    // 5 s; its info log aborted mentatd on the second): writes are refused,
    // reads are answered throughout.
    const auto until =
        std::chrono::steady_clock::now() + std::chrono::seconds(12);
    while (std::chrono::steady_clock::now() < until) {
      s = transact(*stub, "[{:p/name \"small\"}]");
      REQUIRE_MESSAGE(s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED,
                      StatusText(s));
      CHECK(count(*stub) == acknowledged);
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
    // Space comes back: writes resume by themselves.
    std::filesystem::remove(filler);
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(90);
    do {
      s = transact(*stub, "[{:p/name \"after\"}]");
      if (s.ok()) break;
      REQUIRE_MESSAGE(s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED,
                      StatusText(s));
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    } while (std::chrono::steady_clock::now() < deadline);
    REQUIRE_MESSAGE(s.ok(), StatusText(s));
    acknowledged++;
    CHECK(count(*stub) == acknowledged);
    daemon.Kill();
  }
  // A start on the full disk exits with a clear message (it aborted on an
  // assertion before).
  REQUIRE(FillDisk(filler));
  {
    MentatdProcess daemon(args, {}, log);
    CHECK(daemon.WaitForPort(std::chrono::seconds(60)) == 0);
    const int status = daemon.Wait();
    MESSAGE("a start on the full disk: ", daemon.log());
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 1);
    CHECK(daemon.log().find("cannot start: opening database default: no space "
                            "left on the disk holding " +
                            data + "/default") != std::string::npos);
  }
  std::filesystem::remove(filler);
  MentatdProcess daemon(args, {}, log);
  const int port = daemon.WaitForPort(std::chrono::seconds(20));
  REQUIRE_MESSAGE(port > 0, daemon.log());
  auto stub = stub_at(port);
  CHECK(count(*stub) == acknowledged);
}

}  // namespace
}  // namespace mentat::server::testing
