// Entity order: which slot a scope's rows hold in ascending entity order
// (the entities of a first scan of one AVET value or of AEVT by
// attribute), which steps keep it, and when a pattern on that entity is
// cheaper as a forward walk of the attribute's AEVT datoms than as a
// nested loop or a hash join.

#include <algorithm>

#include "planner/scope_builder.h"

namespace mentat::query::planner {

void ScopeBuilder::InEntityOrder(const Pending& p, Choice* c,
                                 const Access* indep) {
  const PatternSpec& pat = p.pattern;
  const storage::Attribute* attr = pat.attr;
  // The entity is the ordered slot, the attribute a constant, and the
  // value not known (a known one is a seek of e+a+v in EAVT).
  if (attr == nullptr || !pat.e.is_slot() || pat.e.slot != ordered_ ||
      !bound_[ordered_] || Known(pat.v, false) ||
      c->access.index != storage::IndexOrder::kEavt ||
      c->access.prefix_len != 2) {
    return;
  }
  const bool always = program_.options().always_entity_order;
  if (!always && rows_ < kOrderedMinRows) return;
  Estimator& est = program_.estimator();
  // Datoms of the attribute between one row's entity and the next, when
  // the rows spread over its entities: a walk steps over them with Next
  // where a nested loop seeks. Sparse rows leave that to the nested loop,
  // whose EAVT seeks have the entity caches and bloom filters.
  const double gap = est.Datoms(attr->id) / rows_;
  if (!always && gap > kOrderedMaxGap) return;
  const double per = est.PerEntity(*attr);
  // Ties go to the walk: where it seeks as often as the nested loop, its
  // seeks land beside the last, in blocks it reads once.
  const double walk = rows_ * (std::min(gap, kSeekCost) + per);
  double other = rows_ * (kSeekCost + per);
  if (indep != nullptr) {
    // A hashed datom costs about three read in order (the table's memory
    // and its cache misses), a probe about two; and no row passes the join
    // before the whole build side is read.
    other = kHashBuildCost * indep->per_row + kHashProbeCost * rows_;
  }
  if (!always && walk > other) return;
  c->entity_order = true;
  c->cost = walk;
  c->access.index = storage::IndexOrder::kAevt;
  c->access.prefix_len = 2;
  c->access.per_row = per;
  // Range predicates bound the values read per entity, as for column
  // probes: a quick no before the filters (which stay) decide.
  c->access.range =
      RangeableType(attr->type) ? FindRange(p, false) : RangeCandidate();
  c->access.description = "AEVT a+e in entity order";
}

void ScopeBuilder::TrackOrder(const Step& step, const Choice* c) {
  const bool first = !placed_scan_;
  placed_scan_ = true;
  if (step.kind != Step::Kind::kPattern || c == nullptr) {
    ordered_ = kNoSlot;  // functions and calls: their order is their own
    return;
  }
  const PatternSpec& s = step.pattern;
  if (first) {
    // One value of AVET, or AEVT by attribute alone, holds its entities in
    // ascending order (history: a datom's assertion, then its retraction).
    const bool fresh_entity = s.e.is_slot() && !s.e.bound && !s.e.check;
    const bool scan =
        (s.index == storage::IndexOrder::kAvet && s.prefix_len == 2) ||
        (s.index == storage::IndexOrder::kAevt && s.prefix_len == 1 &&
         !s.lower.has_value() && !s.upper.has_value());
    ordered_ = fresh_entity && scan && request_.entry_rows <= 1 && !c->hash_join
                   ? s.e.slot
                   : kNoSlot;
    return;
  }
  if (ordered_ == kNoSlot) return;
  // A hash join's probes and a nested loop that seeks the same prefix for
  // every row emit in the rows' order; sorted probes reorder a batch by
  // their prefix, which keeps the order when the prefix starts with the
  // ordered entity.
  const bool by_entity =
      s.e.is_slot() && s.e.slot == ordered_ &&
      (c->entity_order || (s.index == storage::IndexOrder::kEavt &&
                           s.prefix_len >= 1 && !c->hash_join));
  if (!(c->hash_join || by_entity || !c->connected)) ordered_ = kNoSlot;
}

}  // namespace mentat::query::planner
