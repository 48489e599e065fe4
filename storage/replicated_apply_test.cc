// Store::ApplyReplicated: a replica that applies a primary's log holds the
// primary's database datom for datom (current, history, log, statistics,
// schema, counters), refuses gaps, and refuses writes of its own.

#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "mentat/storage/entity_ids.h"
#include "mentat/storage/keys.h"
#include "mentat/storage/store.h"
#include "mentat/storage/tx_log.h"
#include "test_support.h"

namespace mentat::storage {
namespace {

using testing::Add;
using testing::AddRef;
using testing::Attr;
using testing::Concat;
using testing::E;
using testing::Kw;
using testing::MustTransact;
using testing::Retract;
using testing::RetractEntity;
using testing::TempDir;
using testing::Tx;

// The primary's log after `after`, as a Follow stream carries it.
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

std::vector<Datom> All(const Db& db, IndexOrder order, Basis basis) {
  auto view = db.View(basis);
  auto datoms = view.Datoms(order, "");
  REQUIRE_MESSAGE(datoms.ok(), datoms.status().ToString());
  return *datoms;
}

std::vector<std::pair<EntityId, std::string>> RawLog(const Db& db) {
  std::vector<std::pair<EntityId, std::string>> out;
  absl::Status s =
      ReadTxLogRaw(db, 0, 0, 0, [&](EntityId, EntityId tx, std::string_view e) {
        out.emplace_back(tx, std::string(e));
        return true;
      });
  REQUIRE(s.ok());
  return out;
}

// Every index, current, as of each transaction, and history; the log byte
// for byte; statistics; schema.
void CheckSame(const Store& primary, const Store& replica) {
  auto p = primary.Latest();
  auto r = replica.Latest();
  REQUIRE(p->basis_tx() == r->basis_tx());
  CHECK(p->basis_tx_instant() == r->basis_tx_instant());
  for (IndexOrder order : {IndexOrder::kEavt, IndexOrder::kAevt,
                           IndexOrder::kAvet, IndexOrder::kVaet}) {
    CHECK(All(*p, order, Basis::Current()) == All(*r, order, Basis::Current()));
    CHECK(All(*p, order, Basis::History()) == All(*r, order, Basis::History()));
  }
  const auto log = RawLog(*p);
  CHECK(log == RawLog(*r));
  for (const auto& [tx, entry] : log) {
    CHECK(All(*p, IndexOrder::kEavt, Basis::AsOf(tx)) ==
          All(*r, IndexOrder::kEavt, Basis::AsOf(tx)));
    CHECK(All(*p, IndexOrder::kAvet, Basis::Since(tx)) ==
          All(*r, IndexOrder::kAvet, Basis::Since(tx)));
  }
  const auto& ps = p->stats().all();
  const auto& rs = r->stats().all();
  CHECK(ps.size() == rs.size());
  for (const auto& [a, st] : ps) {
    auto it = rs.find(a);
    REQUIRE(it != rs.end());
    CHECK(st->datoms == it->second->datoms);
    CHECK(st->distinct_values == it->second->distinct_values);
    CHECK(st->values_tracked == it->second->values_tracked);
    CHECK(st->value_counts == it->second->value_counts);
  }
  CHECK(p->schema().attributes().size() == r->schema().attributes().size());
  CHECK(p->schema().idents() == r->schema().idents());
}

// A primary with varied history: schema, card-one replacement, many
// values, retractions, retractEntity through components, a schema change.
void WriteHistory(Store& store) {
  MustTransact(
      store,
      Concat({Attr("user/email", "db.type/string", false, "db.unique/identity"),
              Attr("user/name", "db.type/string"),
              Attr("user/tags", "db.type/keyword", true),
              Attr("user/friend", "db.type/ref", true),
              Attr("issue/comments", "db.type/ref", true, nullptr, true),
              Attr("comment/text", "db.type/string")}));
  auto a =
      MustTransact(store, {Add(E("a"), "user/email", Value::String("a@x")),
                           Add(E("a"), "user/name", Value::String("Ann")),
                           Add(E("a"), "user/tags", Value::Keyword("x/one")),
                           Add(E("a"), "user/tags", Value::Keyword("x/two")),
                           Add(E("b"), "user/email", Value::String("b@x")),
                           AddRef(E("a"), "user/friend", E("b"))});
  const EntityId ann = a.tempids.at("a");
  const EntityId bob = a.tempids.at("b");
  MustTransact(store, {Add(E(ann), "user/name", Value::String("Anna"))});
  MustTransact(store, {Retract(E(ann), "user/tags", Value::Keyword("x/one"))});
  auto c = MustTransact(
      store, {AddRef(E(bob), "issue/comments", E("c1")),
              Add(E("c1"), "comment/text", Value::String("first")),
              AddRef(E(bob), "issue/comments", E("c2")),
              Add(E("c2"), "comment/text", Value::String("second"))});
  (void)c;
  MustTransact(store, {RetractEntity(E(bob))});
  // A schema change: user/name becomes unique.
  MustTransact(store, {AddRef(Kw("user/name"), "db/unique",
                              EntityRef::Ident("db.unique/value"))});
  // Several transactions queued at once commit as one group.
  std::vector<std::future<absl::StatusOr<TxReport>>> group;
  for (int i = 0; i < 20; ++i) {
    group.push_back(store.Transact(
        Tx({Add(E("u"), "user/email",
                Value::String("u" + std::to_string(i) + "@x")),
            Add(E("u"), "user/name", Value::String("n" + std::to_string(i))),
            Add(E(ann), "user/tags",
                Value::Keyword("x/t" + std::to_string(i % 3)))})));
  }
  for (auto& f : group) REQUIRE(f.get().ok());
}

// A replica as mentatd bootstraps one: a checkpoint of the primary, then
// the primary's log after it (WriteHistory's transactions) to follow.
struct CheckpointReplica {
  CheckpointReplica() {
    auto p = Store::Open(pdir.path());
    REQUIRE(p.ok());
    primary = *std::move(p);
    std::filesystem::create_directories(rdir.path());
    auto cp = primary->Checkpoint(rdir.path() + "/db");
    REQUIRE(cp.ok());
    basis = cp->basis_tx;
    WriteHistory(*primary);
    auto r = Store::Open(rdir.path() + "/db");
    REQUIRE(r.ok());
    replica = *std::move(r);
    replica->SetRole(StoreRole::kReplica);
    entries = LogAfter(*primary, basis);
  }
  TempDir pdir, rdir;
  std::unique_ptr<Store> primary, replica;
  EntityId basis = 0;
  std::vector<ReplicatedTx> entries;
};

TEST_CASE(
    "a replica applying the primary's log holds the primary's "
    "database, history included") {
  CheckpointReplica f;
  REQUIRE(f.replica->Latest()->basis_tx() == f.basis);
  auto& primary = f.primary;
  auto& replica = f.replica;
  const auto& entries = f.entries;
  REQUIRE(entries.size() > 20);
  // Queued without waiting: they group-commit on the replica's transactor.
  std::vector<std::future<absl::StatusOr<TxReport>>> applied;
  for (const ReplicatedTx& e : entries) {
    applied.push_back(replica->ApplyReplicated(e));
  }
  for (size_t i = 0; i < applied.size(); ++i) {
    auto r = applied[i].get();
    REQUIRE_MESSAGE(r.ok(), r.status().ToString());
    CHECK(r->tx == entries[i].tx);
  }
  CheckSame(*primary, *replica);

  SUBCASE("it survives a restart, and its counters are the primary's") {
    replica.reset();
    auto again = Store::Open(f.rdir.path() + "/db");
    REQUIRE(again.ok());
    CheckSame(*primary, **again);
    // Promoted (phase 2 will), it hands out the ids the primary would.
    auto p = MustTransact(*primary,
                          {Add(E("n"), "user/email", Value::String("n@x"))});
    auto r = MustTransact(**again,
                          {Add(E("n"), "user/email", Value::String("n@x"))});
    CHECK(p.tx == r.tx);
    CHECK(p.tempids.at("n") == r.tempids.at("n"));
  }
}

TEST_CASE(
    "a replica applies an excision from the primary's entry and ends with "
    "the primary's database and log") {
  CheckpointReplica f;
  for (const ReplicatedTx& e : f.entries) {
    auto r = f.replica->ApplyReplicated(e).get();
    REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  }
  auto db = f.primary->Latest();
  std::string prefix;
  AvetKey::EncodePrefix(db->schema().FindAttribute("user/email")->id,
                        Value::String("a@x"), &prefix);
  auto found = db->View(Basis::Current()).Datoms(IndexOrder::kAvet, prefix);
  REQUIRE(found.ok());
  REQUIRE(found->size() == 1);
  const EntityId ann = (*found)[0].e;
  const EntityId last = db->basis_tx();
  // Ann's datoms: a replaced name, a retracted tag, tags the group added.
  const TxReport excised =
      MustTransact(*f.primary, {AddRef(E("req"), "db/excise", E(ann))});
  CHECK(excised.excised_datoms >= 8);
  const auto more = LogAfter(*f.primary, last);
  REQUIRE(more.size() == 1);
  auto applied = f.replica->ApplyReplicated(more[0]).get();
  REQUIRE_MESSAGE(applied.ok(), applied.status().ToString());
  CHECK(applied->excised_datoms == excised.excised_datoms);
  // The log's earlier entries, rewritten on each side, match byte for
  // byte.
  CheckSame(*f.primary, *f.replica);
}

TEST_CASE("a replica refuses a gap, a repeat and malformed entries") {
  const CheckpointReplica f;
  auto& primary = f.primary;
  auto& replica = f.replica;
  const auto& entries = f.entries;
  REQUIRE(entries.size() > 3);

  // Skipping the first entry: a gap, refused, nothing applied.
  auto gap = replica->ApplyReplicated(entries[1]).get();
  CHECK(gap.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK(std::string(gap.status().message()).find("a gap") != std::string::npos);
  CHECK(replica->Latest()->basis_tx() == f.basis);

  REQUIRE(replica->ApplyReplicated(entries[0]).get().ok());
  auto repeat = replica->ApplyReplicated(entries[0]).get();
  CHECK(repeat.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK(std::string(repeat.status().message()).find("a repeat") !=
        std::string::npos);

  ReplicatedTx cut = entries[1];
  cut.entry.resize(cut.entry.size() / 2);
  CHECK(replica->ApplyReplicated(cut).get().status().code() ==
        absl::StatusCode::kDataLoss);
  CHECK(replica->Latest()->basis_tx() == entries[0].tx);

  // The rest applies in order after the refusals.
  for (size_t i = 1; i < entries.size(); ++i) {
    auto r = replica->ApplyReplicated(entries[i]).get();
    REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  }
  CheckSame(*primary, *replica);
}

TEST_CASE(
    "a replica refuses entries after another transaction of the same id") {
  // A deposed primary's last transaction can commit after it began to
  // follow the new primary, whose first transaction has the same id: the
  // next entry names that id as its predecessor, and only the instant
  // tells the two apart. Nothing may apply on top of the wrong one.
  const CheckpointReplica f;
  auto& primary = f.primary;
  auto& replica = f.replica;
  const auto& entries = f.entries;
  REQUIRE(entries.size() > 2);

  REQUIRE(replica->ApplyReplicated(entries[0]).get().ok());
  const int64_t held = replica->Latest()->basis_tx_instant();
  REQUIRE(held != 0);

  ReplicatedTx other = entries[1];
  other.prev_instant = held + 1;  // the primary's entries[0] is another tx
  auto refused = replica->ApplyReplicated(other).get();
  CHECK(refused.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK(std::string(refused.status().message())
            .find("the follower's history differs") != std::string::npos);
  CHECK(replica->Latest()->basis_tx() == entries[0].tx);

  // The same entry naming the instant this store holds applies, and so
  // does the rest.
  ReplicatedTx same = entries[1];
  same.prev_instant = held;
  auto applied = replica->ApplyReplicated(same).get();
  REQUIRE_MESSAGE(applied.ok(), applied.status().ToString());
  for (size_t i = 2; i < entries.size(); ++i) {
    auto r = replica->ApplyReplicated(entries[i]).get();
    REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  }
  CheckSame(*primary, *replica);
}

TEST_CASE("a replica refuses a retraction of a datom it does not hold") {
  TempDir pdir, rdir;
  auto primary = Store::Open(pdir.path());
  REQUIRE(primary.ok());
  MustTransact(**primary, Attr("user/name", "db.type/string"));
  auto a =
      MustTransact(**primary, {Add(E("a"), "user/name", Value::String("x"))});
  const EntityId e = a.tempids.at("a");
  std::filesystem::create_directories(rdir.path());
  auto cp = (*primary)->Checkpoint(rdir.path() + "/db");
  REQUIRE(cp.ok());
  auto p1 =
      MustTransact(**primary, {Add(E("b"), "user/name", Value::String("y"))});
  MustTransact(**primary, {Retract(E(e), "user/name", Value::String("x"))});
  auto replica = Store::Open(rdir.path() + "/db");
  REQUIRE(replica.ok());
  // The replica lost the datom by a write of its own (it diverged), in a
  // transaction that took the id of the primary's p1.
  auto r1 =
      MustTransact(**replica, {Retract(E(e), "user/name", Value::String("x"))});
  REQUIRE(r1.tx == p1.tx);
  (*replica)->SetRole(StoreRole::kReplica);
  auto entries = LogAfter(**primary, p1.tx);
  REQUIRE(entries.size() == 1);
  auto r = (*replica)->ApplyReplicated(entries[0]).get();
  CHECK(r.status().code() == absl::StatusCode::kDataLoss);
  CHECK_MESSAGE(std::string(r.status().message()).find("does not hold") !=
                    std::string::npos,
                r.status().ToString());
  CHECK((*replica)->Latest()->basis_tx() == r1.tx);
}

TEST_CASE(
    "a replica refuses Transact and Import, and takes them again as "
    "primary") {
  TempDir dir;
  auto store = Store::Open(dir.path());
  REQUIRE(store.ok());
  (*store)->SetRole(StoreRole::kReplica);
  auto r = (*store)->Transact(Tx(Attr("user/name", "db.type/string"))).get();
  CHECK(r.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK(std::string(r.status().message()).find("read replica") !=
        std::string::npos);
  struct NoSource : ImportSource {
    [[nodiscard]] absl::StatusOr<bool> Next(TxRequest*) override {
      return false;
    }
  } source;
  CHECK((*store)->Import(&source).status().code() ==
        absl::StatusCode::kFailedPrecondition);
  (*store)->SetRole(StoreRole::kPrimary);
  CHECK((*store)->Transact(Tx(Attr("user/name", "db.type/string"))).get().ok());

  // ... and a primary takes no entry of another store's log.
  TempDir odir;
  auto other = Store::Open(odir.path());
  REQUIRE(other.ok());
  MustTransact(**other, Attr("user/email", "db.type/string"));
  const auto entries = LogAfter(**other, 0);
  REQUIRE_FALSE(entries.empty());
  const EntityId basis = (*store)->Latest()->basis_tx();
  auto applied = (*store)->ApplyReplicated(entries.back()).get();
  CHECK(applied.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK(std::string(applied.status().message()).find("is a primary") !=
        std::string::npos);
  CHECK((*store)->Latest()->basis_tx() == basis);
}

TEST_CASE(
    "stream_before_sync: a commit is shown to replication before its fsync "
    "and to readers after it") {
  for (const bool early : {false, true}) {
    CAPTURE(early);
    TempDir dir;
    StoreOptions options;
    options.sync_commits = true;
    options.stream_before_sync = early;
    Store* raw = nullptr;
    // What each on_written call saw: (LatestWritten, Latest) bases.
    std::vector<std::pair<EntityId, EntityId>> seen;
    options.on_written = [&] {
      seen.emplace_back(raw->LatestWritten()->basis_tx(),
                        raw->Latest()->basis_tx());
    };
    auto store = Store::Open(dir.path(), options);
    REQUIRE(store.ok());
    raw = store->get();
    const EntityId before = (*store)->Latest()->basis_tx();
    const TxReport schema =
        MustTransact(**store, Attr("user/name", "db.type/string"));
    const TxReport name =
        MustTransact(**store, {Add(E("u"), "user/name", Value::String("ada"))});
    // After the answer both show the commit.
    CHECK((*store)->Latest()->basis_tx() == name.tx);
    CHECK((*store)->LatestWritten()->basis_tx() == name.tx);
    if (!early) {
      CHECK(seen.empty());
      continue;
    }
    // Each group was written (and its log entry readable) before the
    // readers' state moved.
    REQUIRE(seen.size() == 2);
    CHECK(seen[0] == std::pair{schema.tx, before});
    CHECK(seen[1] == std::pair{name.tx, schema.tx});
    CHECK(LogAfter(**store, schema.tx).size() == 1);
  }
}

}  // namespace
}  // namespace mentat::storage
