// System attributes (idents in the mentat.* namespace): only ops marked
// TxOp::system define, change or write them; other ops may read them.

#include <doctest/doctest.h>

#include "mentat/storage/keys.h"
#include "mentat/storage/schema.h"
#include "mentat/storage/store.h"
#include "test_support.h"

namespace mentat::storage {
namespace {

using testing::Add;
using testing::Attr;
using testing::E;
using testing::Kw;
using testing::RetractEntity;
using testing::TempDir;
using testing::Tx;

std::vector<TxOp> AsSystem(std::vector<TxOp> ops) {
  for (TxOp& op : ops) op.system = true;
  return ops;
}

[[nodiscard]] absl::Status Run(Store& store, std::vector<TxOp> ops) {
  return store.Transact(Tx(std::move(ops))).get().status();
}

// `ops` must be refused with InvalidArgument naming `what`.
void CheckRefused(Store& store, std::vector<TxOp> ops,
                  const std::string& what) {
  absl::Status s = Run(store, std::move(ops));
  CHECK_MESSAGE(s.code() == absl::StatusCode::kInvalidArgument, s.ToString());
  CHECK_MESSAGE(s.message().find(what) != std::string::npos, s.ToString());
}

TEST_CASE("bootstrap idents added later are known to older stores") {
  // A store bootstrapped before :db.type/uri existed has no datoms for it;
  // its schema still resolves the ident (and so tx-data can declare such
  // an attribute).
  std::vector<Datom> old;
  for (const Datom& d : Schema::BootstrapDatoms(kFirstTxId)) {
    if (d.e != ids::kDbTypeUri && d.e != ids::kDbTypeSymbol) old.push_back(d);
  }
  auto schema = Schema::FromDatoms(old);
  REQUIRE(schema.ok());
  CHECK((*schema)->EntityForIdent("db.type/uri") == ids::kDbTypeUri);
  CHECK((*schema)->EntityForIdent("db.type/symbol") == ids::kDbTypeSymbol);
  REQUIRE((*schema)->IdentForEntity(ids::kDbTypeUri) != nullptr);
  CHECK(*(*schema)->IdentForEntity(ids::kDbTypeUri) == "db.type/uri");
  CHECK(IsValueTypeEntity(ids::kDbTypeUri));
  CHECK(IsValueTypeEntity(ids::kDbTypeSymbol));
  CHECK_FALSE(IsValueTypeEntity(ids::kDbCardinalityOne));
}

TEST_CASE("uri and symbol attributes: values, order, bad values") {
  TempDir dir;
  auto opened = Store::Open(dir.path());
  REQUIRE(opened.ok());
  Store& store = **opened;
  std::vector<TxOp> schema =
      Attr("w/uri", "db.type/uri", false, "db.unique/identity");
  for (TxOp& op : Attr("w/sym", "db.type/symbol")) {
    schema.push_back(std::move(op));
  }
  REQUIRE(Run(store, std::move(schema)).ok());
  REQUIRE(Run(store, {Add(E("a"), "w/uri", Value::Uri("urn:isbn:0451450523")),
                      Add(E("a"), "w/sym", Value::Symbol("ns/x")),
                      Add(E("b"), "w/uri", Value::Uri("../rel"))})
              .ok());
  auto db = store.Latest();
  const Attribute* uri = db->schema().FindAttribute("w/uri");
  REQUIRE(uri != nullptr);
  CHECK(uri->type == ValueType::kUri);
  REQUIRE(db->schema().FindAttribute("w/sym") != nullptr);
  CHECK(db->schema().FindAttribute("w/sym")->type == ValueType::kSymbol);
  // AVET order is the byte order of the text.
  std::string prefix;
  AvetKey::EncodePrefix(uri->id, &prefix);
  DbView view = db->View(Basis::Current());
  auto seen = view.Datoms(IndexOrder::kAvet, prefix);
  REQUIRE(seen.ok());
  REQUIRE(seen->size() == 2);
  CHECK((*seen)[0].v == Value::Uri("../rel"));
  CHECK((*seen)[1].v == Value::Uri("urn:isbn:0451450523"));
  auto found = view.LookupUnique(uri->id, Value::Uri("../rel"));
  REQUIRE(found.ok());
  CHECK(found->has_value());
  // A string is not a uri, a keyword not a symbol.
  CheckRefused(store, {Add(E("c"), "w/uri", Value::String("../rel"))},
               ":w/uri takes :db.type/uri");
  CheckRefused(store, {Add(E("c"), "w/sym", Value::Keyword("ns/x"))},
               ":w/sym takes :db.type/symbol");
}

TEST_CASE("system idents: the mentat namespace and its subspaces") {
  CHECK(IsSystemIdent("mentat/x"));
  CHECK(IsSystemIdent("mentat.tx/request-id"));
  CHECK(IsSystemIdent("mentat.a.b/c"));
  CHECK_FALSE(IsSystemIdent("mentatd/x"));
  CHECK_FALSE(IsSystemIdent("mentatx.tx/x"));
  CHECK_FALSE(IsSystemIdent("user/mentat"));
  CHECK_FALSE(IsSystemIdent("mentat"));
}

TEST_CASE("system attributes: only system ops write them") {
  TempDir dir;
  auto store = *Store::Open(dir.path());
  REQUIRE(Run(*store, Attr("user/name", "db.type/string")).ok());
  // Defining one takes system ops.
  CheckRefused(*store, Attr("mentat.tx/note", "db.type/string"),
               "ident :mentat.tx/note is in the system namespace");
  REQUIRE(Run(*store, AsSystem(Attr("mentat.tx/note", "db.type/string"))).ok());
  std::shared_ptr<const Db> db = store->Latest();
  const Attribute* note = db->schema().FindAttribute("mentat.tx/note");
  REQUIRE(note != nullptr);
  CHECK(note->system);
  CHECK_FALSE(db->schema().FindAttribute("user/name")->system);
  const EntityId note_id = note->id;

  // Writing it.
  const TxOp write =
      Add(EntityRef::TxTempId(), "mentat.tx/note", Value::String("n-1"));
  CheckRefused(*store, {write}, ":mentat.tx/note is a system attribute");
  auto r = store->Transact(Tx(AsSystem({write}))).get();
  REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  const EntityId tx = r->tx;
  CheckRefused(*store, {Add(E(tx), "mentat.tx/note", Value::String("n-2"))},
               ":mentat.tx/note is a system attribute");
  TxOp retract = Add(E(tx), "mentat.tx/note", Value::String("n-1"));
  retract.kind = TxOp::Kind::kRetract;
  CheckRefused(*store, {retract}, ":mentat.tx/note is a system attribute");
  CheckRefused(*store, {RetractEntity(E(tx))},
               ":mentat.tx/note is a system attribute");

  // Changing its schema, renaming it, renaming another attribute into the
  // namespace.
  CheckRefused(*store,
               {Add(Kw("mentat.tx/note"), "db/doc", Value::String("d"))},
               "whose schema tx-data cannot change");
  CheckRefused(*store,
               {Add(Kw("mentat.tx/note"), "db/ident", Value::Keyword("x/y"))},
               ":mentat.tx/note is a system attribute");
  CheckRefused(*store, {RetractEntity(Kw("mentat.tx/note"))},
               ":mentat.tx/note is a system attribute");
  CheckRefused(
      *store, {Add(Kw("user/name"), "db/ident", Value::Keyword("mentat/name"))},
      "ident :mentat/name is in the system namespace");

  // Nothing refused changed anything; reading stays open to everyone.
  DbView view = store->Latest()->View(Basis::Current());
  std::string prefix;
  AvetKey::EncodePrefix(note_id, &prefix);
  auto datoms = view.Datoms(IndexOrder::kAvet, prefix);
  REQUIRE(datoms.ok());
  REQUIRE(datoms->size() == 1);
  CHECK((*datoms)[0].e == tx);
  CHECK((*datoms)[0].v == Value::String("n-1"));
}

}  // namespace
}  // namespace mentat::storage
