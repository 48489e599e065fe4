// Bulk import must read back exactly as if every transaction had been
// transacted: the same keys in every column family, the same statistics.

#include <doctest/doctest.h>

#include <map>

#include "internal/store_core.h"
#include "mentat/storage/store.h"
#include "test_support.h"

namespace mentat::storage {
namespace {

using testing::Add;
using testing::AddRef;
using testing::Attr;
using testing::E;
using testing::Retract;
using testing::TempDir;

constexpr int64_t kStart = int64_t{1735689600} * 1000000;

// A deterministic history: schema, users, issues referring to users by
// lookup ref, then state changes, label removals and an upsert.
std::vector<TxRequest> Transactions() {
  std::vector<TxRequest> txs;
  int64_t instant = kStart;
  auto tx = [&](std::vector<TxOp> ops) {
    ops.push_back(Add(EntityRef::TxTempId(), "db/txInstant",
                      Value::Instant(instant += 1000000)));
    txs.push_back(TxRequest{std::move(ops)});
  };
  std::vector<TxOp> schema;
  for (auto part :
       {Attr("u/email", "db.type/string", false, "db.unique/identity"),
        Attr("u/name", "db.type/string"), Attr("i/title", "db.type/string"),
        Attr("i/state", "db.type/keyword"), Attr("i/owner", "db.type/ref"),
        Attr("i/label", "db.type/long", true)}) {
    schema.insert(schema.end(), part.begin(), part.end());
  }
  tx(schema);
  std::vector<TxOp> users;
  for (int u = 0; u < 50; ++u) {
    const std::string t = "u" + std::to_string(u);
    users.push_back(Add(E(t.c_str()), "u/email",
                        Value::String("u" + std::to_string(u) + "@x")));
    users.push_back(Add(E(t.c_str()), "u/name", Value::String("User " + t)));
  }
  tx(users);
  for (int b = 0; b < 10; ++b) {
    std::vector<TxOp> issues;
    for (int i = b * 100; i < b * 100 + 100; ++i) {
      const std::string t = "i" + std::to_string(i);
      issues.push_back(Add(E(t.c_str()), "i/title",
                           Value::String("Issue " + std::to_string(i))));
      issues.push_back(Add(E(t.c_str()), "i/state",
                           Value::Keyword(i % 3 ? "s/open" : "s/closed")));
      issues.push_back(AddRef(
          E(t.c_str()), "i/owner",
          EntityRef::LookupRef(
              "u/email", Value::String("u" + std::to_string(i % 50) + "@x"))));
      for (int l = 0; l < i % 4; ++l) {
        issues.push_back(Add(E(t.c_str()), "i/label", Value::Long(l)));
      }
    }
    tx(issues);
  }
  // Changes: entities are found through their unique email or, for
  // issues, through ids the first pass learns (ids are deterministic).
  std::vector<TxOp> renames;
  for (int u = 0; u < 50; u += 7) {
    renames.push_back(Add(E(("r" + std::to_string(u)).c_str()), "u/email",
                          Value::String("u" + std::to_string(u) + "@x")));
    renames.push_back(Add(E(("r" + std::to_string(u)).c_str()), "u/name",
                          Value::String("Renamed " + std::to_string(u))));
  }
  tx(renames);
  return txs;
}

class VectorSource : public ImportSource {
 public:
  explicit VectorSource(std::vector<TxRequest> txs) : txs_(std::move(txs)) {}
  absl::StatusOr<bool> Next(TxRequest* request) override {
    if (next_ == txs_.size()) return false;
    *request = txs_[next_++];
    return true;
  }
  void OnReport(const TxReport& report) override { reports.push_back(report); }
  std::vector<TxReport> reports;

 private:
  std::vector<TxRequest> txs_;
  size_t next_ = 0;
};

// Every key and value of every column family.
std::map<std::string, std::string> Dump(Store& store) {
  std::map<std::string, std::string> out;
  auto db = store.Latest();
  const internal::StoreCore& core = db->core();
  for (int c = 0; c < static_cast<int>(internal::Cf::kCount); ++c) {
    std::unique_ptr<rocksdb::Iterator> it(core.db->NewIterator(
        rocksdb::ReadOptions(), core.cf(static_cast<internal::Cf>(c))));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      out[std::string(internal::CfName(static_cast<internal::Cf>(c))) + "|" +
          it->key().ToString()] = it->value().ToString();
    }
  }
  return out;
}

// The later transactions touch issues by id: build them from the ids the
// first transactions produced (identical in both stores).
std::vector<TxRequest> Changes(const std::vector<TxReport>& reports) {
  std::vector<TxRequest> txs;
  int64_t instant = kStart + int64_t{1000} * 1000000;
  for (int round = 0; round < 3; ++round) {
    std::vector<TxOp> ops;
    for (int i = round; i < 1000; i += 13) {
      const int batch = i / 100;
      const EntityId e = reports[2 + batch].tempids.at("i" + std::to_string(i));
      ops.push_back(Add(E(e), "i/state",
                        Value::Keyword(round % 2 ? "s/open" : "s/resolved")));
      if (i % 4 > 0) ops.push_back(Retract(E(e), "i/label", Value::Long(0)));
    }
    ops.push_back(Add(EntityRef::TxTempId(), "db/txInstant",
                      Value::Instant(instant += 1000000)));
    txs.push_back(TxRequest{std::move(ops)});
  }
  return txs;
}

TEST_CASE("bulk import reads back exactly as transacted") {
  TempDir transacted_dir, imported_dir;
  auto transacted = *Store::Open(transacted_dir.path());
  std::vector<TxReport> reports;
  for (const TxRequest& r : Transactions()) {
    auto report = transacted->Transact(r).get();
    REQUIRE_MESSAGE(report.ok(), report.status().ToString());
    reports.push_back(*report);
  }
  for (const TxRequest& r : Changes(reports)) {
    REQUIRE(transacted->Transact(r).get().ok());
  }

  auto imported = *Store::Open(imported_dir.path());
  ImportOptions options;
  options.chunk_keys = 2000;  // several chunks
  VectorSource first(Transactions());
  auto report = imported->Import(&first, options);
  REQUIRE_MESSAGE(report.ok(), report.status().ToString());
  CHECK(report->chunks > 1);
  VectorSource second(Changes(first.reports));
  REQUIRE(imported->Import(&second, options).ok());

  CHECK(imported->Latest()->basis_tx() == transacted->Latest()->basis_tx());
  const auto a = Dump(*transacted);
  const auto b = Dump(*imported);
  CHECK(a.size() == b.size());
  size_t differing = 0;
  for (const auto& [k, v] : a) {
    auto it = b.find(k);
    if (it == b.end() || it->second != v) differing++;
  }
  CHECK(differing == 0);
  // Statistics as published.
  const auto& sa = transacted->Latest()->stats().all();
  const auto& sb = imported->Latest()->stats().all();
  REQUIRE(sa.size() == sb.size());
  for (const auto& [attr, st] : sa) {
    CAPTURE(attr);
    REQUIRE(sb.contains(attr));
    CHECK(sb.at(attr).datoms == st.datoms);
    CHECK(sb.at(attr).distinct_values == st.distinct_values);
    CHECK(sb.at(attr).values_tracked == st.values_tracked);
    CHECK(sb.at(attr).value_counts == st.value_counts);
  }
  // And after a reopen, the imported store keeps transacting.
  imported.reset();
  imported = *Store::Open(imported_dir.path());
  auto after =
      imported
          ->Transact(TxRequest{{Add(E("z"), "u/email", Value::String("z@x"))}})
          .get();
  CHECK(after.ok());
}

TEST_CASE("a failing transaction stops the import after what came before") {
  TempDir dir;
  auto store = *Store::Open(dir.path());
  std::vector<TxRequest> txs = Transactions();
  txs.insert(txs.begin() + 2,
             TxRequest{{Add(E("bad"), "u/name", Value::Long(5))}});
  VectorSource source(txs);
  auto report = store->Import(&source);
  REQUIRE_FALSE(report.ok());
  CHECK(report.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(report.status().message()).find("import transaction 2") !=
        std::string::npos);
  // The schema and users before it are there.
  CHECK(store->Latest()->schema().FindAttribute("u/email") != nullptr);
  CHECK(source.reports.size() == 2);
}

}  // namespace
}  // namespace mentat::storage
