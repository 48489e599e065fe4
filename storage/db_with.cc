// Db::With: speculative transactions, applied by the transactor's own
// TxApplier to a SpeculativeBatch instead of a commit group.

#include <algorithm>

#include "internal/coding.h"
#include "internal/log_codec.h"
#include "internal/meta_keys.h"
#include "internal/rocks_status.h"
#include "internal/speculative_layer.h"
#include "internal/store_core.h"
#include "internal/tx_applier.h"
#include "internal/tx_state.h"
#include "mentat/base/str_cat.h"
#include "mentat/storage/db.h"

namespace mentat::storage {
namespace {

// The partition counters after a committed Db's basis transaction, as its
// snapshot holds them: the counters in the basis's log entry (every entry
// since format 2 carries them all), or else those in `meta`. Meta alone
// may lag: a commit rewrites only the counters it moved, and a store
// whose counters were repaired when it opened writes each only when it
// next moves.
[[nodiscard]] absl::Status ReadCounters(const Db& db,
                                        std::array<int64_t, 5>* counters) {
  const internal::StoreCore& core = db.core();
  rocksdb::ReadOptions ro;
  ro.snapshot = db.snapshot();
  for (int p : {0, 3, 4}) {
    std::string value;
    const std::string key = internal::MetaPartitionKey(p);
    rocksdb::Status s =
        core.db->Get(ro, core.cf(internal::Cf::kMeta), key, &value);
    if (!s.ok())
      return internal::ReadFailure(s, "reading the partition counters");
    if (value.size() != 8) {
      return absl::DataLossError("a partition counter in meta is malformed");
    }
    (*counters)[p] = static_cast<int64_t>(internal::DecodeFixed64BE(value));
  }
  std::string entry;
  rocksdb::Status s = core.db->Get(
      ro, core.cf(internal::Cf::kLog),
      internal::Fixed64BE(static_cast<uint64_t>(db.basis_tx())), &entry);
  if (s.IsNotFound()) return absl::OkStatus();  // the bootstrap basis
  if (!s.ok()) return internal::ReadFailure(s, "reading the basis's log entry");
  internal::LogEntryHeader header;
  absl::Status h =
      internal::DecodeLogEntryHeader(db.basis_tx(), entry, &header);
  if (!h.ok()) return h;
  if (!header.has_counters) return absl::OkStatus();
  for (size_t i = 0; i < internal::kLogHeaderPartitions.size(); ++i) {
    int64_t& c = (*counters)[internal::kLogHeaderPartitions[i]];
    c = std::max(c, header.next_counter[i]);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<SpeculativeTx> Db::With(const TxRequest& request) const {
  internal::TxState state;
  if (layer_ != nullptr) {
    state.next_counter = next_counter_;
  } else {
    absl::Status s = ReadCounters(*this, &state.next_counter);
    if (!s.ok()) return s;
  }
  state.last_tx_instant = basis_tx_instant_;
  state.basis_tx = basis_tx_;
  state.schema = schema_;

  internal::SpeculativeBatch batch(View(Basis::Current()));
  internal::StatsDelta delta;
  internal::TxApplier applier(&batch, stats_.get(), &state, core_->options);
  absl::StatusOr<TxReport> report = applier.Apply(request, &delta);
  if (!report.ok()) return report.status();

  auto stats = std::make_shared<Statistics>(*stats_);
  internal::StatsDirty dirty;  // nothing is written
  internal::ApplyStatsDelta(delta, core_->options.low_cardinality_limit,
                            stats.get(), &dirty);
  auto after = std::make_shared<Db>(core_, snapshot_, state.basis_tx,
                                    state.last_tx_instant, state.schema,
                                    std::move(stats));
  after->parent_ = shared_from_this();
  after->layer_ = batch.TakeLayer(report->tx);
  after->next_counter_ = state.next_counter;
  return SpeculativeTx{*std::move(report), std::move(after)};
}

}  // namespace mentat::storage
