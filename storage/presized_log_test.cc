#include "internal/presized_log.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "mentat/storage/store.h"
#include "test_support.h"

namespace mentat::storage {
namespace {

namespace fs = std::filesystem;
using testing::Add;
using testing::Attr;
using testing::E;
using testing::MustTransact;
using testing::TempDir;
using testing::ValuesOf;

constexpr uint64_t kStep = uint64_t{1} << 20;

StoreOptions PresizedOptions() {
  StoreOptions options;
  options.log_presize_bytes = kStep;
  return options;
}

std::unique_ptr<Store> MustOpen(const std::string& dir,
                                const StoreOptions& options) {
  auto store = Store::Open(dir, options);
  REQUIRE_MESSAGE(store.ok(), store.status().ToString());
  return std::move(*store);
}

// The write-ahead log files of the store in `dir`, by name.
std::vector<fs::path> LogFiles(const std::string& dir) {
  std::vector<fs::path> logs;
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    if (internal::IsWriteAheadLogName(e.path().filename().string())) {
      logs.push_back(e.path());
    }
  }
  std::sort(logs.begin(), logs.end());
  return logs;
}

// Commits a schema and `n` users; their entity ids.
std::vector<EntityId> WriteUsers(Store& store, int n) {
  MustTransact(store, Attr("user/name", "db.type/string"));
  std::vector<EntityId> users;
  for (int i = 0; i < n; ++i) {
    TxReport r = MustTransact(
        store, {Add(E("u"), "user/name",
                    Value::String("user number " + std::to_string(i)))});
    users.push_back(r.tempids.at("u"));
  }
  return users;
}

void CheckUsers(Store& store, const std::vector<EntityId>& users) {
  const DbView view = store.Latest()->View(Basis::Current());
  for (size_t i = 0; i < users.size(); ++i) {
    std::vector<Value> names = ValuesOf(view, users[i], "user/name");
    REQUIRE(names.size() == 1);
    CHECK(names[0] == Value::String("user number " + std::to_string(i)));
  }
}

TEST_CASE("a write-ahead log is named by digits and .log") {
  CHECK(internal::IsWriteAheadLogName("000012.log"));
  CHECK(internal::IsWriteAheadLogName("/var/lib/mentatd/db/000012.log"));
  CHECK_FALSE(internal::IsWriteAheadLogName("LOG"));
  CHECK_FALSE(internal::IsWriteAheadLogName("LOG.old.1700000000"));
  CHECK_FALSE(internal::IsWriteAheadLogName("mentatd-requests.log"));
  CHECK_FALSE(internal::IsWriteAheadLogName(".log"));
  CHECK_FALSE(internal::IsWriteAheadLogName("/a/12.log/MANIFEST-000001"));
}

TEST_CASE("the log is longer than its records while open, cut at close") {
  TempDir dir;
  std::vector<EntityId> users;
  {
    std::unique_ptr<Store> store = MustOpen(dir.path(), PresizedOptions());
    users = WriteUsers(*store, 50);
    std::vector<fs::path> logs = LogFiles(dir.path());
    REQUIRE(!logs.empty());
    // The live log (the newest) is made a step at a time.
    const uint64_t open_size = fs::file_size(logs.back());
    CHECK(open_size >= kStep);
    CHECK(open_size % kStep == 0);
  }
  // Closed: the log holds its records and no zeros (the store does not
  // flush at close, so the records are there to be replayed).
  std::vector<fs::path> logs = LogFiles(dir.path());
  REQUIRE(!logs.empty());
  const uint64_t closed_size = fs::file_size(logs.back());
  CHECK(closed_size > 0);
  CHECK(closed_size < kStep);
  CheckUsers(*MustOpen(dir.path(), PresizedOptions()), users);
}

TEST_CASE("a log left with zeros after its records (a crash) reopens whole") {
  TempDir dir;
  TempDir copy;
  std::unique_ptr<Store> store = MustOpen(dir.path(), PresizedOptions());
  const std::vector<EntityId> users = WriteUsers(*store, 30);
  // A copy of the open store is what a crash leaves: the live log still
  // has its zeros after the last (fsynced) record.
  fs::copy(dir.path(), copy.path(), fs::copy_options::recursive);
  fs::remove(fs::path(copy.path()) / "LOCK");
  std::vector<fs::path> logs = LogFiles(copy.path());
  REQUIRE(!logs.empty());
  CHECK(fs::file_size(logs.back()) % kStep == 0);

  std::unique_ptr<Store> reopened = MustOpen(copy.path(), PresizedOptions());
  CheckUsers(*reopened, users);
  // And it goes on: a commit after the recovery is read back after
  // another reopen.
  TxReport more = MustTransact(
      *reopened, {Add(E("u"), "user/name", Value::String("after"))});
  reopened.reset();
  std::unique_ptr<Store> again = MustOpen(copy.path(), PresizedOptions());
  CheckUsers(*again, users);
  std::vector<Value> names = ValuesOf(again->Latest()->View(Basis::Current()),
                                      more.tempids.at("u"), "user/name");
  REQUIRE(names.size() == 1);
  CHECK(names[0] == Value::String("after"));
}

TEST_CASE("without sync_commits the log is not made longer") {
  TempDir dir;
  StoreOptions options = PresizedOptions();
  options.sync_commits = false;
  std::unique_ptr<Store> store = MustOpen(dir.path(), options);
  WriteUsers(*store, 10);
  std::vector<fs::path> logs = LogFiles(dir.path());
  REQUIRE(!logs.empty());
  // Several records unsynced at once could leave a hole that recovery
  // would skip over: only synced logs are presized.
  CHECK(fs::file_size(logs.back()) < kStep);
}

}  // namespace
}  // namespace mentat::storage
