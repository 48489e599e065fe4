// Entity resolution (ids, idents, lookup refs) and index ranges from
// components: the functions the server's Pull, PullMany and Datoms call.

#include "mentat/storage/entity_resolution.h"

#include <doctest/doctest.h>

#include "mentat/storage/index_range.h"
#include "mentat/storage/store.h"
#include "test_support.h"

namespace mentat::storage {
namespace {

using testing::Add;
using testing::AddRef;
using testing::Attr;
using testing::E;
using testing::TempDir;
using testing::Tx;

struct Fixture {
  Fixture() {
    store = *Store::Open(dir.path());
    std::vector<TxOp> schema =
        Attr("user/email", "db.type/string", false, "db.unique/identity");
    for (TxOp& op : Attr("user/age", "db.type/long")) schema.push_back(op);
    for (TxOp& op : Attr("user/friend", "db.type/ref", true)) {
      schema.push_back(op);
    }
    REQUIRE(store->Transact(Tx(schema)).get().ok());
    auto r = store
                 ->Transact(Tx({Add(E("a"), "user/email", Value::String("a@x")),
                                Add(E("a"), "user/age", Value::Long(30))}))
                 .get();
    REQUIRE(r.ok());
    alice = r->tempids.at("a");
  }
  DbView View() const { return store->Latest()->View(Basis::Current()); }

  TempDir dir;
  std::unique_ptr<Store> store;
  EntityId alice = 0;
};

TEST_CASE("entity resolution: ids, idents and lookup refs") {
  Fixture f;
  DbView view = f.View();
  CHECK(*EntityOfId(42, "entity") == 42);
  CHECK(EntityOfId(-1, "entity").status().message() ==
        "entity: entity id -1 is negative");

  auto email = view.schema().FindAttribute("user/email");
  CHECK(*EntityOfIdent(view.schema(), ":user/email", "e") == email->id);
  CHECK(*EntityOfIdent(view.schema(), "user/email", "e") == email->id);
  absl::Status missing = EntityOfIdent(view.schema(), ":no/such", "e").status();
  CHECK(missing.code() == absl::StatusCode::kNotFound);
  CHECK(missing.message() == "e: no entity has the ident :no/such");

  auto attr = LookupRefAttribute(view.schema(), ":user/email", "entity");
  REQUIRE(attr.ok());
  CHECK(*EntityOfLookupRef(view, **attr, Value::String("a@x"), "entity") ==
        f.alice);
  absl::Status nobody =
      EntityOfLookupRef(view, **attr, Value::String("b@x"), "entity").status();
  CHECK(nobody.code() == absl::StatusCode::kNotFound);
  CHECK(nobody.message().find(":user/email") != std::string::npos);

  absl::Status not_unique =
      LookupRefAttribute(view.schema(), ":user/age", "entity 2").status();
  CHECK(not_unique.code() == absl::StatusCode::kInvalidArgument);
  CHECK(not_unique.message() ==
        "entity 2: lookup ref on :user/age, which is not :db/unique");
  CHECK(LookupRefAttribute(view.schema(), ":no/such", "x").status().message() ==
        "x: lookup ref on unknown attribute :no/such");

  CHECK((*AttributeOfIdent(view.schema(), ":user/age", "c"))->ident ==
        "user/age");
  CHECK((*AttributeOfId(view.schema(), email->id, "c"))->ident == "user/email");
  CHECK(AttributeOfId(view.schema(), f.alice, "c")
            .status()
            .message()
            .find("is not an attribute") != std::string::npos);
}

TEST_CASE("index ranges: the prefix of each order's components") {
  Fixture f;
  DbView view = f.View();
  const Attribute* age = view.schema().FindAttribute("user/age");
  const Attribute* email = view.schema().FindAttribute("user/email");
  const Attribute* friend_attr = view.schema().FindAttribute("user/friend");

  IndexComponents c;
  CHECK(IndexRangePrefix(IndexOrder::kEavt, c)->empty());

  c.count = 2;
  c.entity = f.alice;
  c.attribute = age;
  std::string expected;
  EavtKey::EncodePrefix(f.alice, age->id, &expected);
  CHECK(*IndexRangePrefix(IndexOrder::kEavt, c) == expected);

  c.count = 2;
  c.attribute = email;
  c.value = Value::String("a@x");
  expected.clear();
  AvetKey::EncodePrefix(email->id, Value::String("a@x"), &expected);
  CHECK(*IndexRangePrefix(IndexOrder::kAvet, c) == expected);
  // The range finds the datom.
  auto datoms = view.Datoms(IndexOrder::kAvet, expected);
  REQUIRE(datoms.ok());
  REQUIRE(datoms->size() == 1);
  CHECK((*datoms)[0].e == f.alice);

  CHECK(SlotOf(IndexOrder::kVaet, 0) == KeySlot::kRefValue);
  CHECK(SlotOf(IndexOrder::kAvet, 1) == KeySlot::kValue);
  CHECK(SlotOf(IndexOrder::kAevt, 1) == KeySlot::kEntity);
  c.count = 2;
  c.entity_value = f.alice;
  c.attribute = age;
  absl::Status vaet = IndexRangePrefix(IndexOrder::kVaet, c).status();
  CHECK(vaet.code() == absl::StatusCode::kInvalidArgument);
  CHECK(vaet.message().find("VAET holds ref attributes only") !=
        std::string::npos);
  c.attribute = friend_attr;
  CHECK(IndexRangePrefix(IndexOrder::kVaet, c).ok());

  c.count = 4;
  CHECK(IndexRangePrefix(IndexOrder::kEavt, c).status().message() ==
        "at most 3 components, got 4");
  c.count = 1;
  c.attribute = nullptr;
  CHECK(IndexRangePrefix(IndexOrder::kAevt, c).status().code() ==
        absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace mentat::storage
