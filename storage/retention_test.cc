#include <doctest/doctest.h>

#include "mentat/storage/store.h"
#include "test_support.h"

namespace mentat::storage {
namespace {

using testing::Add;
using testing::Attr;
using testing::E;
using testing::TempDir;
using testing::Tx;

constexpr int64_t kDay = int64_t{86400} * 1000000;
constexpr int64_t kNow = int64_t{1764460800} * 1000000;  // 2025-11-30

TxReport At(Store& store, int64_t instant, std::vector<TxOp> ops) {
  ops.push_back(
      Add(EntityRef::TxTempId(), "db/txInstant", Value::Instant(instant)));
  auto r = store.Transact(Tx(std::move(ops))).get();
  REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  return *r;
}

size_t HistoryCount(const DbView& view, EntityId e) {
  std::string prefix;
  EavtKey::EncodePrefix(e, &prefix);
  return view.Datoms(IndexOrder::kEavt, prefix)->size();
}

TEST_CASE("retention drops history retracted before the horizon") {
  TempDir dir;
  StoreOptions options;
  options.history_retention_days = 1;
  auto store = *Store::Open(dir.path(), options);
  auto schema = Attr("r/n", "db.type/long");
  auto keep = Attr("r/kept", "db.type/long");
  schema.insert(schema.end(), keep.begin(), keep.end());
  At(*store, kNow - 20 * kDay, schema);
  TxReport t1 = At(*store, kNow - 10 * kDay,
                   {Add(E("x"), "r/n", Value::Long(1)),
                    Add(E("x"), "r/kept", Value::Long(1))});
  const EntityId x = t1.tempids["x"];
  TxReport t2 = At(
      *store, kNow - 9 * kDay,
      {Add(E(x), "r/n", Value::Long(2)), Add(E(x), "r/kept", Value::Long(2))});
  TxReport t3 = At(*store, kNow - kDay / 2, {Add(E(x), "r/n", Value::Long(3))});

  // Before: history has 3 assertions and 2 retractions of r/n, 2 and 1 of
  // r/kept.
  CHECK(HistoryCount(store->Latest()->View(Basis::History()), x) == 5 + 3);
  SUBCASE("database-wide") {
    REQUIRE(store->ApplyRetention(kNow, /*compact=*/true).ok());
    auto db = store->Latest();
    CHECK(db->history_horizon() == t2.tx);
    // [t1, t2) of both attributes is gone; [t2, t3) of r/n remains.
    CHECK(HistoryCount(db->View(Basis::History()), x) == 8 - 4);
    CHECK(testing::ValuesOf(db->View(Basis::AsOf(t2.tx)), x, "r/n") ==
          std::vector{Value::Long(2)});
    CHECK(db->CheckBasis(Basis::AsOf(t2.tx)).ok());
    CHECK(db->CheckBasis(Basis::AsOf(t1.tx)).code() ==
          absl::StatusCode::kFailedPrecondition);
    // The horizon survives a restart.
    db.reset();
    store.reset();
    store = *Store::Open(dir.path(), options);
    CHECK(store->Latest()->CheckBasis(Basis::AsOf(t1.tx)).code() ==
          absl::StatusCode::kFailedPrecondition);
  }
  SUBCASE("per attribute") {
    store.reset();
    options.history_retention_days = 0;
    options.attribute_retention_days["r/n"] = 1;
    store = *Store::Open(dir.path(), options);
    REQUIRE(store->ApplyRetention(kNow, /*compact=*/true).ok());
    auto db = store->Latest();
    // Only r/n's old interval is dropped; r/kept keeps all of its history.
    CHECK(HistoryCount(db->View(Basis::History()), x) == 8 - 2);
    CHECK(testing::ValuesOf(db->View(Basis::AsOf(t1.tx)), x, "r/kept") ==
          std::vector{Value::Long(1)});
    CHECK(db->CheckBasis(Basis::AsOf(t1.tx)).ok());
  }
  (void)t3;
}

TEST_CASE("retention options naming unknown attributes are refused") {
  TempDir dir;
  StoreOptions options;
  options.attribute_retention_days["no/such"] = 3;
  auto store = *Store::Open(dir.path(), options);
  CHECK(store->ApplyRetention(kNow, false).code() ==
        absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace mentat::storage
