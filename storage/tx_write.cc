// The last steps of TxApplier: schema checks, statistics, writing the
// datoms to the batch, and rebuilding the schema when it changed.

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "internal/coding.h"
#include "internal/fulltext_index.h"
#include "internal/log_codec.h"
#include "internal/tx_applier.h"
#include "mentat/base/str_cat.h"
#include "mentat/storage/entity_ids.h"
#include "mentat/storage/value_codec.h"

namespace mentat::storage::internal {
namespace {

bool IsBootstrapEntity(EntityId e) {
  return PartitionIndex(e) == 0 && e < ids::kFirstUserDbCounter;
}

}  // namespace

absl::Status TxApplier::CheckSystemWrites() {
  const Schema& schema = *state_->schema;
  for (const PendingDatom& p : datoms_) {
    // Datoms without a source (the automatic :db/txInstant) are the
    // transactor's own.
    if (p.source == nullptr || p.source->system) continue;
    // Reached by retractEntity of a transaction entity; plain ops naming a
    // system attribute were refused when resolved.
    if (p.attr->system) {
      return OpError(absl::StatusCode::kInvalidArgument, p.source,
                     SystemAttributeMessage(*p.attr));
    }
    if (PartitionIndex(p.datom.e) == 0) {
      const Attribute* target = schema.FindAttribute(p.datom.e);
      if (target != nullptr && target->system) {
        return OpError(absl::StatusCode::kInvalidArgument, p.source,
                       StrCat(":", target->ident,
                              " is a system attribute (ident namespace "
                              "mentat.*), whose schema tx-data cannot change"));
      }
    }
    if (p.datom.a == ids::kDbIdent && IsSystemIdent(p.datom.v.text())) {
      return OpError(absl::StatusCode::kInvalidArgument, p.source,
                     StrCat("ident :", p.datom.v.text(),
                            " is in the system namespace mentat.*, where "
                            "tx-data cannot ",
                            p.datom.added ? "define" : "retract", " idents"));
    }
  }
  return absl::OkStatus();
}

absl::Status TxApplier::CheckSchemaChanges() {
  if (!schema_touched_) return absl::OkStatus();
  const Schema& schema = *state_->schema;
  for (const PendingDatom& p : datoms_) {
    const EntityId a = p.datom.a;
    if (!IsSchemaAttribute(a)) continue;
    if (IsBootstrapEntity(p.datom.e)) {
      return OpError(absl::StatusCode::kInvalidArgument, p.source,
                     StrCat("entity ", p.datom.e,
                            " is part of the bootstrap schema and "
                            "cannot be changed"));
    }
    const Attribute* existing = schema.FindAttribute(p.datom.e);
    if (existing != nullptr &&
        (a == ids::kDbTupleType || a == ids::kDbTupleTypes ||
         a == ids::kDbTupleAttrs)) {
      // Stored tuples were checked against the definition they were
      // written under.
      return OpError(absl::StatusCode::kInvalidArgument, p.source,
                     StrCat("cannot change the tuple definition of "
                            "attribute :",
                            existing->ident));
    }
    if (!p.datom.added) {
      if (existing == nullptr) continue;
      if (a == ids::kDbIdent || a == ids::kDbValueType ||
          a == ids::kDbCardinality) {
        // A replacement (a rename, a new cardinality) arrives as an
        // assertion; a bare retraction would orphan the attribute's
        // datoms, current and past, which readers and retractEntity
        // resolve through the schema.
        bool replaced = false;
        for (const PendingDatom& q : datoms_) {
          if (q.datom.added && q.datom.e == p.datom.e && q.datom.a == a) {
            replaced = true;
          }
        }
        if (!replaced) {
          return OpError(
              absl::StatusCode::kInvalidArgument, p.source,
              a == ids::kDbIdent
                  ? StrCat("cannot retract the :db/ident of attribute :",
                           existing->ident,
                           ": an attribute keeps a name while datoms, their "
                           "history and the log use it; rename it by "
                           "asserting a new :db/ident")
                  : StrCat("cannot retract ",
                           a == ids::kDbValueType ? ":db/valueType"
                                                  : ":db/cardinality",
                           " of attribute :", existing->ident));
        }
      } else if (a == ids::kDbFulltext && p.datom.v.as_bool()) {
        return OpError(absl::StatusCode::kInvalidArgument, p.source,
                       StrCat("cannot change the :db/fulltext of attribute :",
                              existing->ident));
      }
      continue;
    }
    const Value& v = p.datom.v;
    if (existing != nullptr && !existing->composites.empty() &&
        ((a == ids::kDbIdent && v.text() != existing->ident) ||
         (a == ids::kDbCardinality && v.as_ref() == ids::kDbCardinalityMany))) {
      // A composite names its members by ident and holds one value of
      // each.
      const Attribute* composite =
          schema.FindAttribute(existing->composites.front());
      return OpError(
          absl::StatusCode::kInvalidArgument, p.source,
          StrCat("cannot ",
                 a == ids::kDbIdent ? "rename" : "make cardinality many",
                 " attribute :", existing->ident,
                 ": it is a member of composite tuple :",
                 composite != nullptr ? composite->ident : std::string("?"),
                 " (:db/tupleAttrs)"));
    }
    switch (a) {
      case ids::kDbFulltext:
        if (existing != nullptr && existing->fulltext != v.as_bool()) {
          return OpError(absl::StatusCode::kInvalidArgument, p.source,
                         StrCat("cannot change the :db/fulltext of "
                                "attribute :",
                                existing->ident));
        }
        break;
      case ids::kDbValueType:
        if (!IsValueTypeEntity(v.as_ref())) {
          return OpError(absl::StatusCode::kInvalidArgument, p.source,
                         ":db/valueType must be one of the :db.type/ idents");
        }
        if (existing != nullptr) {
          return OpError(absl::StatusCode::kInvalidArgument, p.source,
                         StrCat("cannot change the :db/valueType of "
                                "attribute :",
                                existing->ident));
        }
        break;
      case ids::kDbCardinality:
        if (v.as_ref() != ids::kDbCardinalityOne &&
            v.as_ref() != ids::kDbCardinalityMany) {
          return OpError(absl::StatusCode::kInvalidArgument, p.source,
                         ":db/cardinality must be :db.cardinality/one or "
                         ":db.cardinality/many");
        }
        if (existing != nullptr && existing->many() &&
            v.as_ref() == ids::kDbCardinalityOne) {
          // Allowed only if no entity holds two values. (AVET, not AEVT:
          // the group's AEVT writes are not indexed for reading.)
          std::string prefix;
          AvetKey::EncodePrefix(existing->id, &prefix);
          absl::flat_hash_set<EntityId> holders;
          std::optional<EntityId> offender;
          absl::Status s =
              group_->Scan(IndexOrder::kAvet, prefix, [&](const Datom& d) {
                if (!holders.insert(d.e).second) {
                  offender = d.e;
                  return false;
                }
                return true;
              });
          if (!s.ok()) return s;
          if (offender) {
            return OpError(absl::StatusCode::kFailedPrecondition, p.source,
                           StrCat("cannot make :", existing->ident,
                                  " cardinality one: entity ", *offender,
                                  " has several values"));
          }
        }
        break;
      case ids::kDbUnique: {
        if (v.as_ref() != ids::kDbUniqueValue &&
            v.as_ref() != ids::kDbUniqueIdentity) {
          return OpError(absl::StatusCode::kInvalidArgument, p.source,
                         ":db/unique must be :db.unique/value or "
                         ":db.unique/identity");
        }
        if (existing != nullptr && existing->unique == Unique::kNone) {
          // Allowed only if the current values are already unique.
          std::string prefix;
          AvetKey::EncodePrefix(existing->id, &prefix);
          std::optional<Value> last;
          std::optional<Value> offender;
          absl::Status s =
              group_->Scan(IndexOrder::kAvet, prefix, [&](const Datom& d) {
                if (last && *last == d.v) {
                  offender = d.v;
                  return false;
                }
                last = d.v;
                return true;
              });
          if (!s.ok()) return s;
          if (offender) {
            return OpError(absl::StatusCode::kFailedPrecondition, p.source,
                           StrCat("cannot make :", existing->ident,
                                  " unique: value ", offender->DebugString(),
                                  " is held by several entities"));
          }
        }
        break;
      }
      default:
        break;
    }
  }
  return absl::OkStatus();
}

absl::Status TxApplier::ComputeStats(StatsDelta* delta) {
  // Untracked attributes: net change per (a, v), resolved against AVET.
  struct Net {
    const Attribute* attr;
    Value v;
    int64_t added = 0;
    int64_t removed = 0;
  };
  absl::flat_hash_map<std::string, Net> untracked;
  auto count = [&](const Datom& datom, const Attribute* attr) {
    const EntityId a = datom.a;
    auto& d = delta->by_attribute[a];
    const int64_t sign = datom.added ? 1 : -1;
    d.datoms += sign;
    const AttributeStats* st = group_stats_->Find(a);
    if (st == nullptr || st->values_tracked) {
      d.values[datom.v] += sign;
      return;
    }
    if (distinct_deferred_ != nullptr && distinct_deferred_->contains(a)) {
      return;
    }
    std::string prefix;
    AvetKey::EncodePrefix(a, datom.v, &prefix);
    auto [it, inserted] = untracked.try_emplace(prefix);
    if (inserted) {
      it->second.attr = attr;
      it->second.v = datom.v;
    }
    (datom.added ? it->second.added : it->second.removed)++;
  };
  for (const PendingDatom& p : datoms_) count(p.datom, p.attr);
  // An excised current datom leaves the current state as a retraction
  // would (with no history).
  for (const ExcisedDatom& x : excised_) {
    if (x.retracted != 0) continue;
    Datom gone = x.datom;
    gone.added = false;
    count(gone, x.attr);
  }
  for (const auto& [prefix, net] : untracked) {
    // Count holders before the transaction, up to one more than it
    // removes: enough to know whether any remain.
    int64_t before = 0;
    const int64_t cap = net.removed + 1;
    // Nothing holds an instant past the ceiling (the transaction's own,
    // almost always): no scan.
    const bool past_ceiling = net.attr->id == ids::kDbTxInstant &&
                              net.v.type() == ValueType::kInstant &&
                              net.v.as_long() > state_->tx_instant_ceiling;
    absl::Status s =
        past_ceiling
            ? absl::OkStatus()
            : group_->Scan(IndexOrder::kAvet, prefix,
                           [&](const Datom&) { return ++before < cap; });
    if (!s.ok()) return s;
    const int64_t after = before + net.added - net.removed;
    delta->by_attribute[net.attr->id].distinct +=
        (after > 0 ? 1 : 0) - (before > 0 ? 1 : 0);
  }
  for (const PendingDatom& p : datoms_) {
    if (p.datom.added && p.datom.a == ids::kDbTxInstant &&
        p.datom.v.type() == ValueType::kInstant) {
      state_->tx_instant_ceiling =
          std::max(state_->tx_instant_ceiling, p.datom.v.as_long());
    }
  }
  return absl::OkStatus();
}

absl::Status TxApplier::WriteDatoms() {
  // First: the excised keys go before the transaction's own (its request
  // entity) are written.
  if (absl::Status s = WriteExcisions(); !s.ok()) return s;
  const std::string tx_bytes = Fixed64BE(static_cast<uint64_t>(tx_));
  std::string key;
  std::vector<Datom> log;
  log.reserve(datoms_.size());
  for (const PendingDatom& p : datoms_) {
    const Datom& d = p.datom;
    const int orders = p.attr->is_ref() ? 4 : 3;
    for (int i = 0; i < orders; ++i) {
      const IndexOrder order = static_cast<IndexOrder>(i);
      key.clear();
      EncodeKey(order, d, &key);
      if (d.added) {
        group_->PutCurrent(order, key, tx_);
        if (i == 0 && p.attr->fulltext) {
          absl::Status s = PutPostings(d.a, d.e, d.v, group_);
          if (!s.ok()) return s;
        }
      } else {
        group_->DeleteCurrent(order, key);
        if (!p.attr->no_history) {
          // History keeps the retracted interval [asserted_tx, tx).
          PutFixed64BE(static_cast<uint64_t>(p.asserted_tx), &key);
          group_->PutRaw(HistoryCf(order), key, tx_bytes);
        }
      }
    }
    log.push_back(d);
  }
  // Every id this transaction allocated is allocated by now (tempids were
  // resolved before the datoms were built): the counters are final.
  LogEntryHeader header;
  header.term = state_->term;
  for (size_t i = 0; i < kLogHeaderPartitions.size(); ++i) {
    header.next_counter[i] = state_->next_counter[kLogHeaderPartitions[i]];
  }
  std::string entry;
  EncodeLogEntry(header, log, &entry);
  group_->PutRaw(Cf::kLog, tx_bytes, entry);
  return absl::OkStatus();
}

absl::Status TxApplier::RebuildSchema() {
  std::vector<EntityId> entities;
  std::string prefix;
  AvetKey::EncodePrefix(ids::kDbIdent, &prefix);
  absl::Status s = group_->Scan(IndexOrder::kAvet, prefix, [&](const Datom& d) {
    entities.push_back(d.e);
    return true;
  });
  if (!s.ok()) return s;
  // Entities that got a type or cardinality but lost (or never had) an
  // ident must be caught too.
  for (const PendingDatom& p : datoms_) {
    if (p.datom.added &&
        (p.datom.a == ids::kDbValueType || p.datom.a == ids::kDbCardinality)) {
      entities.push_back(p.datom.e);
    }
  }
  std::vector<Datom> datoms;
  absl::flat_hash_set<EntityId> seen;
  for (EntityId e : entities) {
    if (!seen.insert(e).second) continue;
    prefix.clear();
    EavtKey::EncodePrefix(e, &prefix);
    bool has_ident = false, has_type = false, has_card = false;
    s = group_->Scan(IndexOrder::kEavt, prefix, [&](const Datom& d) {
      has_ident |= d.a == ids::kDbIdent;
      has_type |= d.a == ids::kDbValueType;
      has_card |= d.a == ids::kDbCardinality;
      datoms.push_back(d);
      return true;
    });
    if (!s.ok()) return s;
    if ((has_type || has_card) && !(has_ident && has_type && has_card)) {
      const TxOp* source = nullptr;
      for (const PendingDatom& p : datoms_) {
        if (p.datom.e == e) {
          source = p.source;
          break;
        }
      }
      return OpError(absl::StatusCode::kInvalidArgument, source,
                     StrCat("attribute entity ", e,
                            " needs :db/ident, :db/valueType and "
                            ":db/cardinality"));
    }
  }
  auto schema = Schema::FromDatoms(datoms);
  if (!schema.ok()) return schema.status();
  // Flags that only make sense for one value type (Datomic's rules).
  for (const PendingDatom& p : datoms_) {
    if (!p.datom.added ||
        (p.datom.a != ids::kDbIsComponent && p.datom.a != ids::kDbFulltext &&
         p.datom.a != ids::kDbValueType && p.datom.a != ids::kDbTupleType &&
         p.datom.a != ids::kDbTupleTypes && p.datom.a != ids::kDbTupleAttrs &&
         p.datom.a != ids::kDbAttrPreds)) {
      continue;
    }
    const Attribute* attr = (*schema)->FindAttribute(p.datom.e);
    if (attr == nullptr) {
      if (p.datom.a == ids::kDbAttrPreds) {
        return OpError(absl::StatusCode::kInvalidArgument, p.source,
                       StrCat(":db.attr/preds on entity ", p.datom.e,
                              ", which is not an attribute"));
      }
      continue;
    }
    if (attr->is_component && !attr->is_ref()) {
      return OpError(absl::StatusCode::kInvalidArgument, p.source,
                     StrCat(":db/isComponent needs a :db.type/ref attribute; :",
                            attr->ident, " is ", ValueTypeIdent(attr->type)));
    }
    if (attr->fulltext && attr->type != ValueType::kString) {
      return OpError(absl::StatusCode::kInvalidArgument, p.source,
                     StrCat(":db/fulltext needs a :db.type/string attribute; :",
                            attr->ident, " is ", ValueTypeIdent(attr->type)));
    }
    if (absl::Status bad = CheckTupleSpec(*attr); !bad.ok()) {
      return OpError(absl::StatusCode::kInvalidArgument, p.source,
                     std::string(bad.message()));
    }
    if (absl::Status bad = CheckAttributePredicates(*attr); !bad.ok()) {
      return OpError(absl::StatusCode::kInvalidArgument, p.source,
                     std::string(bad.message()));
    }
  }
  state_->schema = *schema;
  return absl::OkStatus();
}

}  // namespace mentat::storage::internal
