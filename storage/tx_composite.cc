// Composite tuples (:db/tupleAttrs) in TxApplier: the transactor keeps an
// entity's composite equal to the tuple of its members' current values
// (nil for a member the entity lacks), asserting it when a member changes
// and retracting it when every member is gone, in the same transaction as
// the change. The datoms it adds are ordinary ones: uniqueness, the
// statistics, history, the log and the replicas see them like any other.

#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "internal/tx_applier.h"
#include "mentat/base/str_cat.h"
#include "mentat/storage/value_codec.h"

namespace mentat::storage::internal {
namespace {

std::string Shown(const std::optional<Value>& v) {
  return v.has_value() ? v->DebugString() : std::string("no value");
}

}  // namespace

absl::StatusOr<std::optional<Value>> TxApplier::ValueAfter(
    EntityId e, const Attribute& member) {
  auto asserted = card_one_index_.find({e, member.id});
  if (asserted != card_one_index_.end() &&
      asserted->second != kRedundantAssert) {
    return datoms_[asserted->second].datom.v;
  }
  // The batch does not hold this transaction's writes yet.
  absl::StatusOr<std::optional<Value>> before = ValueBefore(e, member.id);
  if (!before.ok()) return before.status();
  const std::optional<Value>& current = *before;
  if (!current.has_value()) return std::nullopt;
  auto r = FindDatom(e, member.id, *current);
  const bool retracted_here =
      r != datom_index_.end() && r->second != kRedundantAssert &&
      r->second != kAbsentRetract && !datoms_[r->second].datom.added;
  if (retracted_here) return std::nullopt;
  return current;
}

absl::Status TxApplier::MaintainComposites() {
  const Schema& schema = *state_->schema;
  struct Touched {
    EntityId e;
    const Attribute* composite;
    const TxOp* source;  // the op that touched it, for messages
  };
  std::vector<Touched> touched;
  absl::flat_hash_set<std::pair<EntityId, EntityId>> seen;
  auto touch = [&](EntityId e, const Attribute& attr, const TxOp* source) {
    if (attr.is_composite()) {
      if (seen.insert({e, attr.id}).second) {
        touched.push_back({e, &attr, source});
      }
      return;
    }
    for (EntityId c : attr.composites) {
      const Attribute* composite = schema.FindAttribute(c);
      if (composite == nullptr || !seen.insert({e, c}).second) continue;
      touched.push_back({e, composite, source});
    }
  };
  // An assertion that changed nothing still counts, as in Datomic: it is
  // how composites installed over existing data are filled in.
  for (const Op& o : ops_) {
    if (o.attr != nullptr &&
        (o.kind == TxOp::Kind::kAdd || o.kind == TxOp::Kind::kCas)) {
      touch(Id(o.e), *o.attr, o.source);
    }
  }
  // Retractions, implicit ones included (a replaced value, retractEntity
  // and the refs to the entity it retracts).
  for (const PendingDatom& p : datoms_) {
    if (!p.attr->composites.empty()) touch(p.datom.e, *p.attr, p.source);
  }

  for (const Touched& t : touched) {
    const Attribute& composite = *t.composite;
    std::vector<std::optional<Value>> elements;
    elements.reserve(composite.tuple_attrs.size());
    bool any = false;
    for (EntityId m : composite.tuple_attrs) {
      const Attribute* member = schema.FindAttribute(m);
      if (member == nullptr) {
        return absl::DataLossError(StrCat("composite :", composite.ident,
                                          " names attribute ", m,
                                          ", which the schema lacks"));
      }
      absl::StatusOr<std::optional<Value>> v = ValueAfter(t.e, *member);
      if (!v.ok()) return v.status();
      any |= v->has_value();
      elements.push_back(*std::move(v));
    }
    std::optional<Value> next;
    if (any) next = MakeTuple(elements);

    absl::StatusOr<std::optional<Value>> was = ValueBefore(t.e, composite.id);
    if (!was.ok()) return was.status();
    const std::optional<Value>& before = *was;

    // A value tx-data gave (to upsert through a unique composite) stands
    // only if it is the one the members make.
    auto given = card_one_index_.find({t.e, composite.id});
    if (given != card_one_index_.end()) {
      const std::optional<Value> written =
          given->second == kRedundantAssert
              ? before
              : std::optional<Value>(datoms_[given->second].datom.v);
      if (written != next) {
        return OpError(
            absl::StatusCode::kInvalidArgument, t.source,
            StrCat("composite tuple :", composite.ident, " of entity ", t.e,
                   " is given as ", Shown(written), ", but its members (",
                   TupleSpecText(composite), ") make ", Shown(next),
                   " after this transaction; the transactor maintains :",
                   composite.ident,
                   ", and tx-data may assert it only with that value (to "
                   "upsert)"));
      }
      continue;
    }
    if (next == before) continue;
    absl::Status s =
        next.has_value()
            // Retracts `before` too (cardinality one).
            ? AddAssertion(t.e, composite, *std::move(next), t.source)
            : AddRetraction(t.e, composite, *before, t.source);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace mentat::storage::internal
