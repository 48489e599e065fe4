// Excision (:db/excise): what it removes leaves no key or value in any
// family (current, history, log, fulltext, meta), no read at any basis
// shows it, a reopened store does not either, the request stays as a
// record, and requests that cannot work are refused with nothing
// committed.

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "internal/store_core.h"
#include "mentat/storage/entity_ids.h"
#include "mentat/storage/fulltext.h"
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
using testing::TempDir;
using testing::Tx;

// p/name (fulltext), p/email (unique identity), p/friend (ref), p/note
// (no history), p/age (long).
void Schema(Store& store) {
  std::vector<TxOp> ops =
      Concat({Attr("p/name", "db.type/string"),
              Attr("p/email", "db.type/string", false, "db.unique/identity"),
              Attr("p/friend", "db.type/ref"), Attr("p/note", "db.type/string"),
              Attr("p/age", "db.type/long")});
  ops.push_back(Add(E("attr-p/name"), "db/fulltext", Value::Boolean(true)));
  ops.push_back(Add(E("attr-p/note"), "db/noHistory", Value::Boolean(true)));
  MustTransact(store, std::move(ops));
}

TxOp Excise(const char* request, EntityRef target) {
  return AddRef(E(request), "db/excise", std::move(target));
}

// Every key and value of every family, as one string per entry.
std::vector<std::string> RawEntries(const Store& store) {
  std::vector<std::string> out;
  auto db = store.Latest();
  const internal::StoreCore& core = db->core();
  for (int i = 0; i < static_cast<int>(internal::Cf::kCount); ++i) {
    std::unique_ptr<rocksdb::Iterator> it(
        core.db->NewIterator(internal::TotalOrderReadOptions(),
                             core.cf(static_cast<internal::Cf>(i))));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      out.push_back(it->key().ToString() + "=" + it->value().ToString());
    }
    REQUIRE(it->status().ok());
  }
  return out;
}

bool AnyEntryHolds(const Store& store, const std::string& needle) {
  for (const std::string& e : RawEntries(store)) {
    if (e.find(needle) != std::string::npos) return true;
  }
  return false;
}

// True if a file under `dir` holds `needle`.
bool AnyFileHolds(const std::string& dir, const std::string& needle) {
  for (const auto& f : std::filesystem::recursive_directory_iterator(dir)) {
    if (!f.is_regular_file()) continue;
    std::ifstream in(f.path(), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)),
                      std::istreambuf_iterator<char>());
    if (bytes.find(needle) != std::string::npos) {
      MESSAGE(std::string(f.path().string() + " holds " + needle));
      return true;
    }
  }
  return false;
}

std::vector<Datom> Datoms(const Db& db, Basis basis, IndexOrder order) {
  auto datoms = db.View(basis).Datoms(order, "");
  REQUIRE_MESSAGE(datoms.ok(), datoms.status().ToString());
  return *datoms;
}

int CountOf(const std::vector<Datom>& datoms, EntityId e) {
  int n = 0;
  for (const Datom& d : datoms) n += d.e == e ? 1 : 0;
  return n;
}

std::vector<Datom> LogDatoms(const Db& db) {
  std::vector<Datom> all;
  absl::Status s =
      ReadTxLog(db, 0, 0, [&](EntityId, const std::vector<Datom>& datoms) {
        all.insert(all.end(), datoms.begin(), datoms.end());
        return true;
      });
  REQUIRE(s.ok());
  return all;
}

std::vector<EntityId> Search(const Store& store, const char* attr,
                             const char* term) {
  auto db = store.Latest();
  std::vector<EntityId> out;
  absl::Status s = ScanFulltextPostings(
      *db, db->schema().FindAttribute(attr)->id, PostingKind::kStem, term,
      /*prefix=*/true, [&](EntityId e) {
        out.push_back(e);
        return true;
      });
  REQUIRE(s.ok());
  // An entity comes once per term it matches.
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

const char* const kSecrets[] = {"Zanzibarite", "zanzibar", "mallory@secret",
                                "nohistqqq", "nohistrrr"};

TEST_CASE("an excised entity leaves nothing in any family, at any basis") {
  TempDir dir;
  StoreOptions options;
  auto store = *Store::Open(dir.path(), options);
  Schema(*store);
  auto t1 = MustTransact(
      *store, {Add(E("x"), "p/name", Value::String("Zanzibarite")),
               Add(E("x"), "p/email", Value::String("mallory@secret")),
               Add(E("x"), "p/note", Value::String("nohistqqq")),
               Add(E("x"), "p/age", Value::Long(41)),
               Add(E("y"), "p/name", Value::String("Yolanda")),
               AddRef(E("y"), "p/friend", E("x"))});
  const EntityId x = t1.tempids.at("x"), y = t1.tempids.at("y");
  auto t2 =
      MustTransact(*store, {Add(E(x), "p/name", Value::String("Zanzibar Two")),
                            Add(E(x), "p/note", Value::String("nohistrrr"))});
  for (const char* s : kSecrets) REQUIRE(AnyEntryHolds(*store, s));
  REQUIRE(Search(*store, "p/name", "zanzibar") == std::vector<EntityId>{x});

  auto ex = MustTransact(*store, {Excise("req", E(x))});
  const EntityId request = ex.tempids.at("req");
  // Six datoms: two names (one retracted), the email, two notes (the
  // first left no history, but the log held it), the age.
  CHECK(ex.excised_datoms == 6);

  auto check = [&](const Store& s) {
    auto db = s.Latest();
    for (const char* secret : kSecrets) {
      CHECK_MESSAGE(!AnyEntryHolds(s, secret), std::string(secret));
    }
    for (Basis basis : {Basis::Current(), Basis::History(), Basis::AsOf(t1.tx),
                        Basis::AsOf(t2.tx), Basis::Since(0)}) {
      for (IndexOrder order :
           {IndexOrder::kEavt, IndexOrder::kAevt, IndexOrder::kAvet}) {
        CHECK(CountOf(Datoms(*db, basis, order), x) == 0);
      }
    }
    for (const Datom& d : LogDatoms(*db)) CHECK(d.e != x);
    CHECK(Search(s, "p/name", "zanzibar").empty());
    CHECK(Search(s, "p/name", "yolanda") == std::vector<EntityId>{y});
    // What others say of x stays: y's reference to it.
    auto now = Datoms(*db, Basis::Current(), IndexOrder::kEavt);
    CHECK(CountOf(now, y) == 2);
    // The request is kept, as of its own transaction.
    bool recorded = false;
    for (const Datom& d : now) {
      recorded |= d.e == request && d.a == ids::kDbExcise &&
                  d.v == Value::Ref(x) && d.tx == ex.tx;
    }
    CHECK(recorded);
    // Statistics count what is left.
    const Attribute* name = db->schema().FindAttribute("p/name");
    CHECK(db->stats().Find(name->id)->datoms == 1);
  };
  check(*store);

  SUBCASE("a reopened store shows the same, and its files hold no byte") {
    REQUIRE(store->PurgeExcised().ok());
    store.reset();
    auto again = Store::Open(dir.path(), options);
    REQUIRE(again.ok());
    check(**again);
    // The files, once the store has reopened (RocksDB's MANIFEST named
    // the deleted files by their first and last keys until then).
    again->reset();
    for (const char* secret : kSecrets) {
      CHECK(!AnyFileHolds(dir.path(), secret));
    }
  }
  SUBCASE("a checkpoint taken after holds none of it") {
    // No explicit purge: the checkpoint waits for the excision's.
    TempDir copy;
    std::filesystem::create_directories(copy.path());
    REQUIRE(store->Checkpoint(copy.path() + "/db").ok());
    for (const char* secret : kSecrets) {
      CHECK(!AnyFileHolds(copy.path(), secret));
    }
  }
  SUBCASE("an entity with nothing left cannot be excised again") {
    auto again = store->Transact(Tx({Excise("r2", E(x))})).get();
    CHECK(again.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(again.status().message().find("no datoms") != std::string::npos);
  }
}

TEST_CASE("excising some attributes of an entity, before a transaction") {
  TempDir dir;
  auto store = *Store::Open(dir.path());
  Schema(*store);
  auto t1 =
      MustTransact(*store, {Add(E("x"), "p/name", Value::String("alphaqx")),
                            Add(E("x"), "p/age", Value::Long(1))});
  const EntityId x = t1.tempids.at("x");
  auto t2 = MustTransact(*store, {Add(E(x), "p/name", Value::String("betaqx")),
                                  Add(E(x), "p/age", Value::Long(2))});
  auto t3 =
      MustTransact(*store, {Add(E(x), "p/name", Value::String("gammaqx"))});
  TxOp attrs = AddRef(E("req"), "db.excise/attrs", Kw("p/name"));
  TxOp before = Add(E("req"), "db.excise/beforeT", Value::Long(t3.tx));
  auto ex = MustTransact(*store, {Excise("req", E(x)), attrs, before});
  // The intervals of "alphaqx" [t1, t2) and "betaqx" [t2, t3) go whole;
  // "gammaqx", asserted at t3, stays, and so does every p/age.
  CHECK(ex.excised_datoms == 2);
  auto db = store->Latest();
  const EntityId name = db->schema().FindAttribute("p/name")->id;
  std::vector<Value> names;
  for (const Datom& d : Datoms(*db, Basis::History(), IndexOrder::kEavt)) {
    if (d.e == x && d.a == name) names.push_back(d.v);
  }
  CHECK(names == std::vector<Value>{Value::String("gammaqx")});
  // As of t2, x has its age and no name: as if it never had one.
  std::vector<Datom> then = Datoms(*db, Basis::AsOf(t2.tx), IndexOrder::kEavt);
  CHECK(CountOf(then, x) == 1);
  // The log keeps t1's and t2's ages and t3's name.
  int names_logged = 0, ages_logged = 0;
  for (const Datom& d : LogDatoms(*db)) {
    if (d.e != x) continue;
    names_logged += d.a == name ? 1 : 0;
    ages_logged += d.a != name ? 1 : 0;
  }
  CHECK(names_logged == 1);
  CHECK(ages_logged == 3);  // 1, then 2 replacing it (a retraction of 1)
  CHECK(!AnyEntryHolds(*store, "alphaqx"));
  CHECK(!AnyEntryHolds(*store, "betaqx"));
  CHECK(AnyEntryHolds(*store, "gammaqx"));
  (void)t2;
}

TEST_CASE("excising an attribute removes its values on every entity") {
  TempDir dir;
  auto store = *Store::Open(dir.path());
  Schema(*store);
  auto t1 =
      MustTransact(*store, {Add(E("x"), "p/age", Value::Long(7001)),
                            Add(E("y"), "p/age", Value::Long(7002)),
                            Add(E("y"), "p/name", Value::String("kept"))});
  const EntityId y = t1.tempids.at("y");
  MustTransact(*store, {Retract(E(y), "p/age", Value::Long(7002))});
  auto ex = MustTransact(*store, {Excise("req", Kw("p/age"))});
  CHECK(ex.excised_datoms == 2);
  auto db = store->Latest();
  const EntityId age = db->schema().FindAttribute("p/age")->id;
  for (Basis basis : {Basis::Current(), Basis::History(), Basis::AsOf(t1.tx)}) {
    for (const Datom& d : Datoms(*db, basis, IndexOrder::kAevt)) {
      CHECK(d.a != age);
    }
  }
  for (const Datom& d : LogDatoms(*db)) CHECK(d.a != age);
  CHECK(db->stats().Find(age)->datoms == 0);
  // The attribute itself stays, and takes new values.
  MustTransact(*store, {Add(E(y), "p/age", Value::Long(3))});
}

TEST_CASE("excision requests that cannot work are refused, nothing committed") {
  TempDir dir;
  auto store = *Store::Open(dir.path());
  Schema(*store);
  auto t1 = MustTransact(*store, {Add(E("x"), "p/name", Value::String("n")),
                                  Add(E("x"), "p/email", Value::String("e"))});
  const EntityId x = t1.tempids.at("x");
  auto ex = MustTransact(*store,
                         {Excise("req", E(x)),
                          AddRef(E("req"), "db.excise/attrs", Kw("p/email"))});
  const EntityId request = ex.tempids.at("req");

  auto refused = [&](std::vector<TxOp> ops, const std::string& what) {
    const EntityId basis = store->Latest()->basis_tx();
    absl::Status s = store->Transact(Tx(std::move(ops))).get().status();
    CHECK_MESSAGE(s.code() == absl::StatusCode::kInvalidArgument, s.ToString());
    CHECK_MESSAGE(s.message().find(what) != std::string::npos, s.ToString());
    CHECK(store->Latest()->basis_tx() == basis);
  };
  refused({Excise("r", E(t1.tx))}, "cannot excise transaction");
  refused({Excise("r", Kw("db/ident"))}, "bootstrap attribute");
  refused({Excise("r", Kw("db.cardinality/one"))}, "it is schema");
  refused({Excise("r", E(request))}, "excision request");
  refused({Excise("r", E(x)), Add(E(x), "p/name", Value::String("m"))},
          "holds only excision requests");
  refused(
      {Excise("r", E(x)), AddRef(E("r"), "db.excise/attrs", Kw("db/ident"))},
      "which an excision cannot remove");
  refused({Excise("r", Kw("p/name")),
           AddRef(E("r"), "db.excise/attrs", Kw("p/email"))},
          ":db.excise/attrs limits an entity's excision");
  refused(
      {Excise("r", E(x)), Add(E("r"), "db.excise/beforeT", Value::Long(t1.tx)),
       Add(E("r"), "db.excise/before", Value::Instant(1))},
      "not both");
  refused({AddRef(E("r"), "db.excise/attrs", Kw("p/name"))}, "no :db/excise");
  refused({Add(E(request), "db.excise/beforeT", Value::Long(1))},
          "is a new entity");

  // A speculative value keeps the history an excision would remove.
  auto with = store->Latest()->With(Tx({Excise("r", E(x))}));
  CHECK(with.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(with.status().message().find("speculative") != std::string::npos);
}

}  // namespace
}  // namespace mentat::storage
