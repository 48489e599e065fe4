#include "mentat/query/pull.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "mentat/base/str_cat.h"
#include "mentat/edn/edn_printer.h"
#include "mentat/edn/edn_reader.h"
#include "testing/store_fixture.h"

namespace mentat::query {
namespace {

using edn::EdnValue;
using storage::Basis;
using storage::DbView;
using storage::EntityId;
using storage::EntityRef;
using storage::Value;
using testing::Add;
using testing::AddRef;
using testing::AttrDef;
using testing::Ent;
using testing::StoreFixture;

EdnValue Edn(std::string_view text) {
  absl::StatusOr<EdnValue> v = edn::ParseEdn(text);
  REQUIRE_MESSAGE(v.ok(), v.status().ToString(), " in ", text);
  return *std::move(v);
}

PullPattern Pattern(std::string_view text) {
  absl::StatusOr<PullPattern> p = ParsePullPattern(Edn(text));
  REQUIRE_MESSAGE(p.ok(), p.status().ToString());
  return *std::move(p);
}

EdnValue MustPull(const DbView& view, std::string_view pattern, EntityId e) {
  absl::StatusOr<EdnValue> v = Pull(view, Pattern(pattern), e);
  REQUIRE_MESSAGE(v.ok(), v.status().ToString());
  return *std::move(v);
}

// Compares as EDN values (map order does not matter) and prints both.
#define CHECK_EDN(actual, expected_text)                            \
  do {                                                              \
    const EdnValue actual_value = (actual);                         \
    const EdnValue expected_value = Edn(expected_text);             \
    CHECK_MESSAGE(actual_value == expected_value,                   \
                  "\n  actual:   ", edn::PrintEdn(actual_value),    \
                  "\n  expected: ", edn::PrintEdn(expected_value)); \
  } while (false)

std::string ValidateError(const DbView& view, std::string_view pattern) {
  absl::Status s = ValidatePullPattern(Pattern(pattern), view.schema());
  REQUIRE_FALSE(s.ok());
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  // Pull reports the same error.
  CHECK(Pull(view, Pattern(pattern), 1).status() == s);
  return std::string(s.message());
}

// The workload schema plus what the pull features need: components, a
// self-referencing graph, an enum-like ref, and an attribute installed
// after the others (so its id sorts after :issue/label's).
struct Data {
  StoreFixture f;
  EntityId tx1 = 0;
  EntityId u1 = 0, u2 = 0, l1 = 0, l2 = 0, l3 = 0, i1 = 0, i2 = 0, c1 = 0,
           c2 = 0, bug = 0;

  Data() {
    REQUIRE(f.open_status().ok());
    REQUIRE(f.InstallWorkloadSchema().ok());
    REQUIRE(f.Install({{"issue/comments", "db.type/ref", true, nullptr, true},
                       {"comment/text", "db.type/string"},
                       {"comment/reply", "db.type/ref", false, nullptr, true},
                       {"issue/kind", "db.type/ref"},
                       {"issue/note", "db.type/string"},
                       {"person/name", "db.type/string"},
                       {"person/friend", "db.type/ref", true},
                       {"person/boss", "db.type/ref"}})
                .ok());
    auto r = f.Transact({Add("bug", "db/ident", Value::Keyword("kind/bug"))});
    REQUIRE(r.ok());
    bug = r->tempids.at("bug");
    r = f.Transact({
        Add("u1", "user/email", Value::String("ann@x")),
        Add("u1", "user/name", Value::String("Ann")),
        Add("u2", "user/email", Value::String("bob@x")),
        Add("u2", "user/name", Value::String("Bob")),
        Add("l1", "label/name", Value::String("bug")),
        Add("l2", "label/name", Value::String("ui")),
        Add("l3", "label/name", Value::String("perf")),
        Add("i1", "issue/title", Value::String("crash")),
        Add("i1", "issue/state", Value::Keyword("state/open")),
        Add("i1", "issue/priority", Value::Long(3)),
        AddRef("i1", "issue/assignee", "u1"),
        AddRef("i1", "issue/reporter", "u2"),
        Add("i1", "issue/created-at", Value::Instant(1700000000000000)),
        AddRef("i1", "issue/label", "l1"),
        AddRef("i1", "issue/label", "l2"),
        AddRef("i1", "issue/label", "l3"),
        AddRef(Ent("i1"), "issue/kind", EntityRef::Ident("kind/bug")),
        AddRef("i1", "issue/comments", "c1"),
        AddRef("i1", "issue/comments", "c2"),
        Add("c1", "comment/text", Value::String("first")),
        Add("c2", "comment/text", Value::String("second")),
        Add("i2", "issue/title", Value::String("slow")),
        AddRef("i2", "issue/assignee", "u1"),
    });
    REQUIRE_MESSAGE(r.ok(), r.status().ToString());
    tx1 = r->tx;
    u1 = r->tempids.at("u1");
    u2 = r->tempids.at("u2");
    i1 = r->tempids.at("i1");
    i2 = r->tempids.at("i2");
    c1 = r->tempids.at("c1");
    c2 = r->tempids.at("c2");
    std::vector<EntityId> labels = {r->tempids.at("l1"), r->tempids.at("l2"),
                                    r->tempids.at("l3")};
    l1 = labels[0], l2 = labels[1], l3 = labels[2];
    // Many-valued refs come in index order, so tests write them sorted.
    std::sort(labels.begin(), labels.end());
    sorted_labels = labels;
  }
  std::vector<EntityId> sorted_labels;
  DbView View() { return f.View(); }
};

std::string Ref(EntityId e) { return StrCat("{:db/id ", e, "}"); }

TEST_CASE("pull: wildcard pulls every attribute, components whole") {
  Data d;
  const DbView view = d.View();
  const auto& ls = d.sorted_labels;
  // c1 says "first", c2 "second"; components come in id order.
  const std::string comments =
      d.c1 < d.c2
          ? StrCat("{:db/id ", d.c1, " :comment/text \"first\"} {:db/id ", d.c2,
                   " :comment/text \"second\"}")
          : StrCat("{:db/id ", d.c2, " :comment/text \"second\"} {:db/id ",
                   d.c1, " :comment/text \"first\"}");
  CHECK_EDN(MustPull(view, "[*]", d.i1),
            StrCat("{:db/id ", d.i1,
                   " :issue/title \"crash\" :issue/state :state/open"
                   " :issue/priority 3 :issue/assignee ",
                   Ref(d.u1), " :issue/reporter ", Ref(d.u2),
                   " :issue/created-at #inst \"2023-11-14T22:13:20Z\"",
                   " :issue/label [", Ref(ls[0]), " ", Ref(ls[1]), " ",
                   Ref(ls[2]), "] :issue/kind {:db/id ", d.bug,
                   " :db/ident :kind/bug} :issue/comments [", comments, "]}"));
  CHECK_EDN(
      MustPull(view, "[*]", d.u1),
      StrCat("{:db/id ", d.u1, " :user/email \"ann@x\" :user/name \"Ann\"}"));
  // Nothing at all for an entity without datoms.
  CHECK_EDN(MustPull(view, "[*]", 999999999), "{}");
  CHECK_EDN(MustPull(view, "[:issue/title]", 999999999), "{}");
}

TEST_CASE("pull: explicit attributes, :db/id and missing attributes") {
  Data d;
  const DbView view = d.View();
  CHECK_EDN(
      MustPull(view, "[:issue/title :db/id :user/name :issue/priority]", d.i1),
      StrCat("{:issue/title \"crash\" :db/id ", d.i1, " :issue/priority 3}"));
  // Attributes on both sides of a long many-valued one.
  CHECK_EDN(MustPull(view, "[:issue/note :issue/title]", d.i1),
            "{:issue/title \"crash\"}");
  CHECK_EDN(MustPull(view, "[:issue/assignee :issue/kind]", d.i1),
            StrCat("{:issue/assignee ", Ref(d.u1), " :issue/kind {:db/id ",
                   d.bug, " :db/ident :kind/bug}}"));
  // The result keeps the pattern's order of keys.
  EdnValue v = MustPull(view, "[:issue/priority :issue/title]", d.i1);
  REQUIRE(v.items().size() == 4);
  CHECK(v.items()[0] == Edn(":issue/priority"));
}

TEST_CASE("pull: nested patterns") {
  Data d;
  const DbView view = d.View();
  const auto& ls = d.sorted_labels;
  auto name = [&](EntityId l) {
    return l == d.l1 ? "bug" : l == d.l2 ? "ui" : "perf";
  };
  CHECK_EDN(MustPull(view,
                     "[:issue/title {:issue/assignee [:user/name]}"
                     " {:issue/label [:label/name]}]",
                     d.i1),
            StrCat("{:issue/title \"crash\" :issue/assignee {:user/name "
                   "\"Ann\"} :issue/label [{:label/name \"",
                   name(ls[0]), "\"} {:label/name \"", name(ls[1]),
                   "\"} {:label/name \"", name(ls[2]), "\"}]}"));
  // A nested wildcard, and a map spec that overrides the wildcard.
  CHECK_EDN(MustPull(view, "[:issue/title {:issue/reporter [*]}]", d.i1),
            StrCat("{:issue/title \"crash\" :issue/reporter {:db/id ", d.u2,
                   " :user/email \"bob@x\" :user/name \"Bob\"}}"));
  EdnValue w = MustPull(view, "[* {:issue/assignee [:user/name]}]", d.i1);
  CHECK(*w.Get("issue/assignee") == Edn("{:user/name \"Ann\"}"));
  CHECK(*w.Get("issue/title") == Edn("\"crash\""));
  CHECK(*w.Get("db/id") == EdnValue::Int(d.i1));
}

TEST_CASE("pull: reverse refs") {
  Data d;
  const DbView view = d.View();
  const EntityId first = std::min(d.i1, d.i2), second = std::max(d.i1, d.i2);
  CHECK_EDN(MustPull(view, "[:user/name :issue/_assignee]", d.u1),
            StrCat("{:user/name \"Ann\" :issue/_assignee [", Ref(first), " ",
                   Ref(second), "]}"));
  CHECK_EDN(MustPull(view, "[{:issue/_assignee [:issue/title]}]", d.u2), "{}");
  CHECK_EDN(MustPull(view, "[{:issue/_reporter [:issue/title]}]", d.u2),
            "{:issue/_reporter [{:issue/title \"crash\"}]}");
  CHECK_EDN(MustPull(view, "[(:issue/_assignee :limit 1)]", d.u1),
            StrCat("{:issue/_assignee [", Ref(first), "]}"));
  // A component's owner is one map, not a vector.
  CHECK_EDN(
      MustPull(view, "[:comment/text :issue/_comments]", d.c1),
      StrCat("{:comment/text \"first\" :issue/_comments ", Ref(d.i1), "}"));
  CHECK_EDN(MustPull(view, "[{:issue/_comments [:issue/title]}]", d.c2),
            "{:issue/_comments {:issue/title \"crash\"}}");
  // Reverse refs are not part of the wildcard.
  CHECK(MustPull(view, "[*]", d.u1).Get("issue/_assignee") == nullptr);
  CHECK(MustPull(view, "[* :issue/_assignee]", d.u1).Get("issue/_assignee") !=
        nullptr);
}

TEST_CASE("pull: components are pulled recursively, with cycles cut") {
  Data d;
  auto r = d.f.Transact({Add("t", "issue/title", Value::String("nest")),
                         AddRef("t", "issue/comments", "a"),
                         Add("a", "comment/text", Value::String("a")),
                         AddRef("a", "comment/reply", "b"),
                         Add("b", "comment/text", Value::String("b"))});
  REQUIRE(r.ok());
  const EntityId t = r->tempids.at("t"), a = r->tempids.at("a"),
                 b = r->tempids.at("b");
  DbView view = d.View();
  CHECK_EDN(MustPull(view, "[:issue/comments]", t),
            StrCat("{:issue/comments [{:db/id ", a,
                   " :comment/text \"a\" :comment/reply {:db/id ", b,
                   " :comment/text \"b\"}}]}"));
  // A component graph that loops back (not something a well-formed
  // database holds, but pull must not loop on it).
  REQUIRE(d.f.Transact({AddRef(Ent(b), "comment/reply", Ent(a))}).ok());
  view = d.View();
  CHECK_EDN(MustPull(view, "[*]", a),
            StrCat("{:db/id ", a,
                   " :comment/text \"a\" :comment/reply "
                   "{:db/id ",
                   b, " :comment/text \"b\" :comment/reply ", Ref(a), "}}"));
}

TEST_CASE("pull: limit, default and as") {
  Data d;
  const DbView view = d.View();
  const auto& ls = d.sorted_labels;
  CHECK_EDN(MustPull(view, "[(:issue/label :limit 2)]", d.i1),
            StrCat("{:issue/label [", Ref(ls[0]), " ", Ref(ls[1]), "]}"));
  CHECK_EDN(MustPull(view, "[(limit :issue/label 1) :issue/title]", d.i1),
            StrCat("{:issue/label [", Ref(ls[0]), "] :issue/title \"crash\"}"));
  CHECK(MustPull(view, "[[:issue/label :limit nil]]", d.i1)
            .Get("issue/label")
            ->size() == 3);
  CHECK_EDN(MustPull(view,
                     "[[:issue/title :as \"t\"] (:issue/priority :as :p)"
                     " [:user/email :default \"none\"]"
                     " (default :issue/note 0) [:db/id :as :id]]",
                     d.i1),
            StrCat("{\"t\" \"crash\" :p 3 :user/email \"none\""
                   " :issue/note 0 :id ",
                   d.i1, "}"));
  // Options on map keys, in both forms.
  CHECK_EDN(MustPull(view, "[{[:issue/label :limit 1 :as :l] [:db/id]}]", d.i1),
            StrCat("{:l [", Ref(ls[0]), "]}"));
  CHECK_EDN(MustPull(view, "[{(:issue/label :limit 1) [:db/id]}]", d.i1),
            StrCat("{:issue/label [", Ref(ls[0]), "]}"));
  // An explicit spec next to the wildcard replaces its default.
  EdnValue w = MustPull(view, "[* (:issue/label :limit 1)]", d.i1);
  CHECK(w.Get("issue/label")->size() == 1);
  CHECK(w.Get("issue/title") != nullptr);
  EdnValue renamed =
      MustPull(view, "[* (:issue/title :as :issue/state)]", d.i1);
  CHECK(*renamed.Get("issue/state") == Edn("\"crash\""));
  CHECK(renamed.Get("issue/title") == nullptr);
}

TEST_CASE("pull: limits and skips over a long many-valued attribute") {
  Data d;
  std::vector<storage::TxOp> ops = {
      Add("x", "issue/title", Value::String("many")),
      Add("x", "issue/note", Value::String("after the labels"))};
  std::vector<std::string> names;
  for (int i = 0; i < 60; ++i) names.push_back(StrCat("label-", i));
  for (int i = 0; i < 60; ++i) {
    ops.push_back(Add(names[i].c_str(), "label/name", Value::String(names[i])));
    ops.push_back(AddRef("x", "issue/label", names[i].c_str()));
  }
  auto r = d.f.Transact(std::move(ops));
  REQUIRE(r.ok());
  const EntityId x = r->tempids.at("x");
  const DbView view = d.View();
  CHECK_EDN(MustPull(view, "[:issue/note]", x),
            "{:issue/note \"after the labels\"}");
  EdnValue v = MustPull(view, "[(:issue/label :limit 3) :issue/note]", x);
  CHECK(v.Get("issue/label")->size() == 3);
  CHECK(*v.Get("issue/note") == Edn("\"after the labels\""));
  CHECK(MustPull(view, "[:issue/label]", x).Get("issue/label")->size() == 60);
  EdnValue w = MustPull(view, "[* (:issue/label :limit 5)]", x);
  CHECK(w.Get("issue/label")->size() == 5);
  CHECK(*w.Get("issue/note") == Edn("\"after the labels\""));
  CHECK(MustPull(view, "[*]", x).Get("issue/label")->size() == 60);
}

TEST_CASE("pull: recursion, bounded and unbounded, stops at cycles") {
  Data d;
  // a -> b -> c -> a (friends); a's boss is b, b's boss is c.
  auto r = d.f.Transact(
      {Add("a", "person/name", Value::String("A")),
       Add("b", "person/name", Value::String("B")),
       Add("c", "person/name", Value::String("C")),
       AddRef("a", "person/friend", "b"), AddRef("b", "person/friend", "c"),
       AddRef("c", "person/friend", "a"), AddRef("a", "person/boss", "b"),
       AddRef("b", "person/boss", "c")});
  REQUIRE(r.ok());
  const EntityId a = r->tempids.at("a");
  const DbView view = d.View();
  CHECK_EDN(MustPull(view, "[:person/name {:person/friend ...}]", a),
            StrCat("{:person/name \"A\" :person/friend [{:person/name \"B\""
                   " :person/friend [{:person/name \"C\" :person/friend [",
                   Ref(a), "]}]}]}"));
  CHECK_EDN(MustPull(view, "[:person/name {:person/friend 1}]", a),
            "{:person/name \"A\" :person/friend [{:person/name \"B\"}]}");
  CHECK_EDN(MustPull(view, "[:person/name {:person/friend 2}]", a),
            "{:person/name \"A\" :person/friend [{:person/name \"B\""
            " :person/friend [{:person/name \"C\"}]}]}");
  CHECK_EDN(MustPull(view, "[:person/name {:person/boss ...}]", a),
            "{:person/name \"A\" :person/boss {:person/name \"B\""
            " :person/boss {:person/name \"C\"}}}");
  // Recursion inside a nested pattern applies that nested pattern.
  CHECK_EDN(MustPull(view,
                     "[:person/name {:person/boss [:person/name "
                     "{:person/friend 1}]}]",
                     a),
            "{:person/name \"A\" :person/boss {:person/name \"B\""
            " :person/friend [{:person/name \"C\"}]}}");
  // With the wildcard, the last level still shows the refs.
  EdnValue w = MustPull(view, "[* {:person/friend 1}]", a);
  CHECK(w.Get("person/friend")->items()[0].Get("person/friend") != nullptr);
}

TEST_CASE("pull: unbounded recursion stops at the nesting limit") {
  Data d;
  // p0 -> p1 -> ... -> p299 through :person/boss.
  std::vector<std::string> names;
  for (int i = 0; i < 300; ++i) names.push_back(StrCat("p", i));
  std::vector<storage::TxOp> ops;
  for (int i = 0; i < 300; ++i) {
    ops.push_back(
        Add(names[i].c_str(), "person/name", Value::String(names[i])));
    if (i + 1 < 300) {
      ops.push_back(
          AddRef(names[i].c_str(), "person/boss", names[i + 1].c_str()));
    }
  }
  auto r = d.f.Transact(std::move(ops));
  REQUIRE(r.ok());
  EdnValue v =
      MustPull(d.View(), "[:person/name {:person/boss ...}]", r->tempids["p0"]);
  int levels = 1;
  const EdnValue* at = &v;
  while (const EdnValue* boss = at->Get("person/boss")) {
    at = boss;
    ++levels;
  }
  CHECK(levels == 257);
  // The entity past the limit is only named by its id.
  CHECK(*at == Edn(Ref(r->tempids["p256"])));
}

TEST_CASE("pull: as_of shows old values, since only new ones") {
  Data d;
  auto r = d.f.Transact({Add(Ent(d.i1), "issue/title", Value::String("boom")),
                         AddRef(Ent(d.i1), "issue/assignee", Ent(d.u2))});
  REQUIRE(r.ok());
  auto db = d.f.store().Latest();
  CHECK_EDN(MustPull(db->View(Basis::Current()),
                     "[:issue/title {:issue/assignee [:user/name]}]", d.i1),
            "{:issue/title \"boom\" :issue/assignee {:user/name \"Bob\"}}");
  CHECK_EDN(MustPull(db->View(Basis::AsOf(d.tx1)),
                     "[:issue/title {:issue/assignee [:user/name]}]", d.i1),
            "{:issue/title \"crash\" :issue/assignee {:user/name \"Ann\"}}");
  CHECK_EDN(MustPull(db->View(Basis::Since(d.tx1)),
                     "[:issue/title :issue/priority]", d.i1),
            "{:issue/title \"boom\"}");
  absl::StatusOr<EdnValue> h =
      Pull(db->View(Basis::History()), Pattern("[*]"), d.i1);
  CHECK(h.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(h.status().message() == "pull is not defined on a history database");
}

TEST_CASE("pull: PullMany and a reused executor") {
  Data d;
  const DbView view = d.View();
  auto many =
      PullMany(view, Pattern("[:issue/title]"), {d.i1, d.i2, 999999999, d.i1});
  REQUIRE(many.ok());
  REQUIRE(many->size() == 4);
  CHECK_EDN((*many)[0], "{:issue/title \"crash\"}");
  CHECK_EDN((*many)[1], "{:issue/title \"slow\"}");
  CHECK_EDN((*many)[2], "{}");
  CHECK_EDN((*many)[3], "{:issue/title \"crash\"}");
  auto executor = PullExecutor::Create(view, Pattern("[* :issue/_assignee]"));
  REQUIRE(executor.ok());
  for (int round = 0; round < 3; ++round) {
    auto u = executor->Pull(d.u1);
    REQUIRE(u.ok());
    CHECK(u->Get("issue/_assignee")->size() == 2);
    auto i = executor->Pull(d.i2);
    REQUIRE(i.ok());
    CHECK(*i->Get("issue/title") == Edn("\"slow\""));
  }
}

TEST_CASE("pull: validation errors") {
  Data d;
  const DbView view = d.View();
  CHECK(ValidatePullPattern(Pattern("[* :issue/_assignee {:issue/label 2}]"),
                            view.schema())
            .ok());
  CHECK(ValidateError(view, "[:issue/title :issue/nope]") ==
        "line 1, column 15: :issue/nope is not an attribute");
  CHECK(ValidateError(view, "[{:issue/assignee [:user/nope]}]") ==
        "line 1, column 20: :user/nope is not an attribute");
  CHECK(ValidateError(view, "[:issue/_title]") ==
        "line 1, column 2: reverse lookup :issue/_title needs a ref "
        "attribute, but :issue/title is of type :db.type/string");
  CHECK(ValidateError(view, "[{:issue/title [:db/id]}]") ==
        "line 1, column 3: a nested pattern needs a ref attribute, but "
        ":issue/title is of type :db.type/string");
  CHECK(ValidateError(view, "[(:db/id :limit 2)]") ==
        "line 1, column 3: :db/id takes no :limit, :default or nested "
        "pattern (only :as)");
  CHECK(
      ValidateError(view, "[(default :db/id 0)]")
          .ends_with(
              ":db/id takes no :limit, :default or nested pattern (only :as)"));
  CHECK(ValidateError(view, "[:db/_id]")
            .starts_with("line 1, column 2: :db/_id is not an attribute"));
  CHECK(ValidateError(view,
                      "[:issue/title (:issue/priority :as "
                      ":issue/title)]") ==
        "line 1, column 16: two specs of one pull pattern give the key "
        ":issue/title");
  CHECK(ValidateError(view, "[:user/name :user/name]")
            .starts_with("line 1, column 13: two specs"));
}

TEST_CASE("pull: ValueToEdn converts every value type") {
  CHECK(ValueToEdn(Value::Ref(42)) == EdnValue::Int(42));
  CHECK(ValueToEdn(Value::Long(-7)) == EdnValue::Int(-7));
  CHECK(ValueToEdn(Value::Keyword("a/b")) == EdnValue::Keyword("a/b"));
  CHECK(ValueToEdn(Value::String("x")) == EdnValue::String("x"));
  CHECK(ValueToEdn(Value::Boolean(true)) == EdnValue::Bool(true));
  CHECK(ValueToEdn(Value::Double(1.5)) == EdnValue::Float(1.5));
  CHECK(ValueToEdn(Value::Instant(1000)) == EdnValue::Inst(1000));
  const std::string uuid(16, '\x11');
  CHECK(ValueToEdn(Value::Uuid(uuid)) == EdnValue::Uuid(uuid));
  CHECK(ValueToEdn(Value::BigInt("-123")) == EdnValue::BigInt("-123"));
  CHECK(ValueToEdn(Value::BigDec("1.5")) == EdnValue::BigDec("1.5"));
  auto bytes = [](std::string_view b) {
    return edn::PrintEdn(ValueToEdn(Value::Bytes(b)));
  };
  CHECK(bytes("") == "#bytes \"\"");
  CHECK(bytes("f") == "#bytes \"Zg==\"");
  CHECK(bytes("fo") == "#bytes \"Zm8=\"");
  CHECK(bytes("foo") == "#bytes \"Zm9v\"");
  CHECK(bytes("hello") == "#bytes \"aGVsbG8=\"");
  CHECK(bytes(std::string("\xff\x00\xfe", 3)) == "#bytes \"/wD+\"");
}

}  // namespace
}  // namespace mentat::query
