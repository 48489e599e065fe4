// The log entry format (storage/internal/log_codec.h): v2 entries carry
// the term and the partition counters, v1 entries of older stores still
// read, a format-1 store is upgraded when it opens, and a replica takes
// its primary's counters and term from the entries it applies.

#include <doctest/doctest.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "internal/coding.h"
#include "internal/log_codec.h"
#include "internal/meta_keys.h"
#include "internal/store_core.h"
#include "mentat/storage/entity_ids.h"
#include "mentat/storage/store.h"
#include "mentat/storage/tx_log.h"
#include "test_support.h"

namespace mentat::storage {
namespace {

using internal::Cf;
using internal::LogEntryHeader;
using testing::Add;
using testing::Attr;
using testing::E;
using testing::MustTransact;
using testing::TempDir;
using testing::Tx;

std::vector<Datom> SomeDatoms(EntityId tx) {
  return {Datom{tx, ids::kDbTxInstant, Value::Instant(1234), tx, true},
          Datom{MakeEntityId(Partition::kUser, 1000), ids::kDbDoc,
                Value::String("hello"), tx, false}};
}

// Every log entry of `db`, raw, with its tx.
std::vector<std::pair<EntityId, std::string>> RawLog(const Db& db) {
  std::vector<std::pair<EntityId, std::string>> out;
  absl::Status s =
      ReadTxLogRaw(db, 0, 0, 0, [&](EntityId, EntityId tx, std::string_view e) {
        out.emplace_back(tx, std::string(e));
        return true;
      });
  REQUIRE_MESSAGE(s.ok(), s.ToString());
  return out;
}

LogEntryHeader HeaderOf(EntityId tx, const std::string& entry) {
  LogEntryHeader h;
  absl::Status s = internal::DecodeLogEntryHeader(tx, entry, &h);
  REQUIRE_MESSAGE(s.ok(), s.ToString());
  return h;
}

int64_t MetaCounter(const Store& store, int partition) {
  std::string v;
  const internal::StoreCore& core = store.Latest()->core();
  REQUIRE(core.db
              ->Get(rocksdb::ReadOptions(), core.cf(Cf::kMeta),
                    internal::MetaPartitionKey(partition), &v)
              .ok());
  REQUIRE(v.size() == 8);
  return static_cast<int64_t>(internal::DecodeFixed64BE(v));
}

std::string MetaFormat(const Store& store) {
  std::string v;
  const internal::StoreCore& core = store.Latest()->core();
  REQUIRE(core.db
              ->Get(rocksdb::ReadOptions(), core.cf(Cf::kMeta),
                    internal::kMetaFormatKey, &v)
              .ok());
  return v;
}

TEST_CASE("log entries: v2 carries term and counters; v1 still decodes") {
  const EntityId tx = kFirstTxId + 7;
  const std::vector<Datom> datoms = SomeDatoms(tx);

  LogEntryHeader h;
  h.term = 41;
  h.next_counter = {1500, 300000, int64_t{1} << 40};
  std::string v2;
  internal::EncodeLogEntry(h, datoms, &v2);
  REQUIRE(!v2.empty());
  CHECK(v2[0] == '\0');
  LogEntryHeader got;
  std::vector<Datom> out;
  REQUIRE(internal::DecodeLogEntry(tx, v2, &got, &out).ok());
  CHECK(got.term == 41);
  CHECK(got.has_counters);
  CHECK(got.next_counter == h.next_counter);
  CHECK(out == datoms);
  // What Follow puts in LogEntry.term.
  auto term = TxLogEntryTerm(tx, v2);
  REQUIRE(term.ok());
  CHECK(*term == 41);

  std::string v1;
  internal::EncodeLogEntryV1(datoms, &v1);
  // A v1 entry starts with its datom count, never 0.
  CHECK(v1[0] != '\0');
  out.clear();
  REQUIRE(internal::DecodeLogEntry(tx, v1, &got, &out).ok());
  CHECK(got.term == 0);
  CHECK_FALSE(got.has_counters);
  CHECK(out == datoms);
  term = TxLogEntryTerm(tx, v1);
  REQUIRE(term.ok());
  CHECK(*term == 0);
  // The three-argument form reads both.
  out.clear();
  REQUIRE(internal::DecodeLogEntry(tx, v2, &out).ok());
  CHECK(out == datoms);

  // Unknown versions and cut headers are refused, naming the tx.
  std::string v3 = v2;
  v3[1] = 3;
  absl::Status s = internal::DecodeLogEntry(tx, v3, &got, &out);
  CHECK(s.code() == absl::StatusCode::kDataLoss);
  CHECK(std::string(s.message()).find("unknown entry format 3") !=
        std::string::npos);
  for (size_t cut : {size_t{1}, size_t{2}, size_t{4}}) {
    s = internal::DecodeLogEntryHeader(tx, v2.substr(0, cut), &got);
    CHECK_MESSAGE(s.code() == absl::StatusCode::kDataLoss, cut);
    CHECK(std::string(s.message()).find(std::to_string(tx)) !=
          std::string::npos);
  }
}

TEST_CASE("every log entry records the counters after its transaction") {
  TempDir dir;
  auto store = Store::Open(dir.path());
  REQUIRE(store.ok());
  MustTransact(**store, Attr("user/name", "db.type/string"));
  for (int i = 0; i < 3; ++i) {
    auto r =
        MustTransact(**store, {Add(E("a"), "user/name", Value::String("a")),
                               Add(E("b"), "user/name", Value::String("b"))});
    const auto log = RawLog(*(*store)->Latest());
    REQUIRE(log.back().first == r.tx);
    const LogEntryHeader h = HeaderOf(r.tx, log.back().second);
    CHECK(h.has_counters);
    CHECK(h.term == 0);
    CHECK(h.next_counter[0] == MetaCounter(**store, 0));
    CHECK(h.next_counter[1] == MetaCounter(**store, 3));
    CHECK(h.next_counter[2] == MetaCounter(**store, 4));
    CHECK(h.next_counter[1] == (r.tx & kCounterMask) + 1);
    CHECK(h.next_counter[2] > (r.tempids.at("b") & kCounterMask));
  }
  // The bootstrap transaction's entry too.
  const auto log = RawLog(*(*store)->Latest());
  CHECK(HeaderOf(log.front().first, log.front().second).has_counters);
  CHECK(MetaFormat(**store) == internal::kMetaFormatVersion);
}

TEST_CASE("a store of format 1 opens, reads its v1 entries, and writes v2") {
  TempDir dir;
  std::vector<std::vector<Datom>> before;
  {
    auto store = Store::Open(dir.path());
    REQUIRE(store.ok());
    MustTransact(**store, Attr("user/name", "db.type/string"));
    MustTransact(**store, {Add(E("a"), "user/name", Value::String("a"))});
    // Made into a store an older build wrote: v1 entries, format "1".
    const internal::StoreCore& core = (*store)->Latest()->core();
    for (const auto& [tx, entry] : RawLog(*(*store)->Latest())) {
      std::vector<Datom> datoms;
      REQUIRE(internal::DecodeLogEntry(tx, entry, &datoms).ok());
      before.push_back(datoms);
      std::string v1;
      internal::EncodeLogEntryV1(datoms, &v1);
      REQUIRE(core.db
                  ->Put(rocksdb::WriteOptions(), core.cf(Cf::kLog),
                        internal::Fixed64BE(static_cast<uint64_t>(tx)), v1)
                  .ok());
    }
    REQUIRE(core.db
                ->Put(rocksdb::WriteOptions(), core.cf(Cf::kMeta),
                      internal::kMetaFormatKey, internal::kMetaFormatVersionV1)
                .ok());
  }
  auto store = Store::Open(dir.path());
  REQUIRE_MESSAGE(store.ok(), store.status().ToString());
  CHECK(MetaFormat(**store) == internal::kMetaFormatVersion);
  std::vector<std::vector<Datom>> after;
  for (const auto& [tx, entry] : RawLog(*(*store)->Latest())) {
    CHECK(entry[0] != '\0');  // left as they were
    std::vector<Datom> datoms;
    REQUIRE(internal::DecodeLogEntry(tx, entry, &datoms).ok());
    after.push_back(datoms);
  }
  CHECK(after == before);
  auto r =
      MustTransact(**store, {Add(E("b"), "user/name", Value::String("b"))});
  const auto log = RawLog(*(*store)->Latest());
  REQUIRE(log.back().first == r.tx);
  CHECK(HeaderOf(r.tx, log.back().second).has_counters);
}

TEST_CASE("a store of an unknown format is refused, naming both it reads") {
  TempDir dir;
  {
    auto store = Store::Open(dir.path());
    REQUIRE(store.ok());
    const internal::StoreCore& core = (*store)->Latest()->core();
    REQUIRE(core.db
                ->Put(rocksdb::WriteOptions(), core.cf(Cf::kMeta),
                      internal::kMetaFormatKey, "9")
                .ok());
  }
  auto store = Store::Open(dir.path());
  REQUIRE_FALSE(store.ok());
  CHECK(store.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK(std::string(store.status().message()).find("has format 9") !=
        std::string::npos);
}

// The primary's entries after `after`, as a Follow stream carries them.
std::vector<ReplicatedTx> LogAfter(const Store& primary, EntityId after) {
  std::vector<ReplicatedTx> out;
  absl::Status s = ReadTxLogRaw(
      *primary.Latest(), after, after + 1, 0,
      [&](EntityId prev, EntityId tx, std::string_view entry) {
        out.push_back(ReplicatedTx{prev, tx, std::string(entry), 0});
        return true;
      });
  REQUIRE_MESSAGE(s.ok(), s.ToString());
  return out;
}

// `e` with its header's term and user counter replaced.
ReplicatedTx Rewritten(const ReplicatedTx& e, int64_t term,
                       int64_t user_counter) {
  LogEntryHeader h;
  std::vector<Datom> datoms;
  REQUIRE(internal::DecodeLogEntry(e.tx, e.entry, &h, &datoms).ok());
  h.term = term;
  if (user_counter > 0) h.next_counter[2] = user_counter;
  ReplicatedTx out = e;
  out.entry.clear();
  internal::EncodeLogEntry(h, datoms, &out.entry);
  return out;
}

TEST_CASE(
    "a replica takes its primary's counters and term from the entries, "
    "and refuses an older term") {
  TempDir pdir, rdir;
  auto primary = Store::Open(pdir.path());
  REQUIRE(primary.ok());
  std::filesystem::create_directories(rdir.path());
  auto cp = (*primary)->Checkpoint(rdir.path() + "/db");
  REQUIRE(cp.ok());
  MustTransact(**primary, Attr("user/name", "db.type/string"));
  MustTransact(**primary, {Add(E("a"), "user/name", Value::String("a"))});
  MustTransact(**primary, {Add(E("b"), "user/name", Value::String("b"))});
  const auto entries = LogAfter(**primary, cp->basis_tx);
  REQUIRE(entries.size() == 3);

  auto replica = Store::Open(rdir.path() + "/db");
  REQUIRE(replica.ok());
  (*replica)->SetRole(StoreRole::kReplica);
  REQUIRE((*replica)->ApplyReplicated(entries[0]).get().ok());
  // Term 2 from here on; the primary had handed out user ids up to
  // counter 5000 that no datom names (a group whose fsync failed).
  REQUIRE(
      (*replica)->ApplyReplicated(Rewritten(entries[1], 2, 5000)).get().ok());
  auto old = (*replica)->ApplyReplicated(Rewritten(entries[2], 1, 0)).get();
  CHECK(old.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK(std::string(old.status().message()).find("older than term 2") !=
        std::string::npos);

  // A restart keeps the term (from the last entry) and the counters.
  replica->reset();
  replica = Store::Open(rdir.path() + "/db");
  REQUIRE(replica.ok());
  (*replica)->SetRole(StoreRole::kReplica);
  old = (*replica)->ApplyReplicated(Rewritten(entries[2], 1, 0)).get();
  CHECK(old.status().code() == absl::StatusCode::kFailedPrecondition);
  REQUIRE((*replica)->ApplyReplicated(Rewritten(entries[2], 2, 0)).get().ok());
  // Promoted, it hands out user ids past the primary's counter.
  (*replica)->SetRole(StoreRole::kPrimary);
  auto r =
      MustTransact(**replica, {Add(E("c"), "user/name", Value::String("c"))});
  CHECK((r.tempids.at("c") & kCounterMask) >= 5000);
}

TEST_CASE("the write gate refuses transactions, not replicated entries") {
  TempDir pdir, rdir;
  auto primary = Store::Open(pdir.path());
  REQUIRE(primary.ok());
  std::filesystem::create_directories(rdir.path());
  auto cp = (*primary)->Checkpoint(rdir.path() + "/db");
  REQUIRE(cp.ok());
  MustTransact(**primary, Attr("user/name", "db.type/string"));
  const auto entries = LogAfter(**primary, cp->basis_tx);
  REQUIRE(entries.size() == 1);

  auto open = std::make_shared<std::atomic<bool>>(false);
  StoreOptions options;
  options.write_gate = [open]() -> absl::Status {
    if (open->load()) return absl::OkStatus();
    return absl::UnavailableError("the lease deadline passed");
  };
  auto store = Store::Open(rdir.path() + "/db", options);
  REQUIRE(store.ok());
  (*store)->SetRole(StoreRole::kReplica);
  REQUIRE((*store)->ApplyReplicated(entries[0]).get().ok());
  REQUIRE((*store)->Promote(3).ok());
  auto refused =
      (*store)
          ->Transact(Tx({Add(E("a"), "user/name", Value::String("a"))}))
          .get();
  CHECK(refused.status().code() == absl::StatusCode::kUnavailable);
  CHECK(refused.status().message() == "the lease deadline passed");
  const EntityId basis = (*store)->Latest()->basis_tx();
  CHECK(basis == entries[0].tx);
  open->store(true);
  MustTransact(**store, {Add(E("a"), "user/name", Value::String("a"))});
  CHECK((*store)->Latest()->basis_tx() > basis);
}

TEST_CASE("a promoted replica writes its entries in the term it won") {
  TempDir pdir, rdir;
  auto primary = Store::Open(pdir.path());
  REQUIRE(primary.ok());
  std::filesystem::create_directories(rdir.path());
  auto cp = (*primary)->Checkpoint(rdir.path() + "/db");
  REQUIRE(cp.ok());
  MustTransact(**primary, Attr("user/name", "db.type/string"));
  const auto entries = LogAfter(**primary, cp->basis_tx);
  REQUIRE(entries.size() == 1);

  auto replica = Store::Open(rdir.path() + "/db");
  REQUIRE(replica.ok());
  (*replica)->SetRole(StoreRole::kReplica);
  REQUIRE((*replica)->ApplyReplicated(Rewritten(entries[0], 7, 0)).get().ok());
  // A term older than the one its entries carry is refused, and the role
  // stays: a deposed primary's election cannot go back in time.
  absl::Status older = (*replica)->Promote(6);
  CHECK(older.code() == absl::StatusCode::kFailedPrecondition);
  CHECK((*replica)->role() == StoreRole::kReplica);
  REQUIRE((*replica)->Promote(9).ok());
  CHECK((*replica)->role() == StoreRole::kPrimary);
  auto r =
      MustTransact(**replica, {Add(E("c"), "user/name", Value::String("c"))});
  const auto log = RawLog(*(*replica)->Latest());
  REQUIRE(log.back().first == r.tx);
  CHECK(HeaderOf(r.tx, log.back().second).term == 9);
  // The term survives a restart (read back from the last entry).
  replica->reset();
  replica = Store::Open(rdir.path() + "/db");
  REQUIRE(replica.ok());
  CHECK((*replica)->Promote(8).code() == absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace mentat::storage
