// A model test of the column cache under writes: random commits (adds,
// retractions, cardinality-one replacements, several in one transaction)
// go to a store with columns and to one without, and reads at random
// bases (current, as_of, and Dbs kept from earlier commits) must find the
// same datoms through the columns' versions (base plus delta, folded
// often) as RocksDB gives: every order, every kind of seek, entity
// columns too.

#include <doctest/doctest.h>

#include <algorithm>
#include <future>
#include <random>

#include "mentat/base/str_cat.h"
#include "mentat/storage/entity_column.h"
#include "mentat/storage/store.h"
#include "test_support.h"

namespace mentat::storage {
namespace {

using testing::Add;
using testing::Attr;
using testing::E;
using testing::Retract;
using testing::TempDir;
using testing::Tx;

std::string Show(const Datom& d) {
  return StrCat(d.e, " ", d.a, " ", d.v.DebugString(), " ", d.tx, " ", d.added);
}

// What `view` holds of `attr` in AEVT and AVET, read every way a query
// reads: whole scans, keys only, seeks to entities and values (forward
// and back, as joins and range scans jump), and seeks within a prefix.
std::vector<std::string> ReadAll(const DbView& view, EntityId attr,
                                 const std::vector<EntityId>& entities,
                                 const std::vector<Value>& values) {
  std::vector<std::string> out;
  auto dump = [&](DatomCursor& cursor, std::string_view what) {
    for (; cursor.Valid(); cursor.Next()) {
      out.push_back(StrCat(what, " ", Show(cursor.datom())));
    }
    REQUIRE(cursor.status().ok());
  };
  std::string prefix, target;
  for (IndexOrder order : {IndexOrder::kAevt, IndexOrder::kAvet}) {
    const std::string name(IndexOrderName(order));
    auto cursor = view.NewCursor(order);
    prefix.clear();
    AevtKey::EncodePrefix(attr, &prefix);  // the same bytes in AVET
    cursor->Seek(prefix);
    dump(*cursor, name);
    cursor->SetKeysOnly(true);
    size_t keys = 0;
    std::string last;
    for (cursor->Seek(prefix); cursor->Valid(); cursor->Next()) {
      CHECK(std::string(cursor->key()) > last);
      last = cursor->key();
      ++keys;
    }
    out.push_back(StrCat(name, " keys ", keys));
    cursor->SetKeysOnly(false);
    if (order == IndexOrder::kAevt) {
      for (const EntityId e : entities) {
        target.clear();
        AevtKey::EncodePrefix(attr, e, &target);
        cursor->Seek(target);
        dump(*cursor, StrCat(name, " e ", e));
        cursor->Seek(prefix);
        cursor->SeekWithin(target);
        if (cursor->Valid())
          out.push_back(StrCat("within ", Show(cursor->datom())));
      }
    } else {
      for (const Value& v : values) {
        target.clear();
        AvetKey::EncodePrefix(attr, v, &target);
        cursor->Seek(target);
        dump(*cursor, StrCat(name, " v ", v.DebugString()));
        cursor->Seek(prefix);
        cursor->SeekWithin(target);
        // A range from the value on, one step of it.
        if (cursor->Valid())
          out.push_back(StrCat("from ", Show(cursor->datom())));
      }
    }
  }
  return out;
}

// The datoms of each entity (ascending) through the view's entity column,
// as a join reads them; empty if the view has no column of `attr`.
std::vector<std::string> ReadEntityColumn(const DbView& view, EntityId attr,
                                          std::vector<EntityId> entities) {
  std::vector<std::string> out;
  std::shared_ptr<const EntityColumn> column = view.EntityColumnOf(attr);
  if (column == nullptr) return out;
  std::sort(entities.begin(), entities.end());
  size_t pos = 0;
  EntityColumn::ChangePos change;
  std::vector<Datom> changed;
  for (const EntityId e : entities) {
    pos = column->Seek(e, pos);
    if (column->has_changes() && column->Changed(e, &change)) {
      REQUIRE(column->ReadChanged(e, pos, change, &changed).ok());
      for (const Datom& d : changed) out.push_back(Show(d));
      continue;
    }
    for (size_t i = pos; i < column->size() && column->entity(i) == e; ++i) {
      Datom d;
      REQUIRE(column->Read(i, false, &d).ok());
      out.push_back(Show(d));
    }
  }
  return out;
}

std::vector<std::string> ReadEntities(const DbView& view, EntityId attr,
                                      std::vector<EntityId> entities) {
  std::vector<std::string> out;
  std::sort(entities.begin(), entities.end());
  for (const EntityId e : entities) {
    std::string prefix;
    AevtKey::EncodePrefix(attr, e, &prefix);
    auto datoms = view.Datoms(IndexOrder::kAevt, prefix);
    REQUIRE(datoms.ok());
    for (const Datom& d : *datoms) out.push_back(Show(d));
  }
  return out;
}

TEST_CASE("columns under random commits read as RocksDB at every basis") {
  TempDir plain_dir, column_dir;
  StoreOptions plain_options;
  plain_options.column_cache_bytes = 0;
  StoreOptions column_options;
  column_options.column_build_after_rows = 1;
  // Folds every few commits: reads cross many bases and deltas.
  column_options.column_fold_min_keys = 24;
  auto plain = *Store::Open(plain_dir.path(), plain_options);
  auto columns = *Store::Open(column_dir.path(), column_options);
  std::mt19937 rng(20240518);
  auto pick = [&](int n) {
    return std::uniform_int_distribution<int>(0, n - 1)(rng);
  };

  struct Basis2 {
    std::shared_ptr<const Db> plain, columns;
  };
  std::vector<Basis2> kept;
  std::vector<EntityId> txs;
  auto both = [&](const std::vector<TxOp>& ops) {
    auto a = plain->Transact(Tx(ops)).get();
    auto b = columns->Transact(Tx(ops)).get();
    REQUIRE(a.ok() == b.ok());
    if (!a.ok()) return a;
    REQUIRE(a->tx == b->tx);
    txs.push_back(a->tx);
    kept.push_back({plain->Latest(), columns->Latest()});
    return a;
  };
  std::vector<TxOp> schema;
  for (auto attr :
       {Attr("m/one", "db.type/long"), Attr("m/many", "db.type/long", true),
        Attr("m/name", "db.type/string")}) {
    schema.insert(schema.end(), attr.begin(), attr.end());
  }
  REQUIRE(both(schema).ok());
  std::vector<TxOp> first;
  for (int i = 0; i < 60; ++i) {
    const std::string tempid = StrCat("e", i);
    first.push_back(Add(E(tempid.c_str()), "m/one", Value::Long(i % 7)));
    first.push_back(
        Add(E(tempid.c_str()), "m/name", Value::String(StrCat("n", i % 9))));
    if (i % 3 == 0) {
      first.push_back(Add(E(tempid.c_str()), "m/many", Value::Long(i % 5)));
    }
  }
  auto created = both(first);
  REQUIRE(created.ok());
  std::vector<EntityId> entities;
  for (int i = 0; i < 60; ++i) {
    entities.push_back(created->tempids.at(StrCat("e", i)));
  }
  const Schema& s = columns->Latest()->schema();
  const std::vector<EntityId> attrs = {s.FindAttribute("m/one")->id,
                                       s.FindAttribute("m/many")->id,
                                       s.FindAttribute("m/name")->id};
  std::vector<Value> values;
  for (int i = -1; i < 10; ++i) values.push_back(Value::Long(i));
  for (int i = 0; i < 10; ++i) values.push_back(Value::String(StrCat("n", i)));
  const char* names[] = {"m/one", "m/many", "m/name"};

  // Reads queue every column; the first few rounds race their builds.
  for (const EntityId attr : attrs) {
    ReadAll(columns->Latest()->View(Basis::Current()), attr, {}, {});
    columns->Latest()
        ->View(Basis::Current())
        .NoteColumnDemand(IndexOrder::kAevt, attr, 1000);
  }

  auto random_op = [&]() -> TxOp {
    const EntityId e = entities[pick(static_cast<int>(entities.size()))];
    switch (pick(6)) {
      case 0:  // a cardinality-one replacement
        return Add(E(e), "m/one", Value::Long(pick(8)));
      case 1:
        return Retract(E(e), "m/one", Value::Long(pick(8)));
      case 2:
        return Add(E(e), "m/many", Value::Long(pick(6)));
      case 3:
        return Retract(E(e), "m/many", Value::Long(pick(6)));
      case 4:
        return Add(E(e), "m/name", Value::String(StrCat("n", pick(10))));
      default:
        return Retract(E(e), "m/name", Value::String(StrCat("n", pick(10))));
    }
  };

  for (int round = 0; round < 250; ++round) {
    CAPTURE(round);
    std::vector<TxOp> ops;
    const int n = pick(4) == 0 ? 1 + pick(6) : 1;
    for (int i = 0; i < n; ++i) ops.push_back(random_op());
    // Conflicting ops (two values of m/one for one entity) fail on both;
    // `both` has checked that both stores agree, which is all this needs.
    both(ops).IgnoreError();
    if (pick(4) == 0) columns->WaitForColumns();

    // The sample of entities and values a read seeks.
    std::vector<EntityId> some;
    for (int i = 0; i < 6; ++i) {
      some.push_back(entities[pick(static_cast<int>(entities.size()))]);
    }
    some.push_back(entities.front() - 1);  // before every entity
    some.push_back(entities.back() + 1);   // after every entity
    std::vector<Value> some_values;
    for (int i = 0; i < 4; ++i) {
      some_values.push_back(values[pick(static_cast<int>(values.size()))]);
    }
    const Basis2& old = kept[pick(static_cast<int>(kept.size()))];
    const EntityId t = txs[pick(static_cast<int>(txs.size()))];
    for (size_t a = 0; a < attrs.size(); ++a) {
      CAPTURE(names[a]);
      const EntityId attr = attrs[a];
      const std::vector<std::pair<DbView, DbView>> views = {
          {plain->Latest()->View(Basis::Current()),
           columns->Latest()->View(Basis::Current())},
          {plain->Latest()->View(Basis::AsOf(t)),
           columns->Latest()->View(Basis::AsOf(t))},
          {old.plain->View(Basis::Current()),
           old.columns->View(Basis::Current())},
      };
      for (const auto& [truth, view] : views) {
        CHECK(ReadAll(view, attr, some, some_values) ==
              ReadAll(truth, attr, some, some_values));
        std::vector<std::string> through = ReadEntityColumn(view, attr, some);
        if (!through.empty() || view.EntityColumnOf(attr) != nullptr) {
          CHECK(through == ReadEntities(truth, attr, some));
        }
      }
    }
  }
  columns->WaitForColumns();
  const CacheCounters c = columns->column_cache_counters();
  CHECK(c.misses >= 6);  // every attribute, both orders
  CHECK(c.folds > 0);
  CHECK(c.hits > 0);
}

// A group commit of several transactions makes one version of a column,
// as of its last transaction: an as_of read at a transaction inside the
// group must not see the group's later transactions (it reads RocksDB).
TEST_CASE("as_of inside a group commit reads exactly its transaction") {
  TempDir plain_dir, column_dir;
  StoreOptions plain_options;
  plain_options.column_cache_bytes = 0;
  StoreOptions column_options;
  column_options.column_build_after_rows = 1;
  auto plain = *Store::Open(plain_dir.path(), plain_options);
  auto columns = *Store::Open(column_dir.path(), column_options);
  auto both = [&](const std::vector<TxOp>& ops) {
    auto a = plain->Transact(Tx(ops)).get();
    auto b = columns->Transact(Tx(ops)).get();
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    REQUIRE(a->tx == b->tx);
    return *b;
  };
  both(Attr("m/one", "db.type/long"));
  std::vector<TxOp> first;
  for (int i = 0; i < 20; ++i) {
    first.push_back(Add(E(StrCat("e", i).c_str()), "m/one", Value::Long(i)));
  }
  const TxReport created = both(first);
  std::vector<EntityId> entities;
  for (int i = 0; i < 20; ++i) {
    entities.push_back(created.tempids.at(StrCat("e", i)));
  }
  const EntityId attr = columns->Latest()->schema().FindAttribute("m/one")->id;
  columns->Latest()
      ->View(Basis::Current())
      .NoteColumnDemand(IndexOrder::kAevt, attr, 1000);
  columns->Latest()
      ->View(Basis::Current())
      .NoteColumnDemand(IndexOrder::kAvet, attr, 1000);
  columns->WaitForColumns();
  REQUIRE(columns->Latest()->View(Basis::Current()).EntityColumnOf(attr) !=
          nullptr);

  // Transactions submitted without waiting queue up behind the one being
  // written, and the transactor takes them as one group. Each changes one
  // entity's value, so every transaction's basis reads differently.
  std::vector<EntityId> txs;
  int64_t value = 100;
  for (int attempt = 0;
       attempt < 50 && columns->transactor_counters().largest_group < 2;
       ++attempt) {
    std::vector<std::vector<TxOp>> batch;
    std::vector<std::future<absl::StatusOr<TxReport>>> pending;
    for (int i = 0; i < 16; ++i) {
      batch.push_back(
          {Add(E(entities[static_cast<size_t>(value) % entities.size()]),
               "m/one", Value::Long(value))});
      ++value;
      pending.push_back(columns->Transact(Tx(batch.back())));
    }
    for (size_t i = 0; i < batch.size(); ++i) {
      auto b = pending[i].get();
      REQUIRE(b.ok());
      auto a = plain->Transact(Tx(batch[i])).get();
      REQUIRE(a.ok());
      REQUIRE(a->tx == b->tx);
      txs.push_back(b->tx);
    }
  }
  REQUIRE(columns->transactor_counters().largest_group >= 2);
  for (const EntityId t : txs) {
    CAPTURE(t);
    const DbView truth = plain->Latest()->View(Basis::AsOf(t));
    const DbView view = columns->Latest()->View(Basis::AsOf(t));
    CHECK(ReadAll(view, attr, entities, {Value::Long(3), Value::Long(150)}) ==
          ReadAll(truth, attr, entities, {Value::Long(3), Value::Long(150)}));
    std::vector<std::string> through = ReadEntityColumn(view, attr, entities);
    if (view.EntityColumnOf(attr) != nullptr) {
      CHECK(through == ReadEntities(truth, attr, entities));
    }
  }
}

}  // namespace
}  // namespace mentat::storage
