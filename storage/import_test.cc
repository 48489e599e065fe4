// Bulk import must read back exactly as if every transaction had been
// transacted: the same keys in every column family, the same statistics.

#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
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
using testing::RetractEntity;
using testing::TempDir;
using testing::VectorImportSource;

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
  VectorImportSource first(Transactions());
  auto report = imported->Import(&first, options);
  REQUIRE_MESSAGE(report.ok(), report.status().ToString());
  CHECK(report->chunks > 1);
  VectorImportSource second(Changes(first.reports));
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
    CHECK(sb.at(attr)->datoms == st->datoms);
    CHECK(sb.at(attr)->distinct_values == st->distinct_values);
    CHECK(sb.at(attr)->values_tracked == st->values_tracked);
    CHECK(sb.at(attr)->value_counts == st->value_counts);
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

TEST_CASE("an import's memory bound sizes its chunks, filter and summary") {
  // 1 GiB is about the defaults; less memory means smaller parts, never
  // below the 64 MiB floor.
  const ImportOptions defaults;
  const ImportOptions gib = ImportOptions::WithinMemory(size_t{1} << 30);
  CHECK(gib.filter_bytes == defaults.filter_bytes);
  CHECK(gib.summary_groups == defaults.summary_groups);
  CHECK(gib.chunk_keys > defaults.chunk_keys * 9 / 10);
  CHECK(gib.chunk_keys < defaults.chunk_keys * 11 / 10);
  const ImportOptions small = ImportOptions::WithinMemory(size_t{256} << 20);
  CHECK(small.chunk_keys < gib.chunk_keys / 3);
  CHECK(small.filter_bytes == gib.filter_bytes / 4);
  const ImportOptions floor = ImportOptions::WithinMemory(0);
  CHECK(floor.chunk_keys ==
        ImportOptions::WithinMemory(size_t{64} << 20).chunk_keys);
  CHECK(floor.chunk_keys > 0);
}

TEST_CASE(
    "an import of fresh entities puts entity, AEVT and log files below L0") {
  // Each chunk's EAVT files (one per partition), AEVT files (one per
  // attribute) and log file lie beside or above everything ingested
  // before, so RocksDB places them in the last level (files that overlap
  // go to the lowest level above what they overlap, and reach L0 after a
  // few chunks): the import's closing merge skips them. Checked from
  // inside the import, while compactions wait.
  TempDir dir;
  auto store = *Store::Open(dir.path());
  std::vector<TxRequest> txs = Transactions();
  txs.pop_back();  // the renames touch existing users
  const internal::StoreCore& core = store->Latest()->core();
  auto files_in_l0 = [&](internal::Cf cf) {
    std::string n;
    REQUIRE(
        core.db->GetProperty(core.cf(cf), "rocksdb.num-files-at-level0", &n));
    return n;
  };
  class CheckingSource : public VectorImportSource {
   public:
    using VectorImportSource::VectorImportSource;
    [[nodiscard]] absl::StatusOr<bool> Next(TxRequest* request) override {
      absl::StatusOr<bool> more = VectorImportSource::Next(request);
      if (more.ok() && !*more) last();
      return more;
    }
    std::function<void()> last;
  };
  CheckingSource source(txs);
  std::string eavt_l0, aevt_l0, log_l0, avet_l0;
  source.last = [&] {
    eavt_l0 = files_in_l0(internal::Cf::kEavt);
    aevt_l0 = files_in_l0(internal::Cf::kAevt);
    log_l0 = files_in_l0(internal::Cf::kLog);
    avet_l0 = files_in_l0(internal::Cf::kAvet);
  };
  ImportOptions options;
  // More chunks than levels: overlapping files would reach L0.
  options.chunk_keys = 500;
  auto report = store->Import(&source, options);
  REQUIRE_MESSAGE(report.ok(), report.status().ToString());
  REQUIRE(report->chunks > 8);
  CHECK(eavt_l0 == "0");
  CHECK(aevt_l0 == "0");
  CHECK(log_l0 == "0");
  // AVET's chunks overlap (every chunk holds every attribute): they wait
  // in L0 until the import ends.
  CHECK(avet_l0 != "0");
}

TEST_CASE("an import leaves no family crowding L0 and takes writes at once") {
  // Every chunk's AEVT, AVET and VAET files overlap the chunks' before
  // them and reach L0; left there, many chunks stopped writes after a long
  // import (issue 20). The import merges them into the last level before
  // it answers, with the same data as an import in one chunk.
  TempDir chunked_dir, whole_dir;
  // A write after the import, the same in both stores.
  auto Write = [] {
    return TxRequest{{Add(E("z"), "u/email", Value::String("z@x")),
                      Add(EntityRef::TxTempId(), "db/txInstant",
                          Value::Instant(kStart + int64_t{5000} * 1000000))}};
  };
  auto chunked = *Store::Open(chunked_dir.path());
  // The schema, then 40 small transactions of issues, a chunk each: more
  // chunks than levels, and more than the L0 files that slow writes down.
  std::vector<TxRequest> txs = {Transactions().front()};
  int64_t instant = kStart;
  for (int t = 0; t < 40; ++t) {
    std::vector<TxOp> ops;
    for (int i = t * 10; i < t * 10 + 10; ++i) {
      const std::string e = "i" + std::to_string(i);
      ops.push_back(Add(E(e.c_str()), "i/title",
                        Value::String("Issue " + std::to_string(i))));
      ops.push_back(Add(E(e.c_str()), "i/state",
                        Value::Keyword(i % 3 ? "s/open" : "s/closed")));
      ops.push_back(Add(E(e.c_str()), "i/label", Value::Long(i % 7)));
    }
    ops.push_back(Add(EntityRef::TxTempId(), "db/txInstant",
                      Value::Instant(instant += 1000000)));
    txs.push_back(TxRequest{std::move(ops)});
  }
  ImportOptions options;
  options.chunk_keys = 50;
  VectorImportSource source(txs);
  auto report = chunked->Import(&source, options);
  REQUIRE_MESSAGE(report.ok(), report.status().ToString());
  REQUIRE(report->chunks > 20);

  const internal::StoreCore& core = chunked->Latest()->core();
  auto int_property = [&](internal::Cf cf, const std::string& name) {
    uint64_t v = 0;
    REQUIRE(core.db->GetIntProperty(core.cf(cf), name, &v));
    return v;
  };
  for (int c = 0; c < static_cast<int>(internal::Cf::kCount); ++c) {
    const auto cf = static_cast<internal::Cf>(c);
    const std::string name = internal::CfName(cf);
    CAPTURE(name);
    std::string files;
    REQUIRE(core.db->GetProperty(core.cf(cf), "rocksdb.num-files-at-level0",
                                 &files));
    const uint64_t l0 = std::stoull(files);
    const auto slowdown = static_cast<uint64_t>(
        core.db->GetOptions(core.cf(cf)).level0_slowdown_writes_trigger);
    CHECK(l0 < slowdown);
    if (cf == internal::Cf::kAevt || cf == internal::Cf::kAvet ||
        cf == internal::Cf::kVaet) {
      CHECK(l0 == 0);
    }
  }
  // Compactions are back on, and a write commits without a stall or a
  // slowdown.
  CHECK_FALSE(core.db->GetOptions(core.cf(internal::Cf::kAvet))
                  .disable_auto_compactions);
  auto after = chunked->Transact(Write()).get();
  REQUIRE_MESSAGE(after.ok(), after.status().ToString());
  CHECK(int_property(internal::Cf::kAevt, "rocksdb.is-write-stopped") == 0);
  CHECK(int_property(internal::Cf::kAevt,
                     "rocksdb.actual-delayed-write-rate") == 0);

  // The same keys as an import in one chunk.
  auto whole = *Store::Open(whole_dir.path());
  VectorImportSource again(txs);
  auto one = whole->Import(&again, ImportOptions());
  REQUIRE_MESSAGE(one.ok(), one.status().ToString());
  REQUIRE(one->chunks == 1);
  REQUIRE(whole->Transact(Write()).get().ok());
  CHECK(Dump(*chunked) == Dump(*whole));
}

TEST_CASE("readers of what an import published fill the entity cache") {
  TempDir dir;
  auto store = *Store::Open(dir.path());
  VectorImportSource source(Transactions());
  ImportOptions options;
  options.chunk_keys = 2000;  // several chunks
  REQUIRE(store->Import(&source, options).ok());
  const EntityId user = source.reports[1].tempids.at("u3");
  auto read = [&] {
    return testing::ValuesOf(store->Latest()->View(Basis::Current()), user,
                             "u/name");
  };
  REQUIRE(read() == std::vector<Value>{Value::String("User u3")});
  const CacheCounters before = store->entity_cache_counters();
  CHECK(before.entries > 0);
  CHECK(read() == std::vector<Value>{Value::String("User u3")});
  CHECK(store->entity_cache_counters().hits > before.hits);
}

TEST_CASE("a failing transaction stops the import after what came before") {
  TempDir dir;
  auto store = *Store::Open(dir.path());
  std::vector<TxRequest> txs = Transactions();
  txs.insert(txs.begin() + 2,
             TxRequest{{Add(E("bad"), "u/name", Value::Long(5))}});
  VectorImportSource source(txs);
  auto report = store->Import(&source);
  REQUIRE_FALSE(report.ok());
  CHECK(report.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(report.status().message()).find("import transaction 2") !=
        std::string::npos);
  // The schema and users before it are there.
  CHECK(store->Latest()->schema().FindAttribute("u/email") != nullptr);
  CHECK(source.reports.size() == 2);
}

// One import that keeps changing what its earlier chunks wrote: lookup
// refs, upserts, cardinality-one replacements, retractions of values and
// of whole entities (with components and incoming refs), a compare-and-
// swap. Entities are named through the unique k/key, so the transactions
// are the same for both stores.
std::vector<TxRequest> ChangingTransactions() {
  std::vector<TxRequest> txs;
  int64_t instant = kStart;
  auto tx = [&](std::vector<TxOp> ops) {
    ops.push_back(Add(EntityRef::TxTempId(), "db/txInstant",
                      Value::Instant(instant += 1000000)));
    txs.push_back(TxRequest{std::move(ops)});
  };
  auto key = [](int i) {
    return EntityRef::LookupRef("k/key",
                                Value::String("k" + std::to_string(i)));
  };
  auto user = [](int u) {
    return EntityRef::LookupRef("u/email",
                                Value::String("u" + std::to_string(u) + "@x"));
  };
  std::vector<TxOp> schema;
  for (auto part :
       {Attr("u/email", "db.type/string", false, "db.unique/identity"),
        Attr("u/name", "db.type/string"),
        Attr("k/key", "db.type/string", false, "db.unique/identity"),
        Attr("k/state", "db.type/keyword"), Attr("k/owner", "db.type/ref"),
        Attr("k/tags", "db.type/long", true),
        Attr("k/part", "db.type/ref", false, nullptr, /*component=*/true),
        Attr("p/name", "db.type/string"), Attr("k/n", "db.type/long"),
        Attr("k/big", "db.type/long", true)}) {
    schema.insert(schema.end(), part.begin(), part.end());
  }
  tx(schema);
  std::vector<TxOp> users;
  for (int u = 0; u < 20; ++u) {
    const std::string t = "u" + std::to_string(u);
    users.push_back(Add(E(t.c_str()), "u/email", Value::String(t + "@x")));
    users.push_back(Add(E(t.c_str()), "u/name", Value::String("User " + t)));
  }
  tx(users);
  for (int b = 0; b < 8; ++b) {
    std::vector<TxOp> ops;
    for (int i = b * 25; i < b * 25 + 25; ++i) {
      const std::string t = "i" + std::to_string(i);
      const std::string p = "p" + std::to_string(i);
      ops.push_back(
          Add(E(t.c_str()), "k/key", Value::String("k" + std::to_string(i))));
      ops.push_back(Add(E(t.c_str()), "k/state",
                        Value::Keyword(i % 2 ? "s/open" : "s/closed")));
      ops.push_back(AddRef(E(t.c_str()), "k/owner", user(i % 15)));
      ops.push_back(Add(E(t.c_str()), "k/n", Value::Long(i % 7)));
      // Past 256 distinct values k/big's are not counted one by one; 7
      // is held by every issue (scans of it outgrow any cache).
      for (int64_t v : {int64_t{i} + 100, int64_t{i} + 1000, int64_t{7}}) {
        ops.push_back(Add(E(t.c_str()), "k/big", Value::Long(v)));
      }
      for (int l = 0; l < i % 3; ++l) {
        ops.push_back(Add(E(t.c_str()), "k/tags", Value::Long(l)));
      }
      ops.push_back(Add(E(p.c_str()), "p/name", Value::String("part " + p)));
      ops.push_back(AddRef(E(t.c_str()), "k/part", E(p.c_str())));
    }
    tx(ops);
    // Every other batch, change what earlier batches wrote.
    if (b % 2 == 1) {
      std::vector<TxOp> change;
      for (int i = 0; i < b * 25; i += 5) {
        change.push_back(Add(key(i), "k/state", Value::Keyword("s/moved")));
        change.push_back(Retract(key(i), "k/tags", Value::Long(0)));
        // Issue 0 keeps it: scans of it start from a key earlier chunks
        // wrote.
        if (i > 0) change.push_back(Retract(key(i), "k/big", Value::Long(7)));
        change.push_back(Add(key(i), "k/n", Value::Long(i % 7)));  // redundant
      }
      change.push_back(RetractEntity(key(b * 25 - 3)));
      // Users 15 to 19 own nothing; a retracted one's email is free again.
      change.push_back(RetractEntity(user(15 + b / 2)));
      // An upsert through the unique email, and a cas.
      change.push_back(Add(E("again"), "u/email",
                           Value::String("u" + std::to_string(b + 10) + "@x")));
      change.push_back(Add(E("again"), "u/name", Value::String("Again")));
      TxOp cas;
      cas.kind = TxOp::Kind::kCas;
      cas.e = key(1);
      cas.a = EntityRef::Ident("k/n");
      cas.old = TxValue::Scalar(Value::Long(std::max(1, b / 2)));
      cas.v = TxValue::Scalar(Value::Long(b / 2 + 1));
      change.push_back(std::move(cas));
      tx(change);
    }
  }
  return txs;
}

TEST_CASE("an import changing its earlier chunks reads back as transacted") {
  TempDir transacted_dir;
  auto transacted = *Store::Open(transacted_dir.path());
  for (const TxRequest& r : ChangingTransactions()) {
    auto report = transacted->Transact(r).get();
    REQUIRE_MESSAGE(report.ok(), report.status().ToString());
  }
  const auto want = Dump(*transacted);
  for (size_t chunk_keys : {size_t{50}, size_t{700}, size_t{4000000}}) {
    for (size_t filter_bytes : {size_t{0}, size_t{64}, size_t{1} << 20}) {
      CAPTURE(chunk_keys);
      CAPTURE(filter_bytes);
      TempDir dir;
      auto imported = *Store::Open(dir.path());
      ImportOptions options;
      options.chunk_keys = chunk_keys;
      options.filter_bytes = filter_bytes;
      VectorImportSource source(ChangingTransactions());
      auto report = imported->Import(&source, options);
      REQUIRE_MESSAGE(report.ok(), report.status().ToString());
      CHECK((chunk_keys > 1000 ? report->chunks == 1 : report->chunks > 3));
      CHECK(Dump(*imported) == want);
    }
  }
}

TEST_CASE("a failing import transaction leaves its chunk as it was before") {
  // The failing transaction is the last of the input; whatever chunk it
  // fell into, the store holds exactly the transactions before it.
  std::vector<TxRequest> txs = ChangingTransactions();
  for (size_t fail_at : {size_t{3}, size_t{6}, txs.size() - 1}) {
    CAPTURE(fail_at);
    std::vector<TxRequest> input(txs.begin(), txs.begin() + fail_at);
    // Valid writes first (rolled back with the rest), then a unique
    // conflict: two new entities claiming one key.
    TxRequest bad;
    bad.ops.push_back(Add(E("x"), "k/state", Value::Keyword("s/x")));
    bad.ops.push_back(Add(E("y"), "u/name", Value::String("y")));
    TxOp conflict = Add(E("z1"), "k/n", Value::Long(1));
    bad.ops.push_back(conflict);
    bad.ops.push_back(Add(E("z1"), "u/email", Value::String("dup@x")));
    bad.ops.push_back(Add(E("z2"), "u/email", Value::String("dup@x")));
    bad.ops.push_back(Add(E("z2"), "u/name", Value::String("z2")));
    input.push_back(bad);

    TempDir transacted_dir, imported_dir;
    auto transacted = *Store::Open(transacted_dir.path());
    for (size_t i = 0; i < fail_at; ++i) {
      REQUIRE(transacted->Transact(input[i]).get().ok());
    }
    REQUIRE_FALSE(transacted->Transact(bad).get().ok());

    auto imported = *Store::Open(imported_dir.path());
    ImportOptions options;
    options.chunk_keys = 300;
    VectorImportSource source(input);
    auto report = imported->Import(&source, options);
    REQUIRE_FALSE(report.ok());
    CHECK(std::string(report.status().message())
              .find("import transaction " + std::to_string(fail_at)) !=
          std::string::npos);
    CHECK(Dump(*imported) == Dump(*transacted));
  }
}

}  // namespace
}  // namespace mentat::storage
