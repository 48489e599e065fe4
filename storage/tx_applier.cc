// Datom half of TxApplier: turns resolved ops into datoms, checks the
// constraints, and writes the datoms to the batch.

#include "internal/tx_applier.h"

#include <chrono>

#include "absl/container/flat_hash_set.h"
#include "internal/coding.h"
#include "internal/log_codec.h"
#include "mentat/base/str_cat.h"
#include "mentat/storage/entity_ids.h"
#include "mentat/storage/value_codec.h"

namespace mentat::storage::internal {
namespace {

int64_t NowMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The deepest chain of components retractEntity follows.
constexpr int kMaxComponentDepth = 1000;

}  // namespace

std::string TxApplier::DatomKey(EntityId e, EntityId a, const Value& v) {
  std::string key;
  EavtKey::Encode(e, a, v, &key);
  return key;
}

absl::StatusOr<TxReport> TxApplier::Apply(const TxRequest& request,
                                          StatsDelta* delta) {
  start_counter_ = state_->next_counter;
  tx_ = state_->Allocate(Partition::kTx);

  absl::Status s = ResolveOps(request);
  if (s.ok()) s = ResolveTempIds();
  if (s.ok()) s = CheckNested();
  if (s.ok()) s = BuildDatoms();
  if (s.ok()) s = MaintainComposites();
  if (s.ok()) s = CheckSystemWrites();
  if (s.ok()) s = CheckUniqueness();
  if (s.ok()) s = CheckSchemaChanges();
  if (s.ok()) s = PlanExcisions(/*replicated=*/false);
  if (s.ok()) s = ComputeStats(delta);
  if (s.ok()) s = WriteDatoms();
  if (s.ok() && schema_touched_) s = RebuildSchema();
  if (s.ok()) s = CheckEnsured();
  if (!s.ok()) return s;

  TxReport report;
  report.tx = tx_;
  report.tx_instant = tx_instant_;
  report.basis_before = state_->basis_tx;
  for (const TempId& t : tempids_) {
    // Tempids the tx-data parser generated (for maps without :db/id) start
    // with a byte that never occurs in UTF-8; callers never wrote them.
    if (t.nested || (!t.name.empty() && t.name[0] == '\xFF')) continue;
    report.tempids.emplace(t.name, t.id);
  }
  report.datoms.reserve(datoms_.size());
  for (PendingDatom& p : datoms_) report.datoms.push_back(std::move(p.datom));
  report.excised_datoms = excised_.size();
  state_->basis_tx = tx_;
  state_->last_tx_instant = tx_instant_;
  return report;
}

absl::Status TxApplier::BuildDatoms() {
  const Schema& schema = *state_->schema;
  // About one datom per op (a bulk import's transactions have thousands):
  // sized once instead of rehashing the indexes step by step.
  datoms_.reserve(ops_.size() + 1);
  datom_index_.reserve(ops_.size() + 1);
  card_one_index_.reserve(ops_.size() + 1);
  const Attribute* tx_instant_attr = schema.FindAttribute(ids::kDbTxInstant);
  const int64_t now = NowMicros();
  const int64_t max_skew =
      std::max<int64_t>(0, options_.tx_instant_max_skew_ms) * 1000;
  // The caller may set the transaction's time, between the previous
  // transaction's and the clock's (plus skew): instants never go back, so
  // a future one would hold every later instant there.
  for (const Op& o : ops_) {
    if (o.kind == TxOp::Kind::kAdd && Id(o.e) == tx_ &&
        o.attr == tx_instant_attr) {
      int64_t given = o.v.value.as_long();
      if (tx_instant_given_ && given != tx_instant_) {
        return OpError(absl::StatusCode::kInvalidArgument, o.source,
                       "two :db/txInstant values for one transaction");
      }
      if (given < state_->last_tx_instant) {
        return OpError(
            absl::StatusCode::kInvalidArgument, o.source,
            StrCat(":db/txInstant ", o.v.value.DebugString(),
                   " is earlier than the previous transaction's ",
                   Value::Instant(state_->last_tx_instant).DebugString()));
      }
      if (given > now + max_skew) {
        std::string message = StrCat(
            ":db/txInstant ", o.v.value.DebugString(),
            " is later than the transactor's clock (",
            Value::Instant(now).DebugString(), ") plus the ",
            options_.tx_instant_max_skew_ms, " ms allowed for clock skew");
        if (state_->last_tx_instant > now + max_skew) {
          StrAppend(&message,
                    "; the previous transaction's instant is itself that far "
                    "ahead, so leave :db/txInstant out until the clock "
                    "passes it");
        }
        return OpError(absl::StatusCode::kInvalidArgument, o.source, message);
      }
      tx_instant_ = given;
      tx_instant_given_ = true;
    }
  }
  if (!tx_instant_given_) {
    // A store whose last instant is ahead of the clock (given before the
    // skew rule existed, or a clock set back) keeps that instant until the
    // clock catches up: as_of and since by time need instants in order.
    tx_instant_ = std::max(now, state_->last_tx_instant);
    absl::Status s = AddAssertion(tx_, *tx_instant_attr,
                                  Value::Instant(tx_instant_), nullptr);
    if (!s.ok()) return s;
  }

  for (const Op& o : ops_) {
    const EntityId e = Id(o.e);
    absl::Status s;
    switch (o.kind) {
      case TxOp::Kind::kAdd:
        if (o.attr->id == ids::kDbEnsure) {
          // A request to check, not a fact (as in Datomic).
          ensures_.push_back({e, ValueOf(o.v).as_ref(), o.source});
          break;
        }
        s = AddAssertion(e, *o.attr, ValueOf(o.v), o.source);
        break;
      case TxOp::Kind::kRetract:
        s = AddRetraction(e, *o.attr, ValueOf(o.v), o.source);
        break;
      case TxOp::Kind::kRetractAttr: {
        std::vector<Value> values;
        if (!IsFresh(e)) {
          std::string prefix;
          EavtKey::EncodePrefix(e, o.attr->id, &prefix);
          s = group_->Scan(IndexOrder::kEavt, prefix, [&](const Datom& d) {
            values.push_back(d.v);
            return true;
          });
        }
        for (size_t i = 0; s.ok() && i < values.size(); ++i) {
          s = AddRetraction(e, *o.attr, values[i], o.source);
        }
        break;
      }
      case TxOp::Kind::kRetractEntity:
        s = RetractEntity(e, o.source, 0);
        break;
      case TxOp::Kind::kCas: {
        absl::StatusOr<std::optional<Value>> before =
            ValueBefore(e, o.attr->id);
        if (!before.ok()) {
          s = before.status();
          break;
        }
        const std::optional<Value>& current = *before;
        const bool matches =
            o.old_is_nil ? !current.has_value()
                         : current.has_value() && *current == ValueOf(o.old);
        if (!matches) {
          return OpError(absl::StatusCode::kFailedPrecondition, o.source,
                         StrCat("compare-and-swap failed on :", o.attr->ident,
                                " of entity ", e, ": expected ",
                                o.old_is_nil ? std::string("no value")
                                             : ValueOf(o.old).DebugString(),
                                ", found ",
                                current ? current->DebugString()
                                        : std::string("no value")));
        }
        s = AddAssertion(e, *o.attr, ValueOf(o.v), o.source);
        break;
      }
    }
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<Value>> TxApplier::ValueBefore(EntityId e,
                                                            EntityId a) {
  std::optional<Value> current;
  if (IsFresh(e)) return current;
  std::string prefix;
  EavtKey::EncodePrefix(e, a, &prefix);
  absl::Status s = group_->Scan(IndexOrder::kEavt, prefix, [&](const Datom& d) {
    current = d.v;
    return false;
  });
  if (!s.ok()) return s;
  return current;
}

absl::Status TxApplier::AddAssertion(EntityId e, const Attribute& attr, Value v,
                                     const TxOp* source) {
  if (!attr.many()) {
    auto prior = card_one_index_.find({e, attr.id});
    if (prior != card_one_index_.end()) {
      bool same;
      if (prior->second == kRedundantAssert) {
        auto r = FindDatom(e, attr.id, v);
        same = r != datom_index_.end() && r->second == kRedundantAssert;
      } else {
        same = datoms_[prior->second].datom.v == v;
      }
      if (!same) {
        const std::string other =
            prior->second == kRedundantAssert
                ? std::string("its current value")
                : datoms_[prior->second].datom.v.DebugString();
        return OpError(
            absl::StatusCode::kInvalidArgument, source,
            StrCat("two values for cardinality-one :", attr.ident,
                   " of entity ", e, ": ", other, " and ", v.DebugString()));
      }
    }
  }
  auto existing = FindDatom(e, attr.id, v);
  if (existing != datom_index_.end()) {
    const bool retracted = existing->second == kAbsentRetract ||
                           (existing->second != kRedundantAssert &&
                            !datoms_[existing->second].datom.added);
    if (retracted) {
      return OpError(
          absl::StatusCode::kInvalidArgument, source,
          StrCat("datom [", e, " :", attr.ident, " ", v.DebugString(),
                 "] is both asserted and retracted"));
    }
    return absl::OkStatus();  // the same assertion twice
  }
  const bool fresh = IsFresh(e);
  if (!attr.many()) {
    auto [it, inserted] =
        card_one_index_.try_emplace({e, attr.id}, datoms_.size());
    if (!inserted) {
      // Another assertion of a different value on the same entity.
      const Value& other =
          it->second == kRedundantAssert ? v : datoms_[it->second].datom.v;
      return OpError(
          absl::StatusCode::kInvalidArgument, source,
          StrCat("two values for cardinality-one :", attr.ident, " of entity ",
                 e, ": ", other.DebugString(), " and ", v.DebugString()));
    }
    if (!fresh) {
      std::vector<Datom> current;
      std::string prefix;
      EavtKey::EncodePrefix(e, attr.id, &prefix);
      absl::Status s =
          group_->Scan(IndexOrder::kEavt, prefix, [&](const Datom& d) {
            current.push_back(d);
            return true;
          });
      if (!s.ok()) return s;
      bool redundant = false;
      for (const Datom& d : current) {
        if (d.v == v) {
          redundant = true;
        } else {
          s = AddRetraction(e, attr, d.v, source, d.tx);
          if (!s.ok()) return s;
        }
      }
      if (redundant) {
        it->second = kRedundantAssert;
        IndexDatom(e, attr.id, v, kRedundantAssert);
        return absl::OkStatus();
      }
    }
    it->second = datoms_.size();
  } else if (!fresh) {
    auto tx = group_->Get(IndexOrder::kEavt, DatomKey(e, attr.id, v));
    if (!tx.ok()) return tx.status();
    if (tx->has_value()) {
      IndexDatom(e, attr.id, v, kRedundantAssert);
      return absl::OkStatus();
    }
  }
  IndexDatom(e, attr.id, v, datoms_.size());
  if (IsSchemaAttribute(attr.id)) schema_touched_ = true;
  datoms_.push_back(PendingDatom{Datom{e, attr.id, std::move(v), tx_, true},
                                 &attr, 0, source});
  return absl::OkStatus();
}

absl::Status TxApplier::AddRetraction(EntityId e, const Attribute& attr,
                                      const Value& v, const TxOp* source,
                                      EntityId asserted_tx) {
  auto existing = FindDatom(e, attr.id, v);
  if (existing != datom_index_.end()) {
    const bool asserted = existing->second == kRedundantAssert ||
                          (existing->second != kAbsentRetract &&
                           datoms_[existing->second].datom.added);
    if (asserted) {
      return OpError(
          absl::StatusCode::kInvalidArgument, source,
          StrCat("datom [", e, " :", attr.ident, " ", v.DebugString(),
                 "] is both asserted and retracted"));
    }
    return absl::OkStatus();  // the same retraction twice
  }
  std::optional<EntityId> asserted;
  if (asserted_tx != 0) {
    // Read by the caller's scan of this group: a point read would find
    // the same tx (a RocksDB Get was a fifth of the transactor's time
    // under single-datom updates).
    asserted = asserted_tx;
  } else if (!IsFresh(e)) {
    auto tx = group_->Get(IndexOrder::kEavt, DatomKey(e, attr.id, v));
    if (!tx.ok()) return tx.status();
    asserted = *tx;
  }
  if (!asserted) {
    // Retracting what is not there changes nothing, as in Datomic.
    IndexDatom(e, attr.id, v, kAbsentRetract);
    return absl::OkStatus();
  }
  IndexDatom(e, attr.id, v, datoms_.size());
  if (IsSchemaAttribute(attr.id)) schema_touched_ = true;
  datoms_.push_back(
      PendingDatom{Datom{e, attr.id, v, tx_, false}, &attr, *asserted, source});
  return absl::OkStatus();
}

absl::Status TxApplier::RetractEntity(EntityId e, const TxOp* source,
                                      int depth) {
  if (depth > kMaxComponentDepth) {
    return OpError(absl::StatusCode::kInvalidArgument, source,
                   "component references nest too deeply (a cycle?)");
  }
  if (IsFresh(e)) return absl::OkStatus();
  const Schema& schema = *state_->schema;
  std::vector<Datom> own, incoming;
  std::string prefix;
  EavtKey::EncodePrefix(e, &prefix);
  absl::Status s = group_->Scan(IndexOrder::kEavt, prefix, [&](const Datom& d) {
    own.push_back(d);
    return true;
  });
  if (!s.ok()) return s;
  prefix.clear();
  VaetKey::EncodePrefix(e, &prefix);
  s = group_->Scan(IndexOrder::kVaet, prefix, [&](const Datom& d) {
    incoming.push_back(d);
    return true;
  });
  if (!s.ok()) return s;
  for (const Datom& d : own) {
    const Attribute* attr = schema.FindAttribute(d.a);
    if (attr == nullptr) {
      return absl::DataLossError(
          StrCat("datom of entity ", e, " has unknown attribute ", d.a));
    }
    const bool already = FindDatom(d.e, d.a, d.v) != datom_index_.end();
    s = AddRetraction(e, *attr, d.v, source, d.tx);
    if (!s.ok()) return s;
    if (!already && attr->is_component && attr->is_ref()) {
      s = RetractEntity(d.v.as_ref(), source, depth + 1);
      if (!s.ok()) return s;
    }
  }
  for (const Datom& d : incoming) {
    const Attribute* attr = schema.FindAttribute(d.a);
    if (attr == nullptr) continue;
    s = AddRetraction(d.e, *attr, d.v, source, d.tx);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status TxApplier::CheckUniqueness() {
  // (a, encoded v) -> the entity this transaction gives it.
  absl::flat_hash_map<std::string, EntityId> claimed;
  for (const PendingDatom& p : datoms_) {
    if (!p.datom.added || p.attr->unique == Unique::kNone) continue;
    std::string prefix;
    AvetKey::EncodePrefix(p.datom.a, p.datom.v, &prefix);
    auto [it, inserted] = claimed.try_emplace(prefix, p.datom.e);
    if (!inserted && it->second != p.datom.e) {
      return OpError(absl::StatusCode::kFailedPrecondition, p.source,
                     StrCat("unique conflict: entities ", it->second, " and ",
                            p.datom.e, " both assert :", p.attr->ident, " ",
                            p.datom.v.DebugString()));
    }
    std::optional<EntityId> holder;
    absl::Status s =
        group_->Scan(IndexOrder::kAvet, prefix, [&](const Datom& d) {
          if (d.e == p.datom.e) return true;
          auto r = FindDatom(d.e, d.a, d.v);
          const bool retracted_here =
              r != datom_index_.end() && r->second != kRedundantAssert &&
              r->second != kAbsentRetract && !datoms_[r->second].datom.added;
          if (retracted_here) return true;
          holder = d.e;
          return false;
        });
    if (!s.ok()) return s;
    if (holder) {
      return OpError(absl::StatusCode::kFailedPrecondition, p.source,
                     StrCat("unique conflict: :", p.attr->ident, " ",
                            p.datom.v.DebugString(),
                            " is already held by entity ", *holder));
    }
  }
  return absl::OkStatus();
}

}  // namespace mentat::storage::internal
