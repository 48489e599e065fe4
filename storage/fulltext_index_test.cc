// The fulltext postings (internal/fulltext_index.h): every path that
// writes datoms writes the same postings (Transact, bulk import, a replica
// applying the primary's log), and a store made before the family existed
// gets them built when it opens.

#include "internal/fulltext_index.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "internal/store_core.h"
#include "mentat/storage/fulltext.h"
#include "mentat/storage/store.h"
#include "mentat/storage/tx_log.h"
#include "test_support.h"

namespace mentat::storage {
namespace {

using testing::Add;
using testing::Attr;
using testing::E;
using testing::Retract;
using testing::TempDir;
using testing::Tx;
using testing::VectorImportSource;

std::vector<TxOp> FulltextAttr(const char* ident, bool many) {
  std::vector<TxOp> ops = Attr(ident, "db.type/string", many);
  ops.push_back(Add(E((std::string("attr-") + ident).c_str()), "db/fulltext",
                    Value::Boolean(true)));
  return ops;
}

// Schema, values, a changed value and a retraction (ids are deterministic,
// so "d0" is the same entity in every store); d0 and d1 come in tx 1.
std::vector<TxRequest> History() {
  std::vector<TxRequest> txs;
  std::vector<TxOp> schema = FulltextAttr("doc/title", false);
  for (TxOp& op : FulltextAttr("doc/tags", true)) schema.push_back(op);
  for (TxOp& op : Attr("doc/note", "db.type/string")) schema.push_back(op);
  txs.push_back(Tx(schema));
  for (int b = 0; b < 4; ++b) {
    std::vector<TxOp> docs;
    for (int i = b * 10; i < b * 10 + 10; ++i) {
      const std::string t = "d" + std::to_string(i);
      docs.push_back(Add(E(t.c_str()), "doc/title",
                         Value::String("Issue " + std::to_string(i) +
                                       (i % 2 ? ": the server crashes"
                                              : ": Running replicas"))));
      docs.push_back(
          Add(E(t.c_str()), "doc/tags", Value::String("tag alerts")));
      docs.push_back(
          Add(E(t.c_str()), "doc/note", Value::String("not indexed")));
    }
    txs.push_back(Tx(docs));
  }
  return txs;
}

std::vector<TxRequest> Changes(const TxReport& docs) {
  const EntityId d0 = docs.tempids.at("d0");
  const EntityId d1 = docs.tempids.at("d1");
  return {Tx({Add(E(d0), "doc/title", Value::String("Disk full warning"))}),
          Tx({Retract(E(d1), "doc/title",
                      Value::String("Issue 1: the server crashes"))})};
}

// The fulltext family's keys and values.
std::map<std::string, std::string> Postings(const Store& store) {
  std::map<std::string, std::string> out;
  auto db = store.Latest();
  const internal::StoreCore& core = db->core();
  std::unique_ptr<rocksdb::Iterator> it(core.db->NewIterator(
      rocksdb::ReadOptions(), core.cf(internal::Cf::kFulltext)));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    out[it->key().ToString()] = it->value().ToString();
  }
  return out;
}

std::vector<EntityId> Scan(const Store& store, const char* attr,
                           PostingKind kind, const char* term, bool prefix) {
  auto db = store.Latest();
  std::vector<EntityId> out;
  absl::Status s =
      ScanFulltextPostings(*db, db->schema().FindAttribute(attr)->id, kind,
                           term, prefix, [&](EntityId e) {
                             out.push_back(e);
                             return true;
                           });
  REQUIRE_MESSAGE(s.ok(), s.ToString());
  return out;
}

TEST_CASE("the tokenizer folds, stems and keeps numbers") {
  std::vector<FulltextToken> tokens;
  REQUIRE(TokenizeFulltext("The server CRASHES: Running, 42 replicas!", &tokens)
              .ok());
  std::vector<std::string> words, stems;
  for (const FulltextToken& t : tokens) {
    words.push_back(t.word);
    stems.push_back(t.stem);
  }
  CHECK(words == std::vector<std::string>{"the", "server", "crashes", "running",
                                          "42", "replicas"});
  CHECK(stems == std::vector<std::string>{"the", "server", "crash", "run", "42",
                                          "replica"});
  CHECK(tokens[5].position == 5);
}

TEST_CASE("Transact, Import and a replica write the same postings") {
  TempDir tdir, idir, rdir;
  auto transacted = *Store::Open(tdir.path());
  // The replica starts from a checkpoint of the empty primary, as mentatd
  // bootstraps one, and applies the primary's log after it.
  std::filesystem::create_directories(rdir.path());
  auto cp = transacted->Checkpoint(rdir.path() + "/db");
  REQUIRE(cp.ok());
  std::vector<TxReport> reports;
  for (const TxRequest& r : History()) {
    auto report = transacted->Transact(r).get();
    REQUIRE_MESSAGE(report.ok(), report.status().ToString());
    reports.push_back(*report);
  }
  for (const TxRequest& r : Changes(reports[1])) {
    REQUIRE(transacted->Transact(r).get().ok());
  }

  auto imported = *Store::Open(idir.path());
  ImportOptions options;
  options.chunk_keys = 100;  // several chunks
  VectorImportSource first(History());
  auto report = imported->Import(&first, options);
  REQUIRE_MESSAGE(report.ok(), report.status().ToString());
  CHECK(report->chunks > 1);
  VectorImportSource second(Changes(first.reports[1]));
  REQUIRE(imported->Import(&second, options).ok());

  auto replica = *Store::Open(rdir.path() + "/db");
  replica->SetRole(StoreRole::kReplica);
  absl::Status s =
      ReadTxLogRaw(*transacted->Latest(), cp->basis_tx, cp->basis_tx + 1, 0,
                   [&](EntityId prev, EntityId tx, std::string_view entry) {
                     auto r = replica->ApplyReplicated(
                         ReplicatedTx{prev, tx, std::string(entry), 0});
                     CHECK(r.get().ok());
                     return true;
                   });
  REQUIRE(s.ok());

  const auto postings = Postings(*transacted);
  // 40 titles of 4 words (+ "crash"/"run"/"replica" by word too), tags,
  // and the changed title's words: far more than nothing.
  CHECK(postings.size() > 200);
  CHECK(Postings(*imported) == postings);
  CHECK(Postings(*replica) == postings);

  // Postings are never removed: d1's retracted title and d0's replaced one
  // still name them; the changed value added its own words.
  const EntityId d0 = reports[1].tempids.at("d0");
  const EntityId d1 = reports[1].tempids.at("d1");
  auto crash =
      Scan(*transacted, "doc/title", PostingKind::kStem, "crash", false);
  CHECK(crash.size() == 20);
  CHECK(std::find(crash.begin(), crash.end(), d1) != crash.end());
  CHECK(Scan(*transacted, "doc/title", PostingKind::kStem, "warn", false) ==
        std::vector<EntityId>{d0});
  // The folded word where it differs from its stem, for prefixes.
  CHECK(
      Scan(*transacted, "doc/title", PostingKind::kWord, "runn", true).size() ==
      20);
  CHECK(
      Scan(*transacted, "doc/title", PostingKind::kStem, "runn", true).empty());
  // Each attribute has its own postings; plain strings have none.
  CHECK(Scan(*transacted, "doc/tags", PostingKind::kStem, "alert", false)
            .size() == 40);
  CHECK(Scan(*transacted, "doc/note", PostingKind::kStem, "index", false)
            .empty());
}

TEST_CASE("a store made before the fulltext family gets its postings") {
  TempDir dir;
  std::map<std::string, std::string> before;
  {
    auto store = *Store::Open(dir.path());
    for (const TxRequest& r : History()) {
      REQUIRE(store->Transact(r).get().ok());
    }
    before = Postings(*store);
    REQUIRE(!before.empty());
  }
  {
    // Remove the family and its marker, as a store of an older build is.
    std::vector<std::string> names;
    REQUIRE(rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(), dir.path(),
                                            &names)
                .ok());
    std::vector<rocksdb::ColumnFamilyDescriptor> families;
    for (const std::string& n : names) {
      families.emplace_back(n, rocksdb::ColumnFamilyOptions());
    }
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    rocksdb::DB* raw = nullptr;
    REQUIRE(rocksdb::DB::Open(rocksdb::DBOptions(), dir.path(), families,
                              &handles, &raw)
                .ok());
    for (size_t i = 0; i < names.size(); ++i) {
      if (names[i] == "meta") {
        REQUIRE(raw->Delete(rocksdb::WriteOptions(), handles[i],
                            internal::kMetaFulltextKey)
                    .ok());
      }
      if (names[i] == "fulltext") {
        REQUIRE(raw->DropColumnFamily(handles[i]).ok());
      }
    }
    for (auto* h : handles) REQUIRE(raw->DestroyColumnFamilyHandle(h).ok());
    delete raw;
  }
  auto reopened = Store::Open(dir.path());
  REQUIRE_MESSAGE(reopened.ok(), reopened.status().ToString());
  CHECK(Postings(**reopened) == before);
}

}  // namespace
}  // namespace mentat::storage
