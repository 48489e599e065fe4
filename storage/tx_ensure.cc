// Attribute predicates (:db.attr/preds) and entity specs (:db/ensure with
// :db.entity/attrs) in TxApplier. Both are checked last, once the
// transaction's datoms are in the batch and the schema is rebuilt: reads
// then see the state the transaction leaves (the DB, the group before it
// and its own writes), and a predicate or a spec installed by the same
// transaction applies to it. A failure rolls the whole transaction back.

#include <string>
#include <vector>

#include "internal/tx_applier.h"
#include "mentat/base/str_cat.h"
#include "mentat/storage/entity_ids.h"
#include "mentat/storage/keys.h"

namespace mentat::storage::internal {
namespace {

std::string Named(const Schema& schema, EntityId e) {
  const std::string* ident = schema.IdentForEntity(e);
  return ident != nullptr ? StrCat(":", *ident) : StrCat("entity ", e);
}

}  // namespace

absl::Status TxApplier::CheckEnsured() {
  const Schema& schema = *state_->schema;
  for (const PendingDatom& p : datoms_) {
    if (!p.datom.added) continue;
    const Attribute* attr =
        schema_touched_ ? schema.FindAttribute(p.datom.a) : p.attr;
    if (attr == nullptr) continue;
    for (size_t i = 0; i < attr->preds.size(); ++i) {
      if (!AttributePredicateHolds(attr->preds[i], p.datom.v)) {
        return OpError(absl::StatusCode::kInvalidArgument, p.source,
                       StrCat("value ", p.datom.v.DebugString(),
                              " of :", attr->ident, " for entity ", p.datom.e,
                              " fails the predicate ", attr->pred_names[i],
                              " of :", attr->ident, " (:db.attr/preds)"));
      }
    }
    if (p.datom.a == ids::kDbEntityAttrs &&
        schema.FindAttribute(p.datom.v.text()) == nullptr) {
      return OpError(
          absl::StatusCode::kInvalidArgument, p.source,
          StrCat(":db.entity/attrs of ", Named(schema, p.datom.e),
                 " names :", p.datom.v.text(), ", which is no attribute"));
    }
  }

  for (const Ensure& ensure : ensures_) {
    std::vector<std::string> required;
    std::string prefix;
    EavtKey::EncodePrefix(ensure.spec, ids::kDbEntityAttrs, &prefix);
    absl::Status s =
        group_->Scan(IndexOrder::kEavt, prefix, [&](const Datom& d) {
          required.push_back(d.v.text());
          return true;
        });
    if (!s.ok()) return s;
    if (required.empty()) {
      return OpError(absl::StatusCode::kInvalidArgument, ensure.source,
                     StrCat(":db/ensure names ", Named(schema, ensure.spec),
                            ", which is not an entity spec (it has no "
                            ":db.entity/attrs)"));
    }
    std::string missing;
    for (const std::string& ident : required) {
      const Attribute* attr = schema.FindAttribute(ident);
      bool present = false;
      if (attr != nullptr) {
        prefix.clear();
        EavtKey::EncodePrefix(ensure.e, attr->id, &prefix);
        s = group_->Scan(IndexOrder::kEavt, prefix, [&](const Datom&) {
          present = true;
          return false;
        });
        if (!s.ok()) return s;
      }
      if (!present) StrAppend(&missing, missing.empty() ? ":" : ", :", ident);
    }
    if (!missing.empty()) {
      // Whether an entity passes depends on what it already holds (the
      // same tx-data passes for an entity that has the attributes): a
      // precondition, as for cas and uniqueness.
      return OpError(absl::StatusCode::kFailedPrecondition, ensure.source,
                     StrCat("entity ", ensure.e,
                            " does not satisfy entity "
                            "spec ",
                            Named(schema, ensure.spec), ": it lacks ", missing,
                            " (required by :db.entity/attrs)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace mentat::storage::internal
