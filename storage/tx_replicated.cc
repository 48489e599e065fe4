// TxApplier::ApplyReplicated: a replica applies a transaction of its
// primary's log (docs/replication.md). The primary resolved and checked
// the transaction; what is left is the part of Apply that follows
// BuildDatoms, run on the same batch so that the replica's keys,
// statistics, log and schema come out as the primary's did.

#include <algorithm>

#include "internal/tx_applier.h"
#include "mentat/base/str_cat.h"
#include "mentat/storage/entity_ids.h"
#include "mentat/storage/tx_log.h"

namespace mentat::storage::internal {
namespace {

// Raises the counter of `e`'s partition past `e`.
void CountId(EntityId e, std::array<int64_t, 5>* counters) {
  if (e <= 0) return;
  const int p = PartitionIndex(e);
  if (p != 0 && p != 3 && p != 4) return;
  (*counters)[p] = std::max((*counters)[p], (e & kCounterMask) + 1);
}

}  // namespace

absl::StatusOr<TxReport> TxApplier::ApplyReplicated(
    const ReplicatedEntry& entry, StatsDelta* delta) {
  if (entry.prev_tx != state_->basis_tx) {
    return absl::FailedPreconditionError(StrCat(
        "replicated transaction ", entry.tx, " follows transaction ",
        entry.prev_tx, " of the primary's log, but this store's basis is ",
        state_->basis_tx, ": ",
        entry.prev_tx < state_->basis_tx ? "a repeat" : "a gap",
        " in the stream; nothing was applied"));
  }
  if (entry.prev_instant != 0 && entry.prev_tx != 0 &&
      entry.prev_instant != state_->last_tx_instant) {
    return absl::FailedPreconditionError(
        StrCat("replicated transaction ", entry.tx, " follows transaction ",
               entry.prev_tx, " of the primary's log, which has instant ",
               entry.prev_instant, ", but this store's transaction ",
               entry.prev_tx, " has instant ", state_->last_tx_instant,
               ": the follower's history differs from the primary's (another "
               "transaction under the same id); nothing was applied"));
  }
  if (entry.header.term < state_->term) {
    return absl::FailedPreconditionError(
        StrCat("replicated transaction ", entry.tx, " was written in term ",
               entry.header.term, ", older than term ", state_->term,
               " whose entries this store holds: a deposed primary's stream; "
               "nothing was applied"));
  }
  if (!IsTxId(entry.tx) || entry.tx <= state_->basis_tx) {
    return absl::DataLossError(
        StrCat("replicated entry names transaction ", entry.tx,
               ", which is not a transaction id after this store's basis ",
               state_->basis_tx));
  }
  tx_ = entry.tx;
  tx_instant_ = TxInstantOf(entry.tx, entry.datoms);
  if (tx_instant_ == 0) {
    return absl::DataLossError(
        StrCat("replicated transaction ", entry.tx, " has no :db/txInstant"));
  }
  const Schema& schema = *state_->schema;
  datoms_.reserve(entry.datoms.size());
  std::string key;
  for (const Datom& d : entry.datoms) {
    // Attributes resolve in the schema before the transaction, as they did
    // on the primary (a transaction cannot use an attribute it defines).
    const Attribute* attr = schema.FindAttribute(d.a);
    if (attr == nullptr) {
      return absl::DataLossError(
          StrCat("replicated transaction ", entry.tx, ": datom ",
                 d.DebugString(), " names attribute ", d.a,
                 ", which this store's schema does not hold (diverged)"));
    }
    EntityId asserted_tx = 0;
    if (!d.added) {
      key.clear();
      EavtKey::Encode(d.e, d.a, d.v, &key);
      auto held = group_->Get(IndexOrder::kEavt, key);
      if (!held.ok()) return held.status();
      if (!held->has_value()) {
        return absl::DataLossError(StrCat(
            "replicated transaction ", entry.tx, " retracts ", d.DebugString(),
            ", which this store does not hold: it diverged from the "
            "primary"));
      }
      asserted_tx = **held;
    }
    if (IsSchemaAttribute(d.a)) schema_touched_ = true;
    Datom datom = d;
    datom.tx = entry.tx;
    datoms_.push_back(
        PendingDatom{std::move(datom), attr, asserted_tx, nullptr});
  }

  // Counters and term first: WriteDatoms records them in the entry it
  // writes, which then has the primary's bytes.
  CountId(entry.tx, &state_->next_counter);
  for (const PendingDatom& p : datoms_) {
    CountId(p.datom.e, &state_->next_counter);
    if (p.datom.v.type() == ValueType::kRef) {
      CountId(p.datom.v.as_ref(), &state_->next_counter);
    }
  }
  if (entry.header.has_counters) {
    // Exact: ids the primary handed out that no datom names (a group
    // whose fsync failed) are skipped here too.
    for (size_t i = 0; i < kLogHeaderPartitions.size(); ++i) {
      int64_t& c = state_->next_counter[kLogHeaderPartitions[i]];
      c = std::max(c, entry.header.next_counter[i]);
    }
  }
  state_->term = entry.header.term;

  absl::Status s = PlanExcisions(/*replicated=*/true);
  if (s.ok()) s = ComputeStats(delta);
  if (s.ok()) s = WriteDatoms();
  if (s.ok() && schema_touched_) s = RebuildSchema();
  if (!s.ok()) return s;

  TxReport report;
  report.tx = tx_;
  report.tx_instant = tx_instant_;
  report.basis_before = state_->basis_tx;
  report.excised_datoms = excised_.size();
  report.datoms.reserve(datoms_.size());
  for (PendingDatom& p : datoms_) report.datoms.push_back(std::move(p.datom));
  state_->basis_tx = tx_;
  state_->last_tx_instant = std::max(state_->last_tx_instant, tx_instant_);
  return report;
}

}  // namespace mentat::storage::internal
