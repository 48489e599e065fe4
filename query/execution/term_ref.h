#ifndef MENTAT_QUERY_EXECUTION_TERM_REF_H_
#define MENTAT_QUERY_EXECUTION_TERM_REF_H_

#include <list>

#include "absl/status/statusor.h"
#include "execution/exec_context.h"
#include "planner/plan.h"

namespace mentat::query::execution {

// Where an operator finds the value of one position of its clause for a
// row: a constant (lookup refs already resolved), a slot of the row, or
// nothing.
struct TermRef {
  enum class Kind : uint8_t { kNone, kConst, kSlot };
  Kind kind = Kind::kNone;
  const storage::Value* value = nullptr;  // kConst
  planner::Slot slot = planner::kNoSlot;  // kSlot
  bool bound = false;  // kSlot: read from the row; else written
  bool check = false;  // kSlot, not bound: compare with an earlier position

  bool known() const { return kind == Kind::kConst || bound; }
  // Written by the step (first occurrence of an unbound variable).
  bool binds() const { return kind == Kind::kSlot && !bound && !check; }
  const storage::Value& Get(const storage::Value* row) const {
    return kind == Kind::kConst ? *value : row[slot];
  }
};

// The values an operator's TermRefs point at that no row holds (resolved
// lookup refs). A list: pointers stay put, and an operator with none
// allocates nothing (a std::deque allocates its first block when made,
// four allocations and frees a point query).
using OwnedValues = std::list<storage::Value>;

// The TermRef of `term`. A lookup ref is resolved against the view now; an
// unknown one resolves to an id no entity has (-1), so it matches nothing.
// Resolved values live in `owned`.
[[nodiscard]] absl::StatusOr<TermRef> MakeTermRef(ExecContext* ctx,
                                                  const planner::PlanTerm& term,
                                                  OwnedValues* owned);

// Entity id of a value in an entity position: refs and longs; false for
// anything else (it matches no entity).
inline bool AsEntity(const storage::Value& v, storage::EntityId* id) {
  if (v.type() != storage::ValueType::kRef &&
      v.type() != storage::ValueType::kLong) {
    return false;
  }
  *id = v.as_long();
  return true;
}

}  // namespace mentat::query::execution

#endif  // MENTAT_QUERY_EXECUTION_TERM_REF_H_
