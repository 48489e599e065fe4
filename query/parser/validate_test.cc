#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "mentat/query/parser.h"
#include "mentat/storage/datom.h"
#include "mentat/storage/entity_ids.h"
#include "mentat/storage/schema.h"
#include "parser/parser_test_support.h"

namespace mentat::query {
namespace {

using storage::Datom;
using storage::EntityId;
using storage::Schema;
using storage::Value;
using testing::CheckMessage;
using testing::MustParse;
namespace ids = storage::ids;

struct AttrSpec {
  const char* ident;
  EntityId type;
  bool many = false;
  bool unique = false;
  bool fulltext = false;
};

// The workload's schema plus a few attributes of the other types.
const Schema& TestSchema() {
  static const std::shared_ptr<const Schema> schema = [] {
    std::vector<Datom> datoms = Schema::BootstrapDatoms(0);
    EntityId next = storage::MakeEntityId(storage::Partition::kDb,
                                          ids::kFirstUserDbCounter);
    const AttrSpec specs[] = {
        {"user/email", ids::kDbTypeString, false, true},
        {"user/name", ids::kDbTypeString},
        {"user/age", ids::kDbTypeLong},
        {"user/score", ids::kDbTypeDouble},
        {"user/id", ids::kDbTypeUuid},
        {"user/admin", ids::kDbTypeBoolean},
        {"user/big", ids::kDbTypeBigInt},
        {"user/dec", ids::kDbTypeBigDec},
        {"issue/title", ids::kDbTypeString, false, false, true},
        {"issue/state", ids::kDbTypeKeyword},
        {"issue/priority", ids::kDbTypeLong},
        {"issue/assignee", ids::kDbTypeRef},
        {"issue/reporter", ids::kDbTypeRef},
        {"issue/created-at", ids::kDbTypeInstant},
        {"issue/label", ids::kDbTypeRef, true},
        {"label/name", ids::kDbTypeString, false, true},
        {"person/follows", ids::kDbTypeRef, true},
    };
    for (const AttrSpec& s : specs) {
      const EntityId e = next++;
      datoms.push_back({e, ids::kDbIdent, Value::Keyword(s.ident), 0, true});
      datoms.push_back({e, ids::kDbValueType, Value::Ref(s.type), 0, true});
      datoms.push_back({e, ids::kDbCardinality,
                        Value::Ref(s.many ? ids::kDbCardinalityMany
                                          : ids::kDbCardinalityOne),
                        0, true});
      if (s.unique) {
        datoms.push_back(
            {e, ids::kDbUnique, Value::Ref(ids::kDbUniqueIdentity), 0, true});
      }
      if (s.fulltext) {
        datoms.push_back({e, ids::kDbFulltext, Value::Boolean(true), 0, true});
      }
    }
    datoms.push_back(
        {next++, ids::kDbIdent, Value::Keyword("state/open"), 0, true});
    absl::StatusOr<std::shared_ptr<const Schema>> built =
        Schema::FromDatoms(datoms);
    REQUIRE_MESSAGE(built.ok(), built.status().ToString());
    return *built;
  }();
  return *schema;
}

const char* kRules =
    "[[(follows ?a ?b) [?a :person/follows ?b]]\n"
    " [(follows ?a ?b) [?a :person/follows ?c] (follows ?c ?b)]\n"
    " [(named [?e] ?n) [?e :user/name ?n]]\n"
    " [(bad ?a) [?a :person/nope _]]\n"
    " [(unused ?a ?b) [?a :user/name _]]\n"
    " [(calls-bad ?a) (bad ?a)]]";

std::vector<Rule> TestRules() {
  absl::StatusOr<std::vector<Rule>> rules = ParseRules(kRules);
  REQUIRE_MESSAGE(rules.ok(), rules.status().ToString());
  return *std::move(rules);
}

[[nodiscard]] absl::Status Validate(std::string_view text) {
  ParsedQuery q = MustParse(text);
  return ValidateQuery(q, TestSchema(), TestRules());
}

void CheckValid(std::string_view text) {
  absl::Status s = Validate(text);
  INFO(text);
  CHECK_MESSAGE(s.ok(), s.ToString());
}

// `at`: where the error points on the one line of `text` (first
// occurrence); empty for an error without a position.
void CheckInvalid(std::string_view text, std::string_view at,
                  std::string_view part) {
  absl::Status s = Validate(text);
  INFO(text);
  REQUIRE(!s.ok());
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  const std::string message(s.message());
  if (at.empty()) {
    INFO(message);
    CHECK(message.find(part) != std::string::npos);
    return;
  }
  const size_t where = text.find(at);
  REQUIRE(where != std::string_view::npos);
  CheckMessage(message, 1, static_cast<int>(where) + 1, part);
}

TEST_CASE("parser: validation of the workload queries") {
  for (const char* text : {
           "[:find ?e ?name :in $ ?email :where [?e :user/email ?email] "
           "[?e :user/name ?name]]",
           "[:find ?i ?title ?state :in $ ?email :where "
           "[?u :user/email ?email] [?i :issue/assignee ?u] "
           "[?i :issue/title ?title] [?i :issue/state ?state]]",
           "[:find ?state (count ?i) :where [?i :issue/state ?state]]",
           "[:find ?i ?title ?priority :in $ ?min :where "
           "[?i :issue/state :state/open] [?i :issue/priority ?priority] "
           "[?i :issue/title ?title] [(>= ?priority ?min)]]",
           "[:find ?i :where [?i :issue/state _]]",
           "[:find (pull ?e [*]) . :in $ ?e :where [?e :issue/title _]]",
           "[:find ?e ?name :in $ [?email ...] :where "
           "[?e :user/email ?email] [?e :user/name ?name]]",
       }) {
    CheckValid(text);
  }
}

TEST_CASE("parser: validation of attributes") {
  CheckInvalid("[:find ?e :where [?e :issue/nope ?v]]", ":issue/nope",
               "unknown attribute :issue/nope in [?e :issue/nope ?v]");
  // A typo gets the nearest attribute.
  CheckInvalid("[:find ?e :where [?e :issue/titel ?v]]", ":issue/titel",
               "unknown attribute :issue/titel in [?e :issue/titel ?v]; "
               "did you mean :issue/title?");
  CheckValid("[:find ?e :where [?e :issue/_assignee ?v]]");
  CheckValid("[:find ?e :where [?e :db/ident ?v]]");
  CheckInvalid("[:find ?e :where [?e :state/open ?v]]", ":state/open",
               "unknown attribute :state/open");
  CheckInvalid("[:find ?e :where [?e 99999 ?v]]", "99999",
               "no attribute has id 99999");
  CheckValid("[:find ?e :where [?e 10 ?v]]");  // :db/ident by id
  CheckInvalid("[:find ?e :where [?e \"user/name\" ?v]]", "\"user",
               "expected an attribute (a keyword or an id), got a string");
  // Inside not, or and rule bodies too.
  CheckInvalid("[:find ?e :where [?e :user/name] (not [?e :x/y 1])]", ":x/y",
               "unknown attribute :x/y");
  CheckInvalid(
      "[:find ?e :where (or [?e :user/name] (and [?e :user/age] [?e :x/z]))]",
      ":x/z", "unknown attribute :x/z");
}

TEST_CASE("parser: validation of value types") {
  CheckInvalid("[:find ?e :where [?e :issue/priority \"high\"]]", "\"high\"",
               "value \"high\" (a string) does not fit attribute "
               ":issue/priority of type :db.type/long");
  CheckValid("[:find ?e :where [?e :issue/priority 3]]");
  CheckInvalid("[:find ?e :where [?e :issue/priority 3.5]]", "3.5",
               "does not fit");
  CheckValid("[:find ?e :where [?e :user/score 3.5] [?e :user/score 3]]");
  CheckValid("[:find ?e :where [?e :issue/state :state/open]]");
  CheckInvalid("[:find ?e :where [?e :issue/state \"open\"]]", "\"open\"",
               "does not fit attribute :issue/state of type "
               ":db.type/keyword");
  CheckValid("[:find ?e :where [?e :issue/assignee :state/open]]");
  CheckValid("[:find ?e :where [?e :issue/assignee 17]]");
  CheckValid("[:find ?e :where [?e :issue/assignee [:user/email \"a@b.c\"]]]");
  CheckInvalid("[:find ?e :where [?e :issue/assignee \"bob\"]]", "\"bob\"",
               "does not fit attribute :issue/assignee of type :db.type/ref");
  CheckInvalid("[:find ?e :where [?e :issue/assignee [:user/name \"b\"]]]",
               "[:user/name", "needs a unique attribute; :user/name");
  CheckInvalid("[:find ?e :where [?e :issue/assignee [:user/email 1]]]",
               "[:user/email", "value 1 (an integer) does not fit");
  CheckInvalid("[:find ?e :where [?e :issue/assignee [:user/email]]]",
               "[:user/email", "a lookup ref is [:unique/attr value]");
  CheckValid(
      "[:find ?e :where [?e :user/admin true] [?e :user/big 12N] "
      "[?e :user/dec 1.5M] [?e :user/big 3] "
      "[?e :user/id #uuid \"f81d4fae-7dec-11d0-a765-00a0c91e6bf6\"] "
      "[?e :issue/created-at #inst \"2024-01-01\"]]");
  CheckInvalid("[:find ?e :where [?e :issue/created-at \"2024\"]]", "\"2024",
               "does not fit attribute :issue/created-at");
  CheckInvalid("[:find ?e :where [?e :user/admin 1]]", "1]",
               "does not fit attribute :user/admin");
}

TEST_CASE("parser: validation of entity, tx and added constants") {
  CheckValid("[:find ?v :where [[:user/email \"a@b.c\"] :user/name ?v]]");
  CheckValid("[:find ?v :where [:state/open :db/ident ?v] [17 :user/name ?v]]");
  CheckInvalid("[:find ?v :where [\"x\" :user/name ?v]]", "\"x\"",
               "an entity is a variable, an id, an ident or a lookup ref, "
               "got a string");
  CheckInvalid("[:find ?v :where [[:user/name \"x\"] :user/name ?v]]",
               "[:user/name", "needs a unique attribute");
  CheckValid("[:find ?v :where [?e :user/name ?v 13194139534313 true]]");
  CheckInvalid("[:find ?v :where [?e :user/name ?v :tx]]", ":tx",
               "the tx position takes a variable or a transaction id");
  CheckInvalid("[:find ?v :where [?e :user/name ?v ?t 1]]", "1]",
               "the added position takes a variable, true or false");
}

TEST_CASE("parser: validation of :find and :with bindings") {
  CheckInvalid("[:find ?x :where [?e :user/name ?n]]", "?x",
               "unbound variable ?x in :find");
  CheckInvalid(
      "[:find ?e ?x :where [?e :user/name ?n] (not [?e :user/age ?x])]", "?x",
      "variable ?x in :find is only used inside not");
  CheckInvalid(
      "[:find ?x :where [?e :user/name] (not-join [?e] [?e :user/age ?x])]",
      "?x", "only used inside not");
  CheckInvalid("[:find (count ?x) :where [?e :user/name ?n]]", "?x",
               "unbound variable ?x in :find");
  CheckInvalid("[:find (pull ?x [*]) :where [?e :user/name ?n]]", "(pull",
               "unbound variable ?x in :find");
  CheckInvalid("[:find ?e :with ?x :where [?e :user/name ?n]]", "",
               "unbound variable ?x in :with");
  CheckValid("[:find ?e :with ?n :where [?e :user/name ?n]]");
  // Variables bound by :in, functions, rule calls, or.
  CheckValid("[:find ?x ?y :in $ ?x :where [?e :user/age ?a] [(+ ?a 1) ?y]]");
  CheckValid("[:find ?t :where [?e :user/age ?a] [(tuple ?a ?a) ?t]]");
  CheckValid("[:find ?b :in $ % :where (follows ?a ?b)]");
  CheckValid("[:find ?n :where (or [?e :user/name ?n] [?e :user/email ?n])]");
  CheckInvalid(
      "[:find ?z :where [?e :user/name] (or-join [?e] [?e :user/age "
      "?z] [?e :user/score ?z])]",
      "?z", "unbound variable ?z in :find");
}

TEST_CASE("parser: validation of aggregates and pull") {
  CheckValid(
      "[:find (sum ?a) (sample 3 ?a) (min 2 ?a) (count-distinct ?a) "
      ":where [?e :user/age ?a]]");
  CheckInvalid("[:find (frobnicate ?a) :where [?e :user/age ?a]]", "(frob",
               "unknown aggregate frobnicate in (frobnicate ?a)");
  CheckInvalid("[:find (count 2 ?a) :where [?e :user/age ?a]]", "(count",
               "wrong number of arguments (2) to aggregate count");
  CheckInvalid("[:find (sample ?a) :where [?e :user/age ?a]]", "(sample",
               "wrong number of arguments (1) to aggregate sample");
  CheckInvalid("[:find (sample \"x\" ?a) :where [?e :user/age ?a]]", "\"x\"",
               "takes a non-negative integer");
  // The count is a constant: an input cannot give it (the planner used to
  // refuse this after validation passed it).
  CheckInvalid("[:find (sample ?n ?a) :in $ ?n :where [?e :user/age ?a]]",
               "(sample",
               "the count in (sample ?n ?a) must be a non-negative "
               "integer");
  CheckInvalid("[:find (sample ?n ?a) :where [?e :user/age ?a]]", "?n",
               "unbound variable ?n in :find");
  CheckValid(
      "[:find (pull ?e [:user/name {:issue/_assignee [:issue/title]}]) "
      ":where [?e :user/name]]");
  CheckInvalid("[:find (pull ?e [:user/nope]) :where [?e :user/name]]",
               ":user/nope", "user/nope");
  CheckInvalid("[:find (pull $h ?e [*]) :where [?e :user/name]]", "(pull",
               "source $h is not declared in :in");
}

TEST_CASE("parser: validation of sources") {
  CheckInvalid("[:find ?e :where [$h ?e :user/name]]", "[$h",
               "source $h is not declared in :in");
  CheckValid("[:find ?e :in $ $h :where [$h ?e :user/name]]");
  CheckInvalid("[:find ?e :in ?x :where [?e :user/name ?x]]", "[?e",
               "source $ is not declared in :in");
  CheckInvalid(
      "[:find ?e :in $ :where [?e :user/name] ($h not [?e :user/age])]", "($h",
      "source $h is not declared");
  CheckInvalid(
      "[:find ?e :where [?e :user/name] [(get-else $h ?e :user/age 0) ?a]]",
      "$h", "source $h is not declared");
}

TEST_CASE("parser: validation of not and not-join") {
  CheckValid("[:find ?e :where [?e :user/name] (not [?e :user/age 3])]");
  CheckInvalid("[:find ?e :where [?e :user/name] (not [?e :user/age ?a])]",
               "(not",
               "variable ?a in (not [?e :user/age ?a]) is not bound "
               "outside it");
  CheckValid(
      "[:find ?e :where [?e :user/name] "
      "(not-join [?e] [?e :issue/assignee ?u] [?u :user/age 3])]");
  CheckInvalid(
      "[:find ?e :where [?e :user/name] (not-join [?x] [?e :user/age "
      "?x])]",
      "(not-join", "not-join variable ?x is not bound outside it");
  CheckInvalid(
      "[:find ?e :where [?e :user/name ?n] (not-join [?e ?n] "
      "[?e :user/age 3])]",
      "(not-join",
      "not-join variable ?n does not occur in its "
      "clauses");
  // Only the join variables are visible inside not-join.
  CheckInvalid(
      "[:find ?e :where [?e :user/name ?n] (not-join [?e] "
      "[?e :user/age ?a] [(> ?a ?n)])]",
      "?n)", "unbound variable ?n in [(> ?a ?n)]");
}

TEST_CASE("parser: validation of or and or-join") {
  CheckValid(
      "[:find ?e :where (or [?e :user/name \"a\"] "
      "(and [?e :user/age 3] [?e :user/score 1.5]))]");
  CheckInvalid(
      "[:find ?e :where (or [?e :user/name \"a\"] "
      "(and [?e :user/age ?a] [(> ?a 3)]))]",
      "(or", "branch 1 uses ?e, branch 2 uses ?e ?a");
  CheckValid(
      "[:find ?e :where (or-join [?e] [?e :user/name \"a\"] "
      "(and [?e :user/age ?a] [(> ?a 3)]))]");
  CheckInvalid(
      "[:find ?e :where [?e :user/age] "
      "(or [?e :user/name ?n] [?e :user/age ?a])]",
      "(or",
      "all branches of or must use the same variables "
      "(or use or-join): branch 1 uses ?e ?n, branch 2 uses "
      "?e ?a");
  CheckValid(
      "[:find ?e :where [?e :user/age] "
      "(or-join [?e] [?e :user/name ?n] [?e :user/age ?a])]");
  CheckInvalid(
      "[:find ?e :where [?e :user/age] "
      "(or-join [?e ?n] [?e :user/name ?n] [?e :user/age ?a])]",
      "(or-join", "or-join variable ?n does not occur in branch 2");
  CheckValid(
      "[:find ?e :in $ ?n :where [?e :user/age] "
      "(or-join [[?n] ?e] [?e :user/name ?n] [?e :user/email ?n])]");
  CheckInvalid(
      "[:find ?e :where [?e :user/age] "
      "(or-join [[?n] ?e] [?e :user/name ?n] [?e :user/email ?n])]",
      "(or-join", "or-join required variable ?n is not bound");
}

TEST_CASE("parser: validation of rule calls") {
  CheckValid("[:find ?b :in $ % :where [?a :user/name \"x\"] (follows ?a ?b)]");
  CheckValid("[:find ?n :in $ % ?e :where (named ?e ?n)]");
  CheckInvalid("[:find ?b :in $ % :where [?a :user/name] (follow ?a ?b)]",
               "(follow ", "unknown rule follow in (follow ?a ?b)");
  CheckInvalid("[:find ?b :in $ % :where [?a :user/name] (follows ?a ?b ?c)]",
               "(follows", "rule follows takes 2 arguments, got 3");
  CheckInvalid("[:find ?b :where [?a :user/name] (follows ?a ?b)]", "(follows",
               "needs % in :in");
  CheckInvalid("[:find ?a :where [?a :user/age ?x] (< ?x 1)]", "(<",
               "(< ?x 1) calls the function <: write function calls in a "
               "vector");
  CheckInvalid("[:find ?n :in $ % :where [?e :user/age] (named ?x ?n)]", "?x",
               "rule named requires its argument 1 to be bound");
  // Rule bodies are checked when the query calls them, recursively.
  CheckInvalid("[:find ?a :in $ % :where [?a :user/name] (calls-bad ?a)]", "",
               "unknown attribute :person/nope");
  CheckInvalid("[:find ?a :in $ % :where [?a :user/name] (unused ?a ?b)]", "",
               "variable ?b of rule unused does not occur in its body");
  // Uncalled rules are not checked.
  CheckValid("[:find ?a :in $ % :where [?a :user/name]]");

  absl::Status no_rules = ValidateQuery(
      MustParse("[:find ?a :in $ % :where (r ?a)]"), TestSchema(), {});
  CHECK(std::string(no_rules.message()).find("no rules were given") !=
        std::string::npos);
}

TEST_CASE("parser: validation of predicates and functions") {
  CheckValid(
      "[:find ?e :where [?e :user/name ?n] [(starts-with? ?n \"a\")] "
      "[(str ?n \"!\") ?s] [(clojure.string/includes? ?s \"b\")]]");
  CheckInvalid("[:find ?e :where [?e :user/age ?a] [(frob? ?a)]]", "[(frob",
               "unknown predicate frob? in [(frob? ?a)]");
  CheckInvalid("[:find ?e :where [?e :user/age ?a] [(frob ?a) ?b]]", "[(frob",
               "unknown function frob in [(frob ?a) ?b]");
  // A typo gets the nearest name.
  CheckInvalid("[:find ?e :where [?e :user/name ?n] [(start-with? ?n \"a\")]]",
               "[(start",
               "unknown predicate start-with? in [(start-with? ?n \"a\")]; "
               "did you mean starts-with?");
  CheckInvalid("[:find ?e :where [?e :user/name ?n] [(uper-case ?n) ?u]]",
               "[(uper", "did you mean upper-case?");
  CheckInvalid(
      "[:find ?e :where [?e :user/age ?a] [(get-els $ ?e :user/age 0) ?b]]",
      "[(get", "did you mean get-else?");
  CheckInvalid("[:find ?e :where [?e :user/name ?n] [(starts-with? ?n)]]",
               "[(starts",
               "wrong number of arguments (1) to predicate "
               "starts-with?");
  CheckInvalid("[:find ?e :where [?e :user/age ?a] [(inc ?a 1 2) ?b]]", "[(inc",
               "wrong number of arguments (3) to function inc");
  CheckInvalid("[:find ?e :where [?e :user/age ?a] [(+ ?a 1)]]", "[(+",
               "+ is a function, not a predicate");
  CheckInvalid("[:find ?e :where [?e :user/age ?a] [(< ?a 1) ?b]]", "[(<",
               "< is a predicate, not a function");
  CheckInvalid("[:find ?e :where [?e :user/age ?a] [(< ?x 1)]]", "?x",
               "unbound variable ?x in [(< ?x 1)]");
  CheckInvalid("[:find ?e :where [?e :user/age ?a] [(< $ 1)]]", "$",
               "unexpected source $");
}

TEST_CASE("parser: validation of database functions") {
  CheckValid(
      "[:find ?e ?a ?v ?t ?g ?x ?y ?i :where [?e :user/name] "
      "[(get-else $ ?e :user/age 0) ?a] [(get-else ?e :user/age 0) ?v] "
      "[(missing? $ ?e :user/score)] [(missing? ?e :user/admin)] "
      "[(get-some ?e :user/age :user/score) [?k ?w]] "
      "[(ground [1 2]) [?g ...]] [(tuple ?a ?v) ?t] "
      "[(untuple ?t) [?x ?y]] [(identity ?e) ?i]]");
  CheckInvalid(
      "[:find ?e :where [?e :user/name] [(get-else ?e :issue/label 0) "
      "?a]]",
      ":issue/label", "get-else needs a cardinality-one attribute");
  CheckInvalid(
      "[:find ?e :where [?e :user/name] [(get-else ?e :user/age nil) "
      "?a]]",
      "nil", "the default of get-else cannot be nil");
  CheckInvalid(
      "[:find ?e :where [?e :user/name] [(get-else ?e :user/nope 1) "
      "?a]]",
      ":user/nope", "unknown attribute :user/nope");
  CheckInvalid("[:find ?e :where [?e :user/name] [(get-else ?e :user/age) ?a]]",
               "[(get", "wrong number of arguments (3) to get-else");
  CheckInvalid("[:find ?e :where [?e :user/name] [(missing? ?e :user/x)]]",
               ":user/x", "unknown attribute :user/x");
  CheckInvalid("[:find ?e :where [?e :user/name] [(missing? ?e :user/age) ?m]]",
               "[(missing", "missing? is a predicate");
  CheckInvalid("[:find ?e :where [?e :user/name] [(ground 1)]]", "[(ground",
               "ground is a function: bind its result");
  CheckValid(
      "[:find ?e ?s :where [(fulltext $ :issue/title \"crash\") "
      "[[?e ?t _ ?s]]]]");
  CheckInvalid("[:find ?e :where [(fulltext $ :user/name \"x\") [[?e]]]]",
               ":user/name", "attribute :user/name is not :db/fulltext");
  CheckInvalid("[:find ?e :where [(fulltext $ :issue/title \"x\") ?e]]", "?e]]",
               "fulltext returns a relation");
  CheckInvalid("[:find ?e :where [(fulltext :issue/title \"x\" 1) [[?e]]]]",
               ":issue/title", "fulltext takes a source ($)");
  CheckValid("[:find ?tx :in $ ?t1 ?t2 :where [(tx-ids $ ?t1 ?t2) [?tx ...]]]");
  CheckValid(
      "[:find ?e :in $ ?tx :where [(tx-data $ ?tx) [[?e ?a ?v _ ?op]]]]");
  CheckInvalid("[:find ?e :in $ ?tx :where [(tx-data $ ?tx) ?e]]", "?e]]",
               "tx-data returns a relation");
  CheckInvalid("[:find ?e :where [?e :user/age ?a] [(untuple ?a) ?b]]", "?b]",
               "untuple binds a tuple");
}

}  // namespace
}  // namespace mentat::query
