// Bulk import: the transactor's own apply path (TxApplier) over an
// ImportBatch, which collects writes for SST ingestion instead of a
// WriteBatch.

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "internal/coding.h"
#include "internal/import_batch.h"
#include "internal/import_compaction.h"
#include "internal/meta_keys.h"
#include "internal/rocks_status.h"
#include "internal/transactor.h"
#include "internal/tx_applier.h"
#include "mentat/base/str_cat.h"

namespace mentat::storage {

using internal::Cf;
using internal::Fixed64BE;

absl::StatusOr<ImportReport> Transactor::ImportOnThread(
    ImportSource* source, const ImportOptions& options) {
  AssertOnTransactorThread("ImportOnThread");
  // After a failed write, as before a commit: an import writes the WAL too.
  if (!write_error_.ok() ||
      !core_->background_errors->WalSwitchedSinceFailure()) {
    const absl::Status refused = ResumeWrites();
    if (!refused.ok()) return refused;
  }
  auto stats = std::make_shared<Statistics>(*stats_);
  internal::StatsDirty dirty;
  internal::ImportBatch batch(core_.get(), options.filter_bytes,
                              options.summary_groups);
  internal::CompactionPause pause(core_.get());
  internal::TxState chunk_start = state_;
  ImportReport report;
  const std::string tmp_dir = core_->path + "/import-tmp";
  // Untracked attributes count their distinct values per chunk as it is
  // written (ImportDistinct), not per transaction. The set may only grow
  // between chunks: the transactions of one chunk all defer the same ones.
  auto defer_untracked = [&] {
    for (const auto& [a, st] : stats->all()) {
      if (!st->values_tracked) batch.CountDistinctOf(a);
    }
  };
  defer_untracked();
  // Lookup refs resolved by earlier transactions of the import. At most
  // kMaxLookups entries (about 100 bytes each with their keys, so some
  // 50 MB), then it starts over.
  constexpr size_t kMaxLookups = 1 << 19;
  absl::flat_hash_map<std::string, EntityId> lookups;

  // The chunk being written and ingested in the background while the
  // next one is applied: what to record once its files are in.
  struct Pending {
    internal::TxState state;
    std::shared_ptr<Statistics> stats;
    internal::StatsDirty dirty;
  };
  std::optional<Pending> pending;
  int chunk_number = 0;
  constexpr int kWriterThreads = 2;

  // Waits for the chunk in the background, then records its counters,
  // basis and statistics (synced), and publishes its state.
  auto finish = [&]() -> absl::Status {
    if (!pending) return absl::OkStatus();
    absl::Status s = batch.FinishIngest();
    if (!s.ok()) return s;
    // The chunk's own change of distinct values: into its statistics and
    // the running ones (the later chunks' statistics start from those).
    for (const auto& [a, change] : batch.TakeDistinctDeltas()) {
      pending->stats->Mutable(a).distinct_values += change;
      pending->dirty.attributes.insert(a);
      stats->Mutable(a).distinct_values += change;
      dirty.attributes.insert(a);
    }
    const internal::TxState& done = pending->state;
    rocksdb::WriteBatch meta;
    rocksdb::ColumnFamilyHandle* meta_cf = core_->cf(Cf::kMeta);
    meta.Put(meta_cf, internal::kMetaBasisKey, Fixed64BE(done.basis_tx))
        .PermitUncheckedError();
    meta.Put(meta_cf, internal::kMetaTxInstantKey,
             Fixed64BE(static_cast<uint64_t>(done.last_tx_instant)))
        .PermitUncheckedError();
    for (int p : {0, 3, 4}) {
      meta.Put(meta_cf, internal::MetaPartitionKey(p),
               Fixed64BE(done.next_counter[p]))
          .PermitUncheckedError();
    }
    internal::WriteStatsMeta(*pending->stats, pending->dirty, meta_cf, &meta);
    rocksdb::WriteOptions wo;
    wo.sync = true;
    rocksdb::Status w = PinMemtable();
    if (w.ok()) w = core_->db->Write(wo, &meta);
    if (!w.ok()) {
      // The commit path's error state: RocksDB stopped writes.
      write_error_ = w;
      if (internal::IsDiskFull(w)) {
        return internal::WriteFailure(w, "recording an imported chunk",
                                      core_->path);
      }
      return absl::UnavailableError(
          StrCat("recording an imported chunk: ", w.ToString()));
    }
    report.chunks++;
    chunk_start = done;
    // Readers get the chunk's state, not the transactions applied since.
    internal::TxState running = std::move(state_);
    state_ = done;
    Publish(pending->stats);
    state_ = std::move(running);
    pending.reset();
    return absl::OkStatus();
  };
  // Hands what was collected to the background (after the chunk before
  // it is in), and waits for the last chunk. Every chunk is written by two
  // threads: with one, the writer was the apply phase's critical path
  // (about 17 of m's 40 s of CPU) while the transactor and the parser
  // shared the other core and the transactor waited for it at each chunk.
  auto flush = [&](bool last) -> absl::Status {
    absl::Status s = finish();
    if (!s.ok()) return s;
    if (batch.collected_keys() == 0) return absl::OkStatus();
    pending = Pending{state_, std::make_shared<Statistics>(*stats), dirty};
    dirty = internal::StatsDirty();
    s = batch.StartIngest(StrCat(tmp_dir, "-", chunk_number++), kWriterThreads);
    if (!s.ok()) return s;
    if (last) return finish();
    defer_untracked();
    return absl::OkStatus();
  };

  // Merges what the ingested chunks left overlapping (or crowding L0)
  // into the last level, before the import answers and while compactions
  // are still paused: every family then takes writes at once. Its time is
  // the import's. After a failure too (the chunks before it are in), but
  // then the failure is what the import reports.
  auto settle = [&]() -> absl::Status {
    std::vector<Cf> families = batch.OverlappingFamiliesIngested();
    for (Cf cf : internal::FamiliesCrowdedInL0(core_.get())) {
      if (std::find(families.begin(), families.end(), cf) == families.end()) {
        families.push_back(cf);
      }
    }
    absl::Status s =
        internal::CompactImportedFamilies(core_.get(), families, 2);
    if (s.ok()) return s;
    return absl::Status(s.code(),
                        StrCat("the import's ", report.transactions,
                               " transactions are committed, but merging their "
                               "files failed: ",
                               s.message()));
  };

  absl::Status error;
  TxRequest request;
  for (;;) {
    request.ops.clear();
    absl::StatusOr<bool> more = source->Next(&request);
    if (!more.ok()) {
      error = more.status();
      break;
    }
    if (!*more) break;
    internal::TxState tx_state = state_;
    internal::StatsDelta delta;
    batch.SetSavePoint();
    internal::TxApplier applier(&batch, stats.get(), &tx_state, core_->options);
    applier.DeferDistinct(&batch.distinct_attributes());
    if (lookups.size() >= kMaxLookups) lookups.clear();
    applier.ShareLookups(&lookups);
    absl::StatusOr<TxReport> r = applier.Apply(request, &delta);
    if (!r.ok()) {
      batch.RollbackToSavePoint();
      error = absl::Status(
          r.status().code(),
          StrCat("import transaction ", report.transactions,
                 " (counting from 0) "
                 "failed, the ",
                 report.transactions,
                 " before it are imported: ", r.status().message()));
      break;
    }
    batch.PopSavePoint();
    // A resolution changes only when a unique value is retracted (or the
    // schema changes what is unique).
    if (tx_state.schema != state_.schema) lookups.clear();
    for (const Datom& d : r->datoms) {
      if (d.added || lookups.empty()) continue;
      const Attribute* attr = tx_state.schema->FindAttribute(d.a);
      if (attr == nullptr || attr->unique != Unique::kNone) lookups.clear();
    }
    state_ = std::move(tx_state);
    internal::ApplyStatsDelta(delta, core_->options.low_cardinality_limit,
                              stats.get(), &dirty);
    report.transactions++;
    report.datoms += static_cast<int64_t>(r->datoms.size());
    transactions_.fetch_add(1, std::memory_order_relaxed);
    datoms_.fetch_add(r->datoms.size(), std::memory_order_relaxed);
    source->OnReport(*r);
    if (batch.collected_keys() >= options.chunk_keys) {
      absl::Status s = flush(/*last=*/false);
      if (!s.ok()) {
        state_ = chunk_start;
        settle().IgnoreError();
        return s;
      }
    }
  }
  absl::Status s = flush(/*last=*/true);
  if (!s.ok()) {
    state_ = chunk_start;
    settle().IgnoreError();
    return s;
  }
  s = settle();
  if (!error.ok()) return error;
  if (!s.ok()) return s;
  return report;
}

}  // namespace mentat::storage
