// Backup: an online checkpoint through the RPC, the --backup-dir limit,
// the errors, and a restore (the backup copied into another server's data
// directory, served and queried).

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <thread>

#include "test_support.h"

namespace mentat::server::testing {
namespace {

namespace fs = std::filesystem;

grpc::Status Backup(TestServer& t, const std::string& destination,
                    pb::BackupResponse* resp,
                    const std::string& database = "") {
  pb::BackupRequest req;
  req.set_database(database);
  req.set_destination(destination);
  auto ctx = Ctx();
  return t.stub().Backup(ctx.get(), req, resp);
}

int64_t BasisTx(TestServer& t, const std::string& database = "") {
  pb::StatsRequest req;
  req.set_database(database);
  pb::StatsResponse resp;
  auto ctx = Ctx();
  REQUIRE(t.stub().Stats(ctx.get(), req, &resp).ok());
  return resp.basis_tx();
}

TEST_CASE("server: Backup checks its destination") {
  TempDir backups;
  fs::create_directories(backups.path() + "/taken");
  TestServer t([&](ServerConfig* c) { c->backup_dir = backups.path(); });
  pb::BackupResponse resp;
  CHECK(Backup(t, "", &resp).error_code() ==
        grpc::StatusCode::INVALID_ARGUMENT);
  grpc::Status s = Backup(t, "relative/dir", &resp);
  CHECK(s.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(s.error_message().find("not an absolute path") != std::string::npos);
  s = Backup(t, "/tmp/elsewhere-" + std::to_string(::getpid()), &resp);
  CHECK(s.error_code() == grpc::StatusCode::PERMISSION_DENIED);
  CHECK(s.error_message().find("--backup-dir") != std::string::npos);
  CHECK(Backup(t, backups.path() + "/../escape", &resp).error_code() ==
        grpc::StatusCode::PERMISSION_DENIED);
  CHECK(Backup(t, backups.path(), &resp).error_code() ==
        grpc::StatusCode::PERMISSION_DENIED);
  CHECK(Backup(t, backups.path() + "/taken", &resp).error_code() ==
        grpc::StatusCode::ALREADY_EXISTS);
  CHECK(Backup(t, backups.path() + "/x", &resp, "nosuchdb").error_code() ==
        grpc::StatusCode::NOT_FOUND);
  CHECK(Backup(t, backups.path() + "/no/parent", &resp).error_code() ==
        grpc::StatusCode::FAILED_PRECONDITION);
  CHECK_FALSE(fs::exists(backups.path() + "/x"));
}

TEST_CASE("server: a missing --backup-dir is made at start") {
  TempDir parent;
  const std::string backups = parent.path() + "/not/yet/there";
  TestServer t([&](ServerConfig* c) { c->backup_dir = backups; });
  CHECK(fs::is_directory(backups));
  pb::BackupResponse resp;
  grpc::Status s = Backup(t, backups + "/first", &resp);
  CHECK_MESSAGE(s.ok(), s.error_message());
  CHECK(fs::exists(backups + "/first/CURRENT"));
}

TEST_CASE("server: Backup while writing, then restore into a second server") {
  TempDir backups;
  fs::create_directories(backups.path());
  TestServer t([&](ServerConfig* c) { c->backup_dir = backups.path(); });
  Transact(t, kPeopleSchema);
  Transact(t, People(0, 100));

  // A writer keeps adding people while the backup runs.
  std::atomic<bool> stop{false};
  std::atomic<int> written{0};
  std::thread writer([&] {
    for (int i = 100; !stop.load(); ++i) {
      if (!TransactStatus(t, People(i, 1)).ok()) break;
      ++written;
    }
  });
  while (written.load() < 20) std::this_thread::yield();
  const std::string destination = backups.path() + "/default-1";
  pb::BackupResponse backup;
  grpc::Status s = Backup(t, destination, &backup);
  while (written.load() < 40) std::this_thread::yield();
  stop = true;
  writer.join();
  REQUIRE_MESSAGE(s.ok(), StatusText(s));
  CHECK(backup.files() > 0);
  CHECK(backup.bytes() > 0);
  CHECK(fs::exists(destination + "/CURRENT"));
  const int64_t live_basis = BasisTx(t);
  CHECK(backup.basis_tx() < live_basis);
  // What the backup holds, read from the live server as of its basis.
  pb::QueryRequest as_of;
  as_of.set_query("[:find ?n :where [_ :person/name ?n]]");
  as_of.mutable_basis()->set_kind(pb::Basis::AS_OF);
  as_of.mutable_basis()->set_tx(backup.basis_tx());
  QueryOutcome expected = RunQuery(t.stub(), as_of);
  REQUIRE(expected.status.ok());
  CHECK(expected.rows.size() >= 120);
  CHECK(expected.rows.size() < 100 + static_cast<size_t>(written.load()));

  // Restore: with the second server stopped, copy the backup into its data
  // directory under the database's name; start it; query.
  TempDir data;
  fs::create_directories(data.path());
  fs::copy(destination, data.path() + "/restored", fs::copy_options::recursive);
  TestServer second([&](ServerConfig* c) { c->data_dir = data.path(); });
  CHECK(BasisTx(second, "restored") == backup.basis_tx());
  QueryOutcome restored =
      Query(second, "[:find ?n :where [_ :person/name ?n]]", {}, "restored");
  REQUIRE(restored.status.ok());
  auto names = [](const std::vector<pb::Row>& rows) {
    std::vector<std::string> out;
    for (const pb::Row& r : rows) out.push_back(r.values(0).string_value());
    std::sort(out.begin(), out.end());
    return out;
  };
  CHECK(names(restored.rows) == names(expected.rows));
  // The restored database takes writes; the server's schema is there.
  Transact(second, People(100000, 1), "restored");
  CHECK(BasisTx(second, "restored") > backup.basis_tx());
}

}  // namespace
}  // namespace mentat::server::testing
