// Property test: random transaction sequences applied by the transactor
// give the same current state and the same as_of states as a simple
// in-memory model of Datomic's semantics.

#include <doctest/doctest.h>

#include <map>
#include <random>
#include <set>

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
using testing::Tx;

// (e, attribute ident, value) as the model keeps it.
using ModelDatom = std::tuple<EntityId, std::string, Value>;
using ModelState = std::set<ModelDatom>;

struct Model {
  ModelState state;
  std::map<std::string, EntityId> by_key;  // :m/key (unique identity)

  std::vector<Value> Values(EntityId e, const std::string& a) const {
    std::vector<Value> out;
    for (auto it = state.lower_bound({e, a, Value::Long(INT64_MIN)});
         it != state.end() && std::get<0>(*it) == e && std::get<1>(*it) == a;
         ++it) {
      out.push_back(std::get<2>(*it));
    }
    return out;
  }
  void SetOne(EntityId e, const std::string& a, const Value& v) {
    for (const Value& old : Values(e, a)) state.erase({e, a, old});
    state.insert({e, a, v});
  }
};

const char* kAttrs[] = {"m/one", "m/many", "m/ref", "m/key"};

// Reads the whole state of `entities` at `view` through EAVT, and checks
// that AEVT, AVET and VAET hold exactly the same datoms.
ModelState ReadState(const DbView& view,
                     const std::vector<EntityId>& entities) {
  ModelState out;
  const Schema& schema = view.schema();
  for (EntityId e : entities) {
    std::string prefix;
    EavtKey::EncodePrefix(e, &prefix);
    auto datoms = view.Datoms(IndexOrder::kEavt, prefix);
    REQUIRE(datoms.ok());
    for (const Datom& d : *datoms) {
      out.insert({d.e, schema.FindAttribute(d.a)->ident, d.v});
    }
  }
  for (const char* ident : kAttrs) {
    const Attribute* attr = schema.FindAttribute(ident);
    std::string prefix;
    AevtKey::EncodePrefix(attr->id, &prefix);
    auto aevt = view.Datoms(IndexOrder::kAevt, prefix);
    prefix.clear();
    AvetKey::EncodePrefix(attr->id, &prefix);
    auto avet = view.Datoms(IndexOrder::kAvet, prefix);
    REQUIRE(aevt.ok());
    REQUIRE(avet.ok());
    ModelState from_aevt, from_avet, from_eavt;
    for (const Datom& d : *aevt) from_aevt.insert({d.e, ident, d.v});
    for (const Datom& d : *avet) from_avet.insert({d.e, ident, d.v});
    for (const auto& md : out) {
      if (std::get<1>(md) == ident) from_eavt.insert(md);
    }
    CHECK(from_aevt == from_eavt);
    CHECK(from_avet == from_eavt);
    if (attr->is_ref()) {
      size_t vaet_count = 0;
      std::set<EntityId> targets;
      for (const auto& md : from_eavt) targets.insert(std::get<2>(md).as_ref());
      for (EntityId t : targets) {
        prefix.clear();
        VaetKey::EncodePrefix(t, attr->id, &prefix);
        auto vaet = view.Datoms(IndexOrder::kVaet, prefix);
        REQUIRE(vaet.ok());
        vaet_count += vaet->size();
      }
      CHECK(vaet_count == from_eavt.size());
    }
  }
  return out;
}

void RunModel(uint32_t seed) {
  CAPTURE(seed);
  std::mt19937 rng(seed);
  auto pick = [&](int n) {
    return std::uniform_int_distribution<int>(0, n - 1)(rng);
  };
  TempDir dir;
  // Odd seeds read since() by filtering the current indexes, even seeds
  // through the index built from the log.
  StoreOptions options;
  if (seed % 2 == 1) options.since_log_limit = 0;
  auto store = *Store::Open(dir.path(), options);
  std::vector<TxOp> schema;
  for (auto ops :
       {Attr("m/one", "db.type/long"), Attr("m/many", "db.type/long", true),
        Attr("m/ref", "db.type/ref", true),
        Attr("m/key", "db.type/string", false, "db.unique/identity")}) {
    schema.insert(schema.end(), ops.begin(), ops.end());
  }
  REQUIRE(store->Transact(Tx(schema)).get().ok());

  Model model;
  std::vector<EntityId> entities;
  std::vector<std::pair<EntityId, ModelState>> snapshots;
  int next_key = 0;
  std::shared_ptr<const Db> stale;  // an older state, read from now and then
  for (int t = 0; t < 60; ++t) {
    std::vector<TxOp> ops;
    Model next = model;
    // Ops on distinct (e, a) pairs keep the model free of conflicts.
    std::set<std::pair<EntityId, std::string>> touched;
    std::vector<std::string> upserts;  // keys of "new" tempids
    const int n = 1 + pick(6);
    for (int i = 0; i < n; ++i) {
      const int kind = entities.empty() ? 0 : pick(6);
      if (kind == 0) {
        // A new entity by tempid, or an upsert of an existing key.
        std::string key;
        if (!model.by_key.empty() && pick(3) == 0) {
          auto it = model.by_key.begin();
          std::advance(it, pick(static_cast<int>(model.by_key.size())));
          key = it->first;
        } else {
          key = "k" + std::to_string(next_key++);
        }
        if (std::find(upserts.begin(), upserts.end(), key) != upserts.end()) {
          continue;
        }
        auto known = model.by_key.find(key);
        if (known != model.by_key.end() &&
            !touched.insert({known->second, "m/one"}).second) {
          continue;
        }
        upserts.push_back(key);
        std::string tempid = "t-" + key;
        ops.push_back(Add(E(tempid.c_str()), "m/key", Value::String(key)));
        const int64_t v = pick(5);
        ops.push_back(Add(E(tempid.c_str()), "m/one", Value::Long(v)));
        continue;
      }
      const EntityId e = entities[pick(static_cast<int>(entities.size()))];
      const char* a = kAttrs[pick(3)];
      if (!touched.insert({e, a}).second) continue;
      const std::string attr = a;
      if (attr == "m/one") {
        const int64_t v = pick(5);
        ops.push_back(Add(E(e), a, Value::Long(v)));
        next.SetOne(e, attr, Value::Long(v));
      } else if (attr == "m/many") {
        const int64_t v = pick(4);
        if (pick(2) == 0) {
          ops.push_back(Add(E(e), a, Value::Long(v)));
          next.state.insert({e, attr, Value::Long(v)});
        } else {
          ops.push_back(Retract(E(e), a, Value::Long(v)));
          next.state.erase({e, attr, Value::Long(v)});
        }
      } else {
        const EntityId target =
            entities[pick(static_cast<int>(entities.size()))];
        if (pick(2) == 0) {
          ops.push_back(AddRef(E(e), a, E(target)));
          next.state.insert({e, attr, Value::Ref(target)});
        } else {
          ops.push_back(Retract(E(e), a, Value::Ref(target)));
          next.state.erase({e, attr, Value::Ref(target)});
        }
      }
    }
    if (ops.empty()) continue;
    auto report = store->Transact(Tx(ops)).get();
    REQUIRE_MESSAGE(report.ok(), report.status().ToString());
    // Apply the new entities and upserts to the model now that ids are
    // known; an upserted tempid must have resolved to the key's entity.
    for (const std::string& key : upserts) {
      const EntityId e = report->tempids.at("t-" + key);
      auto known = model.by_key.find(key);
      if (known != model.by_key.end()) {
        CHECK(known->second == e);
      } else {
        next.by_key[key] = e;
        entities.push_back(e);
        next.state.insert({e, "m/key", Value::String(key)});
      }
      // The m/one value of this op, read back from the op list.
      for (const TxOp& op : ops) {
        if (op.e.kind == EntityRef::Kind::kTempId && op.e.name == "t-" + key &&
            op.a.name == "m/one") {
          next.SetOne(e, "m/one", op.v.scalar);
        }
      }
    }
    model = std::move(next);
    snapshots.emplace_back(report->tx, model.state);
    if (seed > 6) {
      // Reads between the commits cache entities' records (current ones,
      // whole ones with history as of an earlier basis; a stale
      // snapshot's are refused), so that the transactor's existence
      // checks answer from them too (CommitBatch::Get).
      auto latest = store->Latest();
      for (int r = 0; r < 3; ++r) {
        std::string prefix;
        EavtKey::EncodePrefix(entities[pick(static_cast<int>(entities.size()))],
                              &prefix);
        const Basis basis =
            pick(3) == 0
                ? Basis::AsOf(
                      snapshots[pick(static_cast<int>(snapshots.size()))].first)
                : Basis::Current();
        REQUIRE(latest->View(basis).Datoms(IndexOrder::kEavt, prefix).ok());
        if (stale != nullptr) {
          REQUIRE(stale->View(Basis::Current())
                      .Datoms(IndexOrder::kEavt, prefix)
                      .ok());
        }
      }
      if (stale == nullptr || pick(4) == 0) stale = latest;
    }
  }
  stale.reset();  // the store reopens below

  auto db = store->Latest();
  CHECK(ReadState(db->View(Basis::Current()), entities) == model.state);
  for (const auto& [tx, state] : snapshots) {
    CAPTURE(tx);
    CHECK(ReadState(db->View(Basis::AsOf(tx)), entities) == state);
  }
  // since(t): the current datoms asserted after t, whether the view is
  // built from the log or by filtering the current indexes.
  std::vector<Datom> current;
  for (EntityId e : entities) {
    std::string prefix;
    EavtKey::EncodePrefix(e, &prefix);
    auto datoms = db->View(Basis::Current()).Datoms(IndexOrder::kEavt, prefix);
    REQUIRE(datoms.ok());
    current.insert(current.end(), datoms->begin(), datoms->end());
  }
  for (size_t i = 0; i < snapshots.size(); i += 7) {
    const EntityId t = snapshots[i].first;
    ModelState expected;
    for (const Datom& d : current) {
      if (d.tx > t)
        expected.insert({d.e, db->schema().FindAttribute(d.a)->ident, d.v});
    }
    CAPTURE(t);
    CHECK(ReadState(db->View(Basis::Since(t)), entities) == expected);
  }

  // History holds every state change: replaying its datoms in tx order
  // rebuilds the current state.
  ModelState replay;
  std::vector<Datom> all;
  for (EntityId e : entities) {
    std::string prefix;
    EavtKey::EncodePrefix(e, &prefix);
    auto datoms = db->View(Basis::History()).Datoms(IndexOrder::kEavt, prefix);
    REQUIRE(datoms.ok());
    all.insert(all.end(), datoms->begin(), datoms->end());
  }
  std::stable_sort(all.begin(), all.end(), [](const Datom& x, const Datom& y) {
    return x.tx < y.tx || (x.tx == y.tx && !x.added && y.added);
  });
  for (const Datom& d : all) {
    ModelDatom md{d.e, db->schema().FindAttribute(d.a)->ident, d.v};
    if (d.added) {
      CHECK(replay.insert(md).second);
    } else {
      CHECK(replay.erase(md) == 1);
    }
  }
  CHECK(replay == model.state);

  // And the same after a reopen.
  db.reset();
  store.reset();
  store = *Store::Open(dir.path(), options);
  db = store->Latest();
  CHECK(ReadState(db->View(Basis::Current()), entities) == model.state);
  const auto& [mid_tx, mid_state] = snapshots[snapshots.size() / 2];
  CHECK(ReadState(db->View(Basis::AsOf(mid_tx)), entities) == mid_state);
}

TEST_CASE("random transactions match the in-memory model, now and as of") {
  for (uint32_t seed = 1; seed <= 12; ++seed) RunModel(seed);
}

}  // namespace
}  // namespace mentat::storage
