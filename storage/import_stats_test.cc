// The statistics an import leaves must be those the same transactions
// leave when transacted, in particular the distinct values of untracked
// attributes, which an import counts per chunk (ImportDistinct) and not
// per transaction; and lookup refs an import resolves must follow
// changes of the unique values they name.

#include <doctest/doctest.h>

#include <map>
#include <string>

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
using testing::VectorImportSource;

constexpr int64_t kStart = int64_t{1735689600} * 1000000;

class Transactions {
 public:
  explicit Transactions(int64_t start) : instant_(start) {}
  void Tx(std::vector<TxOp> ops) {
    ops.push_back(Add(EntityRef::TxTempId(), "db/txInstant",
                      Value::Instant(instant_ += 1000000)));
    txs.push_back(TxRequest{std::move(ops)});
  }
  std::vector<TxRequest> txs;

 private:
  int64_t instant_;
};

EntityRef ByEmail(const std::string& email) {
  return EntityRef::LookupRef("p/email", Value::String(email));
}

// Before the import: :p/tag untracked (more than 3 values), with values
// held by one and by two entities; :p/code tracked (2 values).
std::vector<TxRequest> Existing() {
  Transactions t(kStart);
  std::vector<TxOp> schema;
  for (auto part :
       {Attr("p/email", "db.type/string", false, "db.unique/identity"),
        Attr("p/tag", "db.type/string"), Attr("p/code", "db.type/long"),
        Attr("p/friend", "db.type/ref")}) {
    schema.insert(schema.end(), part.begin(), part.end());
  }
  t.Tx(schema);
  std::vector<TxOp> people;
  for (int i = 0; i < 20; ++i) {
    const std::string p = "p" + std::to_string(i);
    people.push_back(Add(E(p.c_str()), "p/email",
                         Value::String("e" + std::to_string(i) + "@x")));
    people.push_back(
        Add(E(p.c_str()), "p/tag", Value::String("t" + std::to_string(i / 2))));
    people.push_back(Add(E(p.c_str()), "p/code", Value::Long(i % 2)));
  }
  t.Tx(people);
  return t.txs;
}

// The import: new values, values the store holds already, values whose
// last holder goes (by retraction and by a cardinality-one replacement),
// a value dropped and taken up again, :p/code passing the tracking limit
// in the middle, and an email moving to another entity while lookup refs
// name it.
std::vector<TxRequest> Imported() {
  Transactions t(kStart + int64_t{1000} * 1000000);
  for (int b = 0; b < 12; ++b) {
    std::vector<TxOp> ops;
    for (int i = 0; i < 10; ++i) {
      const int n = b * 10 + i;
      const std::string q = "q" + std::to_string(n);
      ops.push_back(Add(E(q.c_str()), "p/email",
                        Value::String("f" + std::to_string(n) + "@x")));
      // New values repeated across transactions and chunks, and t0, t3, t6
      // (held before the import).
      ops.push_back(Add(E(q.c_str()), "p/tag",
                        Value::String(n % 3 ? "n" + std::to_string(n % 17)
                                            : "t" + std::to_string(n % 9))));
      ops.push_back(Add(E(q.c_str()), "p/code", Value::Long(n / 20)));
      ops.push_back(AddRef(E(q.c_str()), "p/friend",
                           ByEmail("e" + std::to_string(n % 20) + "@x")));
    }
    t.Tx(ops);
    if (b == 2) {
      // Values the import creates with two holders each, whose holders go
      // one at a time in later chunks, the group's first key first (pair-a)
      // or last (pair-b): pair-a ends with no holder, pair-b with one.
      std::vector<TxOp> pairs;
      for (int r = 1; r <= 4; ++r) {
        const std::string id = "r" + std::to_string(r);
        pairs.push_back(
            Add(E(id.c_str()), "p/email", Value::String(id + "@x")));
        pairs.push_back(Add(E(id.c_str()), "p/tag",
                            Value::String(r <= 2 ? "pair-a" : "pair-b")));
      }
      t.Tx(pairs);
    }
    if (b == 6) {
      t.Tx({Retract(ByEmail("r1@x"), "p/tag", Value::String("pair-a")),
            Retract(ByEmail("r4@x"), "p/tag", Value::String("pair-b"))});
    }
    if (b == 9) {
      t.Tx({Retract(ByEmail("r2@x"), "p/tag", Value::String("pair-a"))});
    }
    if (b == 3) {
      // t9 loses both holders; e4's t2 is replaced by a new value.
      t.Tx({Retract(ByEmail("e18@x"), "p/tag", Value::String("t9")),
            Retract(ByEmail("e19@x"), "p/tag", Value::String("t9")),
            Add(ByEmail("e4@x"), "p/tag", Value::String("moved"))});
    }
    if (b == 5) {
      // n16 goes (q16 is its only holder so far) and comes back later; e7
      // takes a new email and a newcomer takes e7's old one.
      t.Tx({Retract(ByEmail("f16@x"), "p/tag", Value::String("n16")),
            Add(ByEmail("e7@x"), "p/email", Value::String("e7-new@x"))});
      t.Tx({Add(E("late"), "p/email", Value::String("e7@x")),
            AddRef(E("late"), "p/friend", ByEmail("e7-new@x"))});
    }
    if (b == 8) {
      t.Tx({Add(ByEmail("f1@x"), "p/tag", Value::String("n16")),
            AddRef(ByEmail("f2@x"), "p/friend", ByEmail("e7@x"))});
    }
  }
  return t.txs;
}

// Every key and value of every column family (the statistics' meta keys
// included).
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

TEST_CASE("an import into a store with values keeps statistics exact") {
  StoreOptions store_options;
  store_options.low_cardinality_limit = 3;
  TempDir transacted_dir;
  auto transacted = *Store::Open(transacted_dir.path(), store_options);
  for (auto part : {Existing(), Imported()}) {
    for (const TxRequest& r : part) {
      auto report = transacted->Transact(r).get();
      REQUIRE_MESSAGE(report.ok(), report.status().ToString());
    }
  }
  const auto want = Dump(*transacted);
  const auto& want_stats = transacted->Latest()->stats();
  const EntityId tag =
      transacted->Latest()->schema().FindAttribute("p/tag")->id;
  const EntityId code =
      transacted->Latest()->schema().FindAttribute("p/code")->id;
  // What the transactions leave, to know the test covers its cases.
  REQUIRE(!want_stats.Find(tag)->values_tracked);
  REQUIRE(!want_stats.Find(code)->values_tracked);
  // t0..t8, n0..n16 (n16 back), moved, pair-b.
  CHECK(want_stats.Find(tag)->distinct_values == 9 + 17 + 1 + 1);

  for (size_t chunk_keys : {size_t{40}, size_t{300}, size_t{4000000}}) {
    for (size_t filter_bytes : {size_t{0}, size_t{64}, size_t{1} << 20}) {
      CAPTURE(chunk_keys);
      CAPTURE(filter_bytes);
      TempDir dir;
      auto imported = *Store::Open(dir.path(), store_options);
      for (const TxRequest& r : Existing()) {
        REQUIRE(imported->Transact(r).get().ok());
      }
      ImportOptions options;
      options.chunk_keys = chunk_keys;
      options.filter_bytes = filter_bytes;
      VectorImportSource source(Imported());
      auto report = imported->Import(&source, options);
      REQUIRE_MESSAGE(report.ok(), report.status().ToString());
      CHECK((chunk_keys > 10000 ? report->chunks == 1 : report->chunks > 3));
      for (const auto& [a, st] : want_stats.all()) {
        CAPTURE(a);
        const AttributeStats* got = imported->Latest()->stats().Find(a);
        REQUIRE(got != nullptr);
        CHECK(got->datoms == st->datoms);
        CHECK(got->distinct_values == st->distinct_values);
        CHECK(got->values_tracked == st->values_tracked);
      }
      CHECK(Dump(*imported) == want);
      // And as read back from meta.
      imported.reset();
      imported = *Store::Open(dir.path(), store_options);
      CHECK(imported->Latest()->stats().Find(tag)->distinct_values ==
            want_stats.Find(tag)->distinct_values);
    }
  }
}

}  // namespace
}  // namespace mentat::storage
