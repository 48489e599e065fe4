#ifndef MENTAT_QUERY_PULL_PULL_PLAN_H_
#define MENTAT_QUERY_PULL_PULL_PLAN_H_

// A pull pattern resolved against one schema: attribute ids, result keys,
// limits and nested patterns are worked out once, so pulling an entity only
// reads datoms and builds values.

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "mentat/edn/edn_value.h"
#include "mentat/query/pull_pattern.h"
#include "mentat/storage/schema.h"

namespace mentat::query::pull_internal {

// Deepest nesting of entities in one pull result. Unbounded recursion on a
// long chain would otherwise exhaust the stack (results, and every walk over
// them, are recursive); entities past it come back as {:db/id N}.
inline constexpr size_t kMaxNesting = 256;

struct PlanPattern;

enum class PlanAttrKind : uint8_t { kDbId, kForward, kReverse };

// One attribute spec of a pattern, resolved.
struct PlanAttr {
  PlanAttrKind kind = PlanAttrKind::kForward;
  // Owned by the schema the plan was compiled with; null for :db/id.
  const storage::Attribute* attr = nullptr;
  edn::EdnValue key;
  // The result is a vector (cardinality-many, or a reverse ref of a
  // non-component attribute).
  bool many = false;
  // Most values kept when `many`; negative means no limit.
  int64_t limit = -1;
  std::optional<edn::EdnValue> default_value;
  // The pattern applied to referenced entities: a nested pattern, or for
  // recursion the pattern this spec belongs to. Null: refs are {:db/id N}.
  const PlanPattern* sub = nullptr;
  bool recursive = false;
  int64_t max_depth = -1;   // recursion levels; negative: unbounded
  int recursion_slot = -1;  // index of this spec's depth counter
  // A forward component ref without a nested pattern: the referenced
  // entity is pulled whole, recursively, as Datomic does.
  bool expand_component = false;
};

struct PlanPattern {
  bool wildcard = false;
  std::vector<PlanAttr> attrs;
  // The forward specs sorted by attribute id: (attribute id, index into
  // attrs). A scan of the entity's EAVT range walks both in step.
  std::vector<std::pair<storage::EntityId, int>> forward;
  // Under a wildcard: attributes the wildcard leaves alone because an
  // explicit spec reads them or took their key.
  absl::flat_hash_set<storage::EntityId> wildcard_skip;
  // Under a wildcard: an explicit spec produces the :db/id key.
  bool explicit_db_id = false;
  bool has_reverse = false;
};

// The compiled form of a PullPattern. Immutable once built; it points into
// the schema it was compiled with, which must outlive it.
class PullPlan {
 public:
  // Resolves `pattern` against `schema`. InvalidArgument (with the spec's
  // position) for unknown attributes, reverse lookups or nested patterns on
  // non-ref attributes, options on :db/id, bad limits and depths, and two
  // specs giving the same result key.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<PullPlan>> Compile(
      const PullPattern& pattern, const storage::Schema& schema);

  const PlanPattern& root() const { return *patterns_[0]; }
  // `[*]`, for the entities of component refs.
  const PlanPattern& wildcard() const { return *patterns_[1]; }
  // Number of recursive specs (each keeps a depth counter while pulling).
  int recursion_slots() const { return recursion_slots_; }
  const storage::Schema& schema() const { return *schema_; }

 private:
  PullPlan() = default;
  [[nodiscard]] absl::Status CompileInto(const PullPattern& pattern,
                                         PlanPattern* out);
  [[nodiscard]] absl::Status CompileSpec(const PullAttrSpec& spec,
                                         PlanPattern* owner, PlanAttr* out);

  const storage::Schema* schema_ = nullptr;
  // Patterns are held by pointer so that PlanAttr::sub stays valid.
  std::vector<std::unique_ptr<PlanPattern>> patterns_;
  int recursion_slots_ = 0;
};

}  // namespace mentat::query::pull_internal

#endif  // MENTAT_QUERY_PULL_PULL_PLAN_H_
