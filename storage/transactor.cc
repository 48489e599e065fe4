#include "internal/transactor.h"

#include <pthread.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <thread>
#include <utility>

#include "absl/synchronization/mutex.h"
#include "internal/coding.h"
#include "internal/column_image.h"
#include "internal/commit_batch.h"
#include "internal/excision_purge.h"
#include "internal/insert_hints.h"
#include "internal/key_ordered_batch.h"
#include "internal/meta_keys.h"
#include "internal/rocks_status.h"
#include "internal/tx_applier.h"
#include "mentat/base/str_cat.h"

namespace mentat::storage {

using internal::Cf;
using internal::Fixed64BE;

Transactor::Transactor(std::shared_ptr<internal::StoreCore> core,
                       internal::TxState state,
                       std::shared_ptr<Statistics> stats,
                       std::shared_ptr<const Db> initial)
    : core_(std::move(core)),
      state_(std::move(state)),
      stats_(std::move(stats)),
      latest_(initial),
      written_(std::move(initial)),
      pipelined_(core_->options.sync_commits &&
                 core_->options.pipeline_commits) {
  if (pipelined_) {
    sync_thread_ = std::thread([this] {
      pthread_setname_np(pthread_self(), "mentat-sync");
      SyncLoop();
    });
  }
  thread_ = std::thread([this] {
    // Named for top -H and per-thread CPU: the import's threads too.
    pthread_setname_np(pthread_self(), "mentat-tx");
    Run();
  });
}

Transactor::~Transactor() { Stop(); }

void Transactor::Submit(TxRequest request, TxCallback done) {
  Pending p;
  p.request = std::move(request);
  p.done = std::move(done);
  Enqueue(std::move(p));
}

void Transactor::SubmitReplicated(internal::ReplicatedEntry entry,
                                  TxCallback done) {
  Pending p;
  p.replicated = std::make_unique<internal::ReplicatedEntry>(std::move(entry));
  p.done = std::move(done);
  Enqueue(std::move(p));
}

void Transactor::Enqueue(Pending p) {
  absl::Status refused;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) {
      refused = absl::UnavailableError("the store is closing");
    } else if (queue_.size() >= core_->options.queue_capacity) {
      refused = absl::ResourceExhaustedError(
          StrCat("the transaction queue is full (",
                 core_->options.queue_capacity, " waiting); retry later"));
    } else {
      queue_.push_back(std::move(p));
      p.done = nullptr;
    }
  }
  if (!refused.ok()) {
    p.done(refused);
    return;
  }
  cv_.Signal();
}

void Transactor::InvalidateCached(
    const std::vector<absl::StatusOr<TxReport>>& results) {
  AssertOnTransactorThread("InvalidateCached");
  internal::RecordCache* entities = core_->entity_cache.get();
  internal::RecordCache* values = core_->value_cache.get();
  // Before the write and the publish: no reader of the new basis can find
  // a record from before it, and no reader of an older basis can insert
  // one (RecordCache::Insert).
  std::string prefix;
  for (const auto& r : results) {
    if (!r.ok()) continue;
    EntityId last = 0;
    for (const Datom& d : r->datoms) {
      if (entities != nullptr && d.e != last) {
        last = d.e;
        prefix.clear();
        EavtKey::EncodePrefix(d.e, &prefix);
        entities->Invalidate(prefix, state_.basis_tx);
      }
      if (values != nullptr) {
        prefix.clear();
        AvetKey::EncodePrefix(d.a, d.v, &prefix);
        values->Invalidate(prefix, state_.basis_tx);
      }
    }
  }
}

bool Transactor::IsExcision(const Pending& p) {
  return p.replicated ? internal::IsExcision(*p.replicated)
                      : internal::IsExcision(p.request);
}

void Transactor::DropExcisedCaches() {
  AssertOnTransactorThread("DropExcisedCaches");
  // Excision is rare and may remove datoms of any entity, value and
  // attribute, at every basis: drop everything, with floors at the new
  // basis so that no reader of an older snapshot puts back what it read.
  for (auto* cache : {core_->entity_cache.get(), core_->value_cache.get()}) {
    if (cache != nullptr) cache->InvalidateAll(state_.basis_tx);
  }
  if (core_->since_cache) core_->since_cache->Clear(state_.basis_tx);
  if (core_->column_cache) {
    core_->column_cache->TouchAll(state_.basis_tx);
    // The images too (kMetaExcisedKey keeps a later open from using one a
    // build in flight writes after this).
    for (const std::string& path : internal::ListColumnImages(core_->path)) {
      std::error_code ignored;
      std::filesystem::remove(path, ignored);
    }
  }
}

std::shared_ptr<const Db> Transactor::MakeDb(
    std::shared_ptr<Statistics> stats) const {
  const rocksdb::Snapshot* raw = core_->db->GetSnapshot();
  std::shared_ptr<internal::StoreCore> core = core_;
  std::shared_ptr<const rocksdb::Snapshot> snapshot(
      raw,
      [core](const rocksdb::Snapshot* s) { core->db->ReleaseSnapshot(s); });
  return std::make_shared<const Db>(core_, std::move(snapshot), state_.basis_tx,
                                    state_.last_tx_instant, state_.schema,
                                    std::move(stats));
}

void Transactor::Publish(std::shared_ptr<Statistics> stats,
                         std::shared_ptr<const Db> written) {
  AssertOnTransactorThread("Publish");
  // A bulk import ingests files under every entity it touches: drop
  // everything cached before the state that holds them is published.
  if (importing_) {
    for (auto* cache : {core_->entity_cache.get(), core_->value_cache.get()}) {
      if (cache != nullptr) cache->InvalidateAll(state_.basis_tx);
    }
    if (core_->column_cache) core_->column_cache->TouchAll(state_.basis_tx);
  }
  stats_ = stats;
  std::shared_ptr<const Db> next =
      written != nullptr ? std::move(written) : MakeDb(std::move(stats));
  written_.store(next);
  latest_.store(std::move(next));
}

absl::StatusOr<ImportReport> Transactor::Import(ImportSource* source,
                                                const ImportOptions& options) {
  std::promise<absl::StatusOr<ImportReport>> done;
  auto future = done.get_future();
  absl::Status refused;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) {
      refused = absl::UnavailableError("the store is closing");
    } else {
      Pending job;
      job.exclusive = [&] {
        AssertOnTransactorThread("Import's job");
        importing_ = true;
        absl::StatusOr<ImportReport> report = ImportOnThread(source, options);
        importing_ = false;
        // Imported instants (and a failed import's ingested files) are
        // not in the ceiling.
        state_.tx_instant_ceiling = internal::TxState::kUnknownCeiling;
        // A failed import may have ingested files that no published state
        // holds yet: nothing read before the next commit may be kept. After
        // a successful one the published state holds everything ingested,
        // and readers of it may fill the caches (a floor past it would keep
        // them empty until the next commit).
        const EntityId floor =
            report.ok() ? state_.basis_tx : state_.basis_tx + 1;
        for (auto* cache :
             {core_->entity_cache.get(), core_->value_cache.get()}) {
          if (cache != nullptr) cache->InvalidateAll(floor);
        }
        if (core_->column_cache) {
          core_->column_cache->TouchAll(floor);
          // Columns of the imported data, built before queries ask.
          if (report.ok()) core_->column_cache->QueueImportBuilds(*stats_);
        }
        done.set_value(std::move(report));
      };
      queue_.push_back(std::move(job));
    }
  }
  if (!refused.ok()) return refused;
  cv_.Signal();
  return future.get();
}

absl::Status Transactor::BeginTerm(int64_t term) {
  std::promise<absl::Status> done;
  auto future = done.get_future();
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return absl::UnavailableError("the store is closing");
    Pending job;
    job.exclusive = [&] {
      AssertOnTransactorThread("BeginTerm's job");
      if (term < state_.term) {
        done.set_value(absl::FailedPreconditionError(
            StrCat("cannot begin term ", term,
                   ": this store holds entries of "
                   "the later term ",
                   state_.term)));
        return;
      }
      state_.term = term;
      done.set_value(absl::OkStatus());
    };
    queue_.push_back(std::move(job));
  }
  cv_.Signal();
  return future.get();
}

Store::TransactorCounters Transactor::counters() const {
  Store::TransactorCounters c;
  c.groups = groups_.load(std::memory_order_relaxed);
  c.transactions = transactions_.load(std::memory_order_relaxed);
  c.failed_transactions = failed_transactions_.load(std::memory_order_relaxed);
  c.datoms = datoms_.load(std::memory_order_relaxed);
  c.largest_group = largest_group_.load(std::memory_order_relaxed);
  c.clog_flushes = clog_flushes_.load(std::memory_order_relaxed);
  {
    absl::MutexLock lock(&mu_);
    c.queue_depth = queue_.size();
  }
  return c;
}

void Transactor::Stop() {
  absl::MutexLock stop(&stop_mu_);
  if (!thread_.joinable()) return;  // stopped before
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  cv_.Signal();
  thread_.join();
  if (sync_thread_.joinable()) {
    // Run drained it before it returned: nothing is in flight.
    {
      absl::MutexLock lock(&sync_mu_);
      sync_stopping_ = true;
    }
    sync_cv_.Signal();
    sync_thread_.join();
  }
  if (purge_thread_.joinable()) {
    {
      absl::MutexLock lock(&purge_mu_);
      purge_stopping_ = true;
    }
    purge_cv_.Signal();
    // A purge compacts the whole store: the next open's purge (or
    // RocksDB's own compactions) finish the job.
    core_->db->DisableManualCompaction();
    purge_thread_.join();
  }
}

void Transactor::RequestPurge() {
  AssertOnTransactorThread("RequestPurge");
  {
    absl::MutexLock lock(&purge_mu_);
    purge_wanted_ = true;
  }
  if (!purge_thread_.joinable()) {
    purge_thread_ = std::thread([this] { RunPurges(); });
  }
  purge_cv_.Signal();
}

void Transactor::RunPurges() {
  for (;;) {
    {
      absl::MutexLock lock(&purge_mu_);
      while (!purge_wanted_ && !purge_stopping_) purge_cv_.Wait(&purge_mu_);
      if (purge_stopping_) return;
      purge_wanted_ = false;
    }
    const absl::Status s = internal::PurgeDeletedBytes(core_.get());
    if (!s.ok()) {
      rocksdb::Warn(core_->db->GetDBOptions().info_log.get(),
                    "[mentat] after an excision: %s (the excised datoms are "
                    "gone from every read; their bytes stay in files until "
                    "compaction rewrites them)",
                    std::string(s.message()).c_str());
    }
  }
}

void Transactor::AssertOnTransactorThread(const char* what) const {
#ifndef NDEBUG
  if (std::this_thread::get_id() != thread_id_.load()) {
    std::fprintf(stderr,
                 "mentat: Transactor::%s runs on a thread that is not the "
                 "transactor's (its state has no lock)\n",
                 what);
    std::abort();
  }
#else
  (void)what;  // Release: no check
#endif
}

void Transactor::Run() {
  thread_id_.store(std::this_thread::get_id());
  const StoreOptions& options = core_->options;
  for (;;) {
    std::deque<Pending> group;
    {
      absl::ReleasableMutexLock lock(&mu_);
      while (!stopping_ && queue_.empty()) cv_.Wait(&mu_);
      if (queue_.empty()) {
        // Stopping, and everything taken: answer what is in flight.
        lock.Release();
        Drain();
        return;
      }
      if (queue_.front().exclusive) {
        Pending job = std::move(queue_.front());
        queue_.pop_front();
        lock.Release();
        // An import or a new term starts from a published state, with no
        // group in flight (and refuses to write after a failed fsync).
        Drain();
        AdoptSyncFailure();
        job.exclusive();
        continue;
      }
      size_t datoms = 0;
      while (!queue_.empty() &&
             group.size() <
                 static_cast<size_t>(options.max_group_transactions) &&
             !queue_.front().exclusive) {
        const Pending& next = queue_.front();
        const size_t n = next.replicated ? next.replicated->datoms.size()
                                         : next.request.ops.size();
        if (!group.empty() && datoms + n > options.max_group_datoms) break;
        // An excision commits in a group of its own (TxBatch::
        // ExcisionStore).
        if (!group.empty() && (IsExcision(next) || IsExcision(group.front()))) {
          break;
        }
        datoms += n;
        group.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
    }
    CommitGroup(&group);
  }
}

void Transactor::FlushClogged(uint32_t clogged) {
  AssertOnTransactorThread("FlushClogged");
  const auto now = std::chrono::steady_clock::now();
  for (IndexOrder order :
       {IndexOrder::kEavt, IndexOrder::kAvet, IndexOrder::kVaet}) {
    const int o = static_cast<int>(order);
    if ((clogged & (1u << o)) == 0) continue;
    if (now - clog_flushed_at_[o] < kClogFlushInterval) continue;
    // One flush at a time: the last one's memtable is still read until it
    // is written out, and another would only add a file.
    rocksdb::ColumnFamilyHandle* cf = core_->cf(internal::CurrentCf(order));
    uint64_t unflushed = 0;
    if (core_->db->GetIntProperty(cf, "rocksdb.num-immutable-mem-table",
                                  &unflushed) &&
        unflushed > 0) {
      continue;
    }
    clog_flushed_at_[o] = now;
    rocksdb::FlushOptions fo;
    fo.wait = false;
    fo.allow_write_stall = true;
    const rocksdb::Status s = core_->db->Flush(fo, cf);
    if (s.ok()) {
      clog_flushes_.fetch_add(1, std::memory_order_relaxed);
    } else {
      // Not an error of any commit: the scans stay slow until the
      // memtable fills and flushes by itself.
      const std::string_view name = IndexOrderName(order);
      rocksdb::Warn(core_->db->GetDBOptions().info_log.get(),
                    "[mentat] flushing %.*s's memtable of stepped-over "
                    "tombstones failed: %s",
                    static_cast<int>(name.size()), name.data(),
                    s.ToString().c_str());
    }
  }
}

void Transactor::CommitGroup(std::deque<Pending>* group) {
  AssertOnTransactorThread("CommitGroup");
  const bool excision = group->size() == 1 && IsExcision(group->front());
  // An excision drops caches and publishes on this thread: nothing may be
  // in flight behind it.
  const bool pipelined = pipelined_ && !excision;
  if (!pipelined) Drain();
  AdoptSyncFailure();
  // A WAL write that failed outside a commit (retention's horizon) is
  // checked for here too.
  if (!write_error_.ok() ||
      !core_->background_errors->WalSwitchedSinceFailure()) {
    // RocksDB's recovery runs with nothing in flight.
    Drain();
    AdoptSyncFailure();
    const absl::Status refused = ResumeWrites();
    if (!refused.ok()) {
      std::vector<absl::StatusOr<TxReport>> results(group->size(), refused);
      Answer(group, &results);
      return;
    }
  }
  if (state_.tx_instant_ceiling == internal::TxState::kUnknownCeiling) {
    state_.tx_instant_ceiling = internal::ReadTxInstantCeiling(
        core_->db, core_->cf(internal::CurrentCf(IndexOrder::kAvet)));
  }
  const internal::TxState group_start = state_;
  auto stats = std::make_shared<Statistics>(*stats_);
  internal::StatsDirty dirty;
  internal::CommitBatch batch(core_.get());
  batch.SetAlone(excision);

  std::vector<absl::StatusOr<TxReport>> results;
  results.reserve(group->size());
  bool any_committed = false;
  // Asked once per group, microseconds before its write: a cluster
  // primary whose lease deadline passed while the group waited refuses it.
  absl::Status gate;
  if (core_->options.write_gate) gate = core_->options.write_gate();
  for (Pending& p : *group) {
    if (!p.replicated && !gate.ok()) {
      results.push_back(gate);
      continue;
    }
    internal::TxState tx_state = state_;
    internal::StatsDelta delta;
    batch.SetSavePoint();
    internal::TxApplier applier(&batch, stats.get(), &tx_state, core_->options);
    absl::StatusOr<TxReport> report =
        p.replicated ? applier.ApplyReplicated(*p.replicated, &delta)
                     : applier.Apply(p.request, &delta);
    if (report.ok()) {
      batch.PopSavePoint();
      state_ = std::move(tx_state);
      internal::ApplyStatsDelta(delta, core_->options.low_cardinality_limit,
                                stats.get(), &dirty);
      any_committed = true;
    } else {
      batch.RollbackToSavePoint();
    }
    results.push_back(std::move(report));
  }

  absl::Status commit_status;
  std::shared_ptr<const Db> written;  // stream_before_sync: the new state
  bool handoff = false;               // written for the sync thread
  if (any_committed) {
    rocksdb::ColumnFamilyHandle* meta = core_->cf(Cf::kMeta);
    auto put = [&](const std::string& k, const std::string& v) {
      batch.PutRaw(Cf::kMeta, k, v);
    };
    put(internal::kMetaBasisKey, Fixed64BE(state_.basis_tx));
    put(internal::kMetaTxInstantKey,
        Fixed64BE(static_cast<uint64_t>(state_.last_tx_instant)));
    for (int p : {0, 3, 4}) {
      if (state_.next_counter[p] != group_start.next_counter[p]) {
        put(internal::MetaPartitionKey(p), Fixed64BE(state_.next_counter[p]));
      }
    }
    internal::WriteStatsMeta(*stats, dirty, meta, batch.batch());
    InvalidateCached(results);
    if (excision) {
      put(internal::kMetaExcisedKey, Fixed64BE(state_.basis_tx));
      DropExcisedCaches();
    }
    rocksdb::WriteOptions wo;
    // Written first, shown to replication streams, then fsynced: a
    // replica's fsync overlaps this one (StoreOptions::stream_before_sync).
    // Pipelined, the sync thread fsyncs it while this thread goes on; only
    // when there is something to overlap the fsync with (a group in
    // flight, a request queued): a lone group is synced by its write as
    // without pipelining, and a lone writer pays no thread switch.
    handoff = pipelined && (InFlight() || Queued());
    const bool early = core_->options.sync_commits &&
                       (core_->options.stream_before_sync || handoff);
    wo.sync = core_->options.sync_commits && !early;
    rocksdb::Status s = PinMemtable();
    if (s.ok()) {
      const bool hinted = internal::HintedInserts::Gains(batch.batch()->Count(),
                                                         results.size());
      internal::HintedInserts hints(hinted);
      // Many small transactions: their keys sorted (key_ordered_batch.h).
      rocksdb::WriteBatch ordered;
      const bool sorted =
          !hinted && results.size() > 1 &&
          internal::KeyOrderedBatch(*batch.batch(), core_->handles, &ordered);
      s = core_->db->Write(wo, sorted ? &ordered : batch.batch());
    }
    if (s.ok() && handoff) {
      // The snapshot before the next group's write: the state to publish.
      written = MakeDb(stats);
      // The next group starts from this one's statistics.
      stats_ = stats;
    } else if (s.ok() && early) {
      written = MakeDb(stats);
      written_.store(written);
      if (core_->options.on_written) core_->options.on_written();
      s = core_->db->SyncWAL();
      if (!s.ok()) {
        // Not acknowledged; a stream may have sent it (a tail the
        // replicas' history checks catch, as a deposed primary's). RocksDB
        // holds the group, so no later commit may run (ResumeWrites).
        unsynced_group_ = true;
        written_.store(latest_.load());
        written.reset();
      }
    }
    if (!s.ok()) {
      if (unsynced_group_) {
        commit_status = absl::UnavailableError(StrCat(
            "commit failed (the fsync: ", s.ToString(),
            "): the transaction is not acknowledged; its data reached the "
            "log and it may be there once the store reopens. Writes are off "
            "until then (restart mentatd); reads go on"));
      } else if (internal::IsDiskFull(s)) {
        // ENOSPC on the log's write: the record did not reach it whole,
        // and RocksDB stops writes until it recovers.
        commit_status = absl::ResourceExhaustedError(StrCat(
            internal::WriteFailure(s, "the commit", core_->path).message(),
            ": the transaction is not acknowledged. Reads go on; "
            "writes resume by themselves once space is freed (at least ",
            internal::kMemtableBytes >> 20, " MiB free)"));
      } else {
        commit_status = absl::UnavailableError(StrCat(
            "commit failed (", s.ToString(),
            "): the transaction is not acknowledged; if only the fsync "
            "failed, its data reached the log and it may be there once the "
            "store reopens"));
      }
      write_error_ = s;
    }
  }

  if (!commit_status.ok()) {
    // Ids the group handed out stay used: a failed fsync may leave the
    // group in the log, and a later commit must not reuse its ids.
    const auto counters = state_.next_counter;
    state_ = group_start;
    state_.next_counter = counters;
    // Nor may its instants be taken for new ones: read the ceiling again.
    state_.tx_instant_ceiling = internal::TxState::kUnknownCeiling;
    for (auto& r : results) {
      if (r.ok()) r = commit_status;
    }
  } else if (any_committed && handoff) {
    if (batch.clogged() != 0) FlushClogged(batch.clogged());
    HandOff(Unsynced{std::move(*group), std::move(results), std::move(written),
                     group_start});
    return;
  } else if (any_committed) {
    // After the write (a failed one changes nothing) and before the
    // publish: every reader of the new basis finds its columns' versions.
    UpdateColumns(state_.basis_tx, results);
    Publish(std::move(stats), std::move(written));
    if (excision) {
      core_->unpurged_excisions.fetch_add(1);
      RequestPurge();
    }
  }
  if (batch.clogged() != 0) FlushClogged(batch.clogged());
  if (pipelined && InFlight()) {
    // Nothing written: answered in order, after the groups in flight.
    HandOff(Unsynced{std::move(*group), std::move(results), nullptr, {}});
  } else {
    Answer(group, &results);
  }
}

}  // namespace mentat::storage
