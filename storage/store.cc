#include "mentat/storage/store.h"

#include <algorithm>
#include <filesystem>

#include "internal/cache_warmer.h"
#include "internal/coding.h"
#include "internal/column_worker.h"
#include "internal/fulltext_index.h"
#include "internal/info_log.h"
#include "internal/insert_hints.h"
#include "internal/log_codec.h"
#include "internal/meta_keys.h"
#include "internal/presized_log.h"
#include "internal/rocks_status.h"
#include "internal/store_core.h"
#include "internal/transactor.h"
#include "internal/tx_state.h"
#include "internal/wal_retire.h"
#include "mentat/base/str_cat.h"
#include "mentat/storage/entity_ids.h"
#include "mentat/storage/tx_log.h"
#include "rocksdb/cache.h"
#include "rocksdb/filter_policy.h"
#include "rocksdb/slice_transform.h"
#include "rocksdb/table.h"

namespace mentat::storage {

using internal::Cf;
using internal::DecodeFixed64BE;
using internal::Fixed64BE;

namespace internal {

const char* CfName(Cf cf) {
  switch (cf) {
    case Cf::kEavt:
      return "eavt";
    case Cf::kAevt:
      return "aevt";
    case Cf::kAvet:
      return "avet";
    case Cf::kVaet:
      return "vaet";
    case Cf::kEavtHist:
      return "eavt_hist";
    case Cf::kAevtHist:
      return "aevt_hist";
    case Cf::kAvetHist:
      return "avet_hist";
    case Cf::kVaetHist:
      return "vaet_hist";
    case Cf::kLog:
      return "log";
    case Cf::kMeta:
      return "meta";
    case Cf::kFulltext:
      return "fulltext";
    case Cf::kCount:
      break;
  }
  return "?";
}

StoreCore::~StoreCore() {
  // The column thread reads `db`: it stops first.
  column_worker.reset();
  if (db == nullptr) return;
  for (auto* h : handles) {
    if (h != nullptr) db->DestroyColumnFamilyHandle(h).PermitUncheckedError();
  }
  db->Close().PermitUncheckedError();
  delete db;
}

}  // namespace internal

namespace {

[[nodiscard]] absl::Status FromRocks(const rocksdb::Status& s,
                                     std::string_view what,
                                     std::string_view dir = "") {
  if (s.ok()) return absl::OkStatus();
  if (!dir.empty() && internal::IsDiskFull(s)) {
    return internal::WriteFailure(s, what, dir);
  }
  if (s.IsCorruption()) {
    return absl::DataLossError(StrCat(what, ": ", s.ToString()));
  }
  if (s.IsInvalidArgument()) {
    return absl::FailedPreconditionError(StrCat(what, ": ", s.ToString()));
  }
  return absl::UnavailableError(StrCat(what, ": ", s.ToString()));
}

rocksdb::ColumnFamilyOptions IndexFamilyOptions(
    const std::shared_ptr<rocksdb::Cache>& cache, bool entity_prefix_filter) {
  rocksdb::ColumnFamilyOptions cf;
  rocksdb::BlockBasedTableOptions table;
  table.block_cache = cache;
  table.format_version = 5;
  // 4 KB blocks with 4-key restarts measured no faster on the workload's
  // point seeks (query-bench, scale s) and 35% larger on disk.
  table.block_size = 16 * 1024;
  // Keys share long prefixes (e, a): delta encoding within blocks does
  // most of the compression work, so restart points can be sparse.
  table.block_restart_interval = 16;
  table.cache_index_and_filter_blocks = false;
  if (entity_prefix_filter) {
    // A filter of entity prefixes only (no whole keys): one entry per
    // entity, so it stays small (about 1.3M entries at scale m), and it
    // answers both point Gets and prefix seeks.
    table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
    table.whole_key_filtering = false;
    cf.prefix_extractor.reset(
        rocksdb::NewFixedPrefixTransform(internal::kEntityPrefixBytes));
    // The same filter over the memtable, so that a seek of an entity the
    // recent writes did not touch skips the skiplist search.
    cf.memtable_prefix_bloom_size_ratio = 0.02;
  }
  cf.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  cf.compression = rocksdb::kLZ4Compression;
  // LZ4 at every level: ZSTD at the bottom made the store 40% smaller
  // (0.023 vs 0.040 GB per million datoms at scale s), but at scale m reads
  // that miss the block cache spent their time in ZSTD decompression, and
  // both sizes are far under the 0.15 GB budget.
  cf.bottommost_compression = rocksdb::kLZ4Compression;
  cf.level_compaction_dynamic_level_bytes = true;
  cf.write_buffer_size = internal::kMemtableBytes;
  // A large transaction's keys of one entity (EAVT) or one attribute
  // (AEVT, AVET) arrive in runs; a memtable insert hint per 8-byte prefix
  // turns most of their skiplist inserts into a short walk from the
  // previous one (on for such writes only: internal/insert_hints.h).
  cf.memtable_insert_with_hint_prefix_extractor =
      std::make_shared<internal::InsertHintTransform>();
  return cf;
}

// Writes the bootstrap schema as the first transaction of a new store.
[[nodiscard]] absl::Status Bootstrap(internal::StoreCore* core,
                                     const StoreOptions& options) {
  const EntityId tx = kFirstTxId;
  std::vector<Datom> datoms = Schema::BootstrapDatoms(tx);
  datoms.push_back(Datom{tx, ids::kDbTxInstant, Value::Instant(0), tx, true});
  auto schema = Schema::FromDatoms(datoms);
  if (!schema.ok()) return schema.status();

  rocksdb::WriteBatch batch;
  const std::string tx_bytes = Fixed64BE(static_cast<uint64_t>(tx));
  internal::StatsDelta delta;
  std::string key;
  for (const Datom& d : datoms) {
    const Attribute* attr = (*schema)->FindAttribute(d.a);
    const int orders = attr->is_ref() ? 4 : 3;
    for (int i = 0; i < orders; ++i) {
      key.clear();
      EncodeKey(static_cast<IndexOrder>(i), d, &key);
      batch
          .Put(core->cf(internal::CurrentCf(static_cast<IndexOrder>(i))), key,
               tx_bytes)
          .PermitUncheckedError();
    }
    auto& per = delta.by_attribute[d.a];
    per.datoms++;
    per.values[d.v]++;
  }
  // The counters the meta keys below start from.
  internal::LogEntryHeader header;
  header.next_counter = {ids::kFirstUserDbCounter, (tx & kCounterMask) + 1,
                         1000};
  std::string entry;
  internal::EncodeLogEntry(header, datoms, &entry);
  batch.Put(core->cf(Cf::kLog), tx_bytes, entry).PermitUncheckedError();

  Statistics stats;
  internal::StatsDirty dirty;
  internal::ApplyStatsDelta(delta, options.low_cardinality_limit, &stats,
                            &dirty);
  rocksdb::ColumnFamilyHandle* meta = core->cf(Cf::kMeta);
  internal::WriteStatsMeta(stats, dirty, meta, &batch);
  batch.Put(meta, internal::kMetaBasisKey, tx_bytes).PermitUncheckedError();
  batch.Put(meta, internal::kMetaTxInstantKey, Fixed64BE(0))
      .PermitUncheckedError();
  batch
      .Put(meta, internal::MetaPartitionKey(0),
           Fixed64BE(ids::kFirstUserDbCounter))
      .PermitUncheckedError();
  batch
      .Put(meta, internal::MetaPartitionKey(3),
           Fixed64BE((tx & kCounterMask) + 1))
      .PermitUncheckedError();
  batch.Put(meta, internal::MetaPartitionKey(4), Fixed64BE(1000))
      .PermitUncheckedError();
  // The postings cover every :db/fulltext attribute from the start.
  batch.Put(core->cf(Cf::kMeta), internal::kMetaFulltextKey, "1")
      .PermitUncheckedError();
  // The format key goes last in the same batch: its presence means the
  // bootstrap is complete.
  batch.Put(meta, internal::kMetaFormatKey, internal::kMetaFormatVersion)
      .PermitUncheckedError();
  rocksdb::WriteOptions wo;
  wo.sync = true;
  return FromRocks(core->db->Write(wo, &batch), "writing the bootstrap schema",
                   core->path);
}

[[nodiscard]] absl::StatusOr<uint64_t> ReadMetaU64(internal::StoreCore* core,
                                                   const std::string& key) {
  std::string value;
  rocksdb::Status s =
      core->db->Get(rocksdb::ReadOptions(), core->cf(Cf::kMeta), key, &value);
  if (!s.ok()) return FromRocks(s, StrCat("reading meta key ", key));
  if (value.size() != 8) {
    return absl::DataLossError(StrCat("meta key ", key, " is malformed"));
  }
  return DecodeFixed64BE(value);
}

[[nodiscard]] absl::StatusOr<std::shared_ptr<const Schema>> LoadSchema(
    internal::StoreCore* core) {
  const rocksdb::ReadOptions ro = internal::TotalOrderReadOptions();
  std::unique_ptr<rocksdb::Iterator> avet(
      core->db->NewIterator(ro, core->cf(Cf::kAvet)));
  std::unique_ptr<rocksdb::Iterator> eavt(
      core->db->NewIterator(ro, core->cf(Cf::kEavt)));
  std::string prefix;
  AvetKey::EncodePrefix(ids::kDbIdent, &prefix);
  std::vector<Datom> datoms;
  Datom d;
  for (avet->Seek(prefix); avet->Valid(); avet->Next()) {
    std::string_view k(avet->key().data(), avet->key().size());
    if (!k.starts_with(prefix)) break;
    absl::Status s = DecodeKey(IndexOrder::kAvet, k, &d);
    if (!s.ok()) return s;
    std::string eprefix;
    EavtKey::EncodePrefix(d.e, &eprefix);
    Datom ed;
    for (eavt->Seek(eprefix); eavt->Valid(); eavt->Next()) {
      std::string_view ek(eavt->key().data(), eavt->key().size());
      if (!ek.starts_with(eprefix)) break;
      s = DecodeKey(IndexOrder::kEavt, ek, &ed);
      if (!s.ok()) return s;
      datoms.push_back(ed);
    }
  }
  if (!avet->status().ok()) return FromRocks(avet->status(), "loading schema");
  if (!eavt->status().ok()) return FromRocks(eavt->status(), "loading schema");
  return Schema::FromDatoms(datoms);
}

// A bulk import ingests its files before it records the counters; a crash
// between the two leaves data past the counters. A few seeks find the
// highest tx in the log and the highest id of each partition in EAVT, so
// the counters never hand out an id that is in use.
[[nodiscard]] absl::Status RepairCounters(internal::StoreCore* core,
                                          internal::TxState* state) {
  const rocksdb::ReadOptions ro = internal::TotalOrderReadOptions();
  std::unique_ptr<rocksdb::Iterator> log(
      core->db->NewIterator(ro, core->cf(Cf::kLog)));
  log->SeekToLast();
  if (log->Valid() && log->key().size() == 8) {
    const EntityId last = static_cast<EntityId>(DecodeFixed64BE(
        std::string_view(log->key().data(), log->key().size())));
    if (last > state->basis_tx) state->basis_tx = last;
    const int64_t next = (last & kCounterMask) + 1;
    if (next > state->next_counter[3]) state->next_counter[3] = next;
    // A v2 entry says which term wrote it and the counters after it.
    internal::LogEntryHeader header;
    absl::Status h = internal::DecodeLogEntryHeader(
        last, std::string_view(log->value().data(), log->value().size()),
        &header);
    if (!h.ok()) return h;
    state->term = header.term;
    if (header.has_counters) {
      for (size_t i = 0; i < internal::kLogHeaderPartitions.size(); ++i) {
        int64_t& c = state->next_counter[internal::kLogHeaderPartitions[i]];
        c = std::max(c, header.next_counter[i]);
      }
    }
  }
  if (!log->status().ok()) return FromRocks(log->status(), "reading the log");
  std::unique_ptr<rocksdb::Iterator> eavt(
      core->db->NewIterator(ro, core->cf(Cf::kEavt)));
  for (int p : {0, 4}) {
    const std::string bound = Fixed64BE(static_cast<uint64_t>(
        MakeEntityId(static_cast<Partition>(p), kCounterMask)));
    eavt->SeekForPrev(bound);
    if (!eavt->Valid() || eavt->key().size() < 8) continue;
    const EntityId e = static_cast<EntityId>(
        DecodeFixed64BE(std::string_view(eavt->key().data(), 8)));
    if (PartitionIndex(e) != p) continue;
    const int64_t next = (e & kCounterMask) + 1;
    if (next > state->next_counter[p]) state->next_counter[p] = next;
  }
  return FromRocks(eavt->status(), "reading EAVT");
}

}  // namespace

Store::Store(std::string path, const StoreOptions& options)
    : path_(std::move(path)), options_(options) {}

Store::~Store() { Close(); }

absl::StatusOr<std::unique_ptr<Store>> Store::Open(
    const std::string& path, const StoreOptions& options) {
  std::error_code ec;
  if (options.create_if_missing) {
    std::filesystem::create_directories(path, ec);
    if (ec) {
      return absl::FailedPreconditionError(StrCat(
          "cannot create the store directory ", path, ": ", ec.message()));
    }
  }
  std::unique_ptr<Store> store(new Store(path, options));
  auto core = std::make_shared<internal::StoreCore>();
  core->options = options;
  if (options.entity_cache_bytes > 0) {
    core->entity_cache =
        std::make_unique<internal::RecordCache>(options.entity_cache_bytes);
  }
  if (options.column_cache_bytes > 0) {
    internal::ColumnCacheOptions columns;
    columns.capacity_bytes = options.column_cache_bytes;
    columns.build_after_rows = options.column_build_after_rows;
    columns.fold_min_keys = options.column_fold_min_keys;
    core->column_cache = std::make_unique<internal::ColumnCache>(columns);
  }
  core->since_cache =
      std::make_unique<internal::SinceCache>(options.since_log_limit);
  if (options.value_cache_bytes > 0) {
    core->value_cache =
        std::make_unique<internal::RecordCache>(options.value_cache_bytes);
  }
  core->path = path;

  rocksdb::DBOptions db_options;
  db_options.create_if_missing = options.create_if_missing;
  db_options.create_missing_column_families = options.create_if_missing;
  {
    // A store made before the fulltext family existed gets it here, and
    // its postings below (BuildFulltextIndex).
    std::vector<std::string> existing;
    if (rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(), path, &existing)
            .ok() &&
        std::find(existing.begin(), existing.end(),
                  internal::CfName(Cf::kFulltext)) == existing.end()) {
      db_options.create_missing_column_families = true;
    }
  }
  db_options.max_background_jobs = 2;
  // Bounded, RocksDB opens at most 16 table files in DB::Open and each
  // other one at the first read that needs it; unbounded (-1), it opens
  // every file there, reading each one's index and filter blocks (at
  // scale l, 354 files, an open took 95-368 ms that way against 38-132).
  db_options.max_open_files = options.max_open_table_files;
  if (options.max_open_table_files > 0) {
    // RocksDB's table cache holds max_open_files - 10 files in 64 shards
    // of an equal share each: under a small limit each shard keeps one
    // file, and up to 64 stay open whatever the limit said. Fewer shards
    // (16 files a shard at least) keep it.
    const int capacity = std::max(1, options.max_open_table_files - 10);
    int bits = 0;
    while (bits < 6 && (capacity >> (bits + 1)) >= 16) ++bits;
    db_options.table_cache_numshardbits = bits;
  }
  // The deletion counts that compaction weighs files by are sampled (20
  // files a family) from each new version of the store's files; at the
  // open they would be read from files not opened yet (a read of each
  // one's properties, about 40 ms at scale m with the page cache dropped),
  // so they wait for each family's next flush or compaction.
  db_options.skip_stats_update_on_db_open = true;
  db_options.bytes_per_sync = 1 << 20;
  db_options.keep_log_file_num = 5;
  db_options.info_log_level = rocksdb::InfoLogLevel::WARN_LEVEL;
  // Our own info log: RocksDB's aborts on a full disk (internal/info_log.h).
  db_options.info_log = std::make_shared<internal::InfoLog>(
      options.env != nullptr ? options.env : rocksdb::Env::Default(),
      path + "/LOG", db_options.info_log_level);
  db_options.db_write_buffer_size = options.memtable_budget_bytes;
  if (options.env != nullptr) {
    db_options.env = options.env;
  } else if (options.sync_commits && options.log_presize_bytes > 0) {
    core->log_env = internal::NewPresizedLogEnv(options.log_presize_bytes);
    db_options.env = core->log_env.get();
  }
  // RocksDB stops writes after a failed write, flush or WAL sync and
  // recovers by itself where it can: from a full disk through its
  // SstFileManager (one is made for every DB), which polls the free space
  // and resumes once the memtable size is free; from other retryable I/O
  // errors by retrying (max_bgerror_resume_count,
  // bgerror_resume_retry_interval). The listener keeps its state for
  // WriteHealth.
  db_options.listeners.push_back(core->background_errors);
  // The transactor's memtable pin (Transactor::PinMemtable) is written
  // without the WAL, which would make RocksDB flush every memtable at
  // close; the pin needs no keeping, and the WAL holds everything else.
  db_options.avoid_flush_during_shutdown = true;
  if (options.rocksdb_statistics) {
    core->statistics = rocksdb::CreateDBStatistics();
    core->statistics->set_stats_level(rocksdb::StatsLevel::kExceptTimers);
    db_options.statistics = core->statistics;
  }
  auto cache = rocksdb::NewLRUCache(options.block_cache_bytes);
  std::vector<rocksdb::ColumnFamilyDescriptor> families;
  families.emplace_back(rocksdb::kDefaultColumnFamilyName,
                        rocksdb::ColumnFamilyOptions());
  for (int i = 0; i < static_cast<int>(Cf::kCount); ++i) {
    rocksdb::ColumnFamilyOptions cf = IndexFamilyOptions(
        cache, internal::HasEntityPrefixFilter(static_cast<Cf>(i)));
    if (static_cast<Cf>(i) == Cf::kMeta)
      cf.compression = rocksdb::kNoCompression;
    if (static_cast<Cf>(i) == Cf::kLog) {
      // The log is the largest family (10 of l's 45 bytes a datom) and
      // the coldest: since(), replication and the column images' replay
      // read its newest entries, which sit above the last level. ZSTD
      // there halved it at m (9.7 to 4.9 bytes a datom); the import
      // writes its log files for the last level, so with ZSTD too.
      cf.bottommost_compression = rocksdb::kZSTD;
    }
    if (i >= static_cast<int>(Cf::kEavtHist) &&
        i <= static_cast<int>(Cf::kVaetHist)) {
      core->retention_filters.push_back(
          std::make_unique<internal::HistoryRetentionFilter>(
              static_cast<IndexOrder>(i - static_cast<int>(Cf::kEavtHist)),
              core->retention.get()));
      cf.compaction_filter = core->retention_filters.back().get();
    }
    families.emplace_back(internal::CfName(static_cast<Cf>(i)), cf);
  }
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s =
      rocksdb::DB::Open(db_options, path, families, &handles, &raw);
  if (!s.ok()) {
    return FromRocks(s, StrCat("opening the store in ", path), path);
  }
  core->db = raw;
  // handles[0] is the unused default family; keep our order in `handles`.
  raw->DestroyColumnFamilyHandle(handles[0]).PermitUncheckedError();
  core->handles.assign(handles.begin() + 1, handles.end());
  // Housekeeping: a store that cannot retire its idle logs now (a full
  // disk) opens as it is and tries again at its next open.
  if (absl::Status retired =
          internal::RetireIdleWals(raw, core->cf(Cf::kMeta), path);
      !retired.ok()) {
    rocksdb::Warn(db_options.info_log.get(), "[mentat] %s",
                  std::string(retired.message()).c_str());
  }

  std::string format;
  s = raw->Get(rocksdb::ReadOptions(), core->cf(Cf::kMeta),
               internal::kMetaFormatKey, &format);
  if (s.IsNotFound()) {
    absl::Status b = Bootstrap(core.get(), options);
    if (!b.ok()) return b;
  } else if (!s.ok()) {
    return FromRocks(s, "reading the store format");
  } else if (format == internal::kMetaFormatVersionV1) {
    // Its v1 entries read as they are; the entries written from now on
    // are v2, so the format says so before any is.
    rocksdb::WriteOptions wo;
    wo.sync = true;
    s = raw->Put(wo, core->cf(Cf::kMeta), internal::kMetaFormatKey,
                 internal::kMetaFormatVersion);
    if (!s.ok()) {
      return FromRocks(
          s, StrCat("upgrading the store in ", path, " from format 1 to 2"));
    }
  } else if (format != internal::kMetaFormatVersion) {
    return absl::FailedPreconditionError(StrCat(
        "the store in ", path, " has format ", format, "; this build reads ",
        internal::kMetaFormatVersionV1, " and ", internal::kMetaFormatVersion));
  }

  internal::TxState state;
  auto basis = ReadMetaU64(core.get(), internal::kMetaBasisKey);
  if (!basis.ok()) return basis.status();
  state.basis_tx = static_cast<EntityId>(*basis);
  auto instant = ReadMetaU64(core.get(), internal::kMetaTxInstantKey);
  if (!instant.ok()) return instant.status();
  state.last_tx_instant = static_cast<int64_t>(*instant);
  for (int p : {0, 3, 4}) {
    auto counter = ReadMetaU64(core.get(), internal::MetaPartitionKey(p));
    if (!counter.ok()) return counter.status();
    state.next_counter[p] = static_cast<int64_t>(*counter);
  }
  std::string horizon;
  s = raw->Get(rocksdb::ReadOptions(), core->cf(Cf::kMeta),
               internal::kMetaRetentionKey, &horizon);
  if (s.ok() && horizon.size() == 8) {
    core->retention->database_horizon.store(
        static_cast<int64_t>(DecodeFixed64BE(horizon)));
  }
  absl::Status repaired = RepairCounters(core.get(), &state);
  if (!repaired.ok()) return repaired;
  auto schema = LoadSchema(core.get());
  if (!schema.ok()) return schema.status();
  state.schema = *schema;
  absl::Status fulltext = internal::BuildFulltextIndex(core.get(), **schema);
  if (!fulltext.ok()) return fulltext;
  auto stats = std::make_shared<Statistics>();
  absl::Status ls =
      internal::LoadStatsMeta(raw, core->cf(Cf::kMeta), stats.get());
  if (!ls.ok()) return ls;

  const rocksdb::Snapshot* snap = raw->GetSnapshot();
  std::shared_ptr<const rocksdb::Snapshot> snapshot(
      snap,
      [core](const rocksdb::Snapshot* s) { core->db->ReleaseSnapshot(s); });
  auto initial = std::make_shared<const Db>(
      core, std::move(snapshot), state.basis_tx, state.last_tx_instant,
      state.schema, std::make_shared<const Statistics>(*stats));
  // Before the first commit: the images are brought up to this basis.
  if (core->column_cache && options.column_images) {
    internal::ColumnWorker::LoadImages(core.get(), state.basis_tx,
                                       *state.schema);
  }
  store->core_ = core;
  store->transactor_ = std::make_unique<Transactor>(
      core, std::move(state), std::move(stats), std::move(initial));
  if (core->column_cache) {
    core->column_worker = std::make_unique<internal::ColumnWorker>(core.get());
  }
  if (options.warm_entity_cache && core->entity_cache) {
    Transactor* transactor = store->transactor_.get();
    store->warmer_ = std::make_unique<internal::CacheWarmer>(
        [transactor] { return transactor->Latest(); }, core->entity_cache.get(),
        options.entity_cache_bytes / 4 * 3);
  }
  return store;
}

void Store::Close() {
  if (warmer_) warmer_->Stop();
  if (transactor_) transactor_->Stop();
  if (core_ && core_->column_worker) {
    // The columns an import queued are for the next opening's first
    // queries: they are finished (and imaged) rather than dropped.
    core_->column_cache->WaitImportBuilds();
    core_->column_worker->Stop();
    if (options_.column_images) {
      internal::ColumnWorker::SaveImages(
          core_.get(), transactor_ ? transactor_->Latest()->basis_tx() : 0);
    }
  }
}

void Store::WaitForWarmCache() const {
  if (warmer_) warmer_->Wait();
}

void Store::WaitForColumns() const {
  if (core_->column_cache) core_->column_cache->WaitIdle();
}

std::shared_ptr<const Db> Store::Latest() const {
  return transactor_->Latest();
}

std::shared_ptr<const Db> Store::LatestWritten() const {
  return transactor_->LatestWritten();
}

namespace {

[[nodiscard]] absl::Status ReplicaRefusal(std::string_view what) {
  return absl::FailedPreconditionError(
      StrCat("this store is a read replica: it takes only transactions "
             "replicated from its primary, not ",
             what));
}

}  // namespace

ImportOptions ImportOptions::WithinMemory(size_t bytes) {
  constexpr size_t kMin = size_t{64} << 20;
  // What each part holds per unit, as the defaults assume.
  constexpr size_t kBytesPerChunkKey = 100;
  constexpr size_t kBytesPerSummaryGroup = 50;
  bytes = std::max(bytes, kMin);
  ImportOptions o;
  o.filter_bytes = bytes / 32;
  o.summary_groups = bytes / 256;
  const size_t rest =
      bytes - o.filter_bytes - o.summary_groups * kBytesPerSummaryGroup;
  o.chunk_keys = rest / (2 * kBytesPerChunkKey);
  return o;
}

absl::StatusOr<ImportReport> Store::Import(ImportSource* source,
                                           const ImportOptions& options) {
  if (role() == StoreRole::kReplica) return ReplicaRefusal("an import");
  return transactor_->Import(source, options);
}

void Store::Transact(TxRequest request, TxCallback done) {
  if (role() == StoreRole::kReplica) {
    done(ReplicaRefusal("a transaction"));
    return;
  }
  transactor_->Submit(std::move(request), std::move(done));
}

void Store::ApplyReplicated(ReplicatedTx tx, TxCallback done) {
  // A primary's log is its own: an entry of another log would interleave
  // with the transactions it commits.
  if (role() != StoreRole::kReplica) {
    done(absl::FailedPreconditionError(
        StrCat("this store is a primary: it does not apply transaction ", tx.tx,
               " replicated from another store's log")));
    return;
  }
  // Decoded here, on the caller's thread: a malformed entry is refused
  // without taking the transactor's time.
  internal::ReplicatedEntry entry;
  entry.prev_tx = tx.prev_tx;
  entry.prev_instant = tx.prev_instant;
  entry.tx = tx.tx;
  absl::Status decoded =
      internal::DecodeLogEntry(tx.tx, tx.entry, &entry.header, &entry.datoms);
  if (!decoded.ok()) {
    done(decoded);
    return;
  }
  transactor_->SubmitReplicated(std::move(entry), std::move(done));
}

std::future<absl::StatusOr<TxReport>> Store::ApplyReplicated(ReplicatedTx tx) {
  auto promise = std::make_shared<std::promise<absl::StatusOr<TxReport>>>();
  auto future = promise->get_future();
  ApplyReplicated(std::move(tx), [promise](absl::StatusOr<TxReport> r) {
    promise->set_value(std::move(r));
  });
  return future;
}

void Store::SetRole(StoreRole role) {
  role_.store(role, std::memory_order_release);
}

absl::Status Store::Promote(int64_t term) {
  absl::Status s = transactor_->BeginTerm(term);
  if (s.ok()) SetRole(StoreRole::kPrimary);
  return s;
}

StoreRole Store::role() const { return role_.load(std::memory_order_acquire); }

std::future<absl::StatusOr<TxReport>> Store::Transact(TxRequest request) {
  auto promise = std::make_shared<std::promise<absl::StatusOr<TxReport>>>();
  auto future = promise->get_future();
  Transact(std::move(request), [promise](absl::StatusOr<TxReport> r) {
    promise->set_value(std::move(r));
  });
  return future;
}

Store::TransactorCounters Store::transactor_counters() const {
  return transactor_->counters();
}

uint64_t Store::RocksDbProperty(const std::string& name) const {
  // Every family shares one block cache: each would report all of it.
  if (name.rfind("rocksdb.block-cache", 0) == 0) {
    uint64_t v = 0;
    core_->db->GetIntProperty(core_->cf(Cf::kEavt), name, &v);
    return v;
  }
  uint64_t total = 0;
  for (auto* h : core_->handles) {
    uint64_t v = 0;
    if (core_->db->GetIntProperty(h, name, &v)) total += v;
  }
  return total;
}

uint64_t Store::RocksDbTicker(uint32_t ticker) const {
  return core_->statistics ? core_->statistics->getTickerCount(ticker) : 0;
}

CacheCounters Store::entity_cache_counters() const {
  return core_->entity_cache ? core_->entity_cache->counters()
                             : CacheCounters{};
}

CacheCounters Store::value_cache_counters() const {
  return core_->value_cache ? core_->value_cache->counters() : CacheCounters{};
}

CacheCounters Store::column_cache_counters() const {
  return core_->column_cache ? core_->column_cache->counters()
                             : CacheCounters{};
}

uint64_t Store::DiskSizeBytes() const {
  uint64_t total = 0;
  std::error_code ec;
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(path_, ec)) {
    if (entry.is_regular_file(ec)) total += entry.file_size(ec);
  }
  return total;
}

absl::Status Store::CompactAll() {
  rocksdb::CompactRangeOptions options;
  options.bottommost_level_compaction =
      rocksdb::BottommostLevelCompaction::kForce;
  for (auto* h : core_->handles) {
    absl::Status s =
        FromRocks(core_->db->CompactRange(options, h, nullptr, nullptr),
                  "compacting", path_);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status Store::Flush() {
  rocksdb::FlushOptions fo;
  fo.wait = true;
  return FromRocks(core_->db->Flush(fo, core_->handles), "flushing", path_);
}

absl::Status Store::WriteHealth() const {
  const internal::BackgroundErrors::State state =
      core_->background_errors->Current();
  if (state.error.ok() &&
      !core_->background_errors->WalSwitchedSinceFailure()) {
    // See Transactor::ResumeWrites: RocksDB resumed on the failed log.
    return absl::UnavailableError(
        "writes are off until the store reopens, reads go on: RocksDB "
        "resumed after a failed log write without switching the log file");
  }
  if (state.error.ok()) return absl::OkStatus();
  // A failed compaction leaves writes going (RocksDB retries it); anything
  // else stops them until RocksDB recovers.
  const bool writes_stop =
      state.reason != rocksdb::BackgroundErrorReason::kCompaction;
  const absl::Status s = internal::WriteFailure(
      state.error, writes_stop ? "a write" : "a compaction", path_);
  return absl::Status(
      s.code(),
      StrCat(writes_stop ? "writes are stopped, reads go on: "
                         : "compactions are paused, reads and writes go on: ",
             s.message(),
             internal::IsDiskFull(state.error)
                 ? StrCat("; they resume by themselves once space is freed (at "
                          "least ",
                          internal::kMemtableBytes >> 20, " MiB free)")
                 : std::string()));
}

}  // namespace mentat::storage
