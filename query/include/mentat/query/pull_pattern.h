#ifndef MENTAT_QUERY_PULL_PATTERN_H_
#define MENTAT_QUERY_PULL_PATTERN_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "mentat/edn/edn_value.h"

namespace mentat::query {

struct PullPattern;

// One attribute of a pull pattern, with its options.
struct PullAttrSpec {
  // The attribute ident without ':' ("issue/title"). "db/id" is the entity
  // id itself. A reverse ref is written "issue/_assignee" and stored here as
  // attr = "issue/assignee" with reverse = true.
  std::string attr;
  bool reverse = false;
  // The key the value appears under in the result; default: the attribute
  // as written (":issue/_assignee" for a reverse ref).
  std::optional<edn::EdnValue> as;
  // Most values returned for a cardinality-many (or reverse) attribute.
  // Default 1000, as in Datomic; no_limit (`:limit nil`) returns all.
  int64_t limit = 1000;
  bool no_limit = false;
  // Returned when the entity has no value for the attribute.
  std::optional<edn::EdnValue> default_value;
  // For refs: the pattern applied to the referenced entities
  // ({:issue/assignee [:user/name]}); null means {:db/id N} only (or the
  // whole entity for component attributes, pulled recursively).
  std::shared_ptr<const PullPattern> sub;
  // Recursion ({:person/friend ...} or {:person/friend 3}): apply this
  // pattern again to the referenced entities, up to `recursion_depth`
  // levels or without bound (cycles stop at entities already visited).
  bool recursive = false;
  std::optional<int64_t> recursion_depth;  // nullopt with recursive: `...`
  uint32_t line = 0, column = 0;
};

// A parsed pull pattern: `[*]`, `[:a :b {:c [:d]}]`, attribute options in
// both of Datomic's syntaxes (`[:a :limit 5 :as "x"]` and
// `(:a :limit 5)`, also `(limit :a 5)`, `(default :a 0)`).
struct PullPattern {
  bool wildcard = false;  // `*`: every attribute of the entity
  std::vector<PullAttrSpec> attrs;
};

// Parses a pull pattern from EDN. InvalidArgument names the offending
// element and its position. Attribute names are not checked against a
// schema here (ValidatePullPattern does that).
[[nodiscard]] absl::StatusOr<PullPattern> ParsePullPattern(
    const edn::EdnValue& pattern);

}  // namespace mentat::query

#endif  // MENTAT_QUERY_PULL_PATTERN_H_
