#include "internal/import_batch.h"

#include <pthread.h>

#include <atomic>
#include <filesystem>
#include <iterator>

#include "internal/coding.h"
#include "internal/import_compaction.h"
#include "internal/import_distinct.h"
#include "internal/rocks_status.h"
#include "internal/sst_run.h"
#include "mentat/base/str_cat.h"

namespace mentat::storage::internal {
namespace {

// DB ranges of at most this many keys are cached; at most kMaxCached
// ranges are.
constexpr size_t kMaxCachedRange = 8;
constexpr size_t kMaxCached = 1 << 18;
// Scans of prefixes at least this long seek in prefix mode (the entity
// families' prefix extractor is 8 bytes); shorter ones in total order.
constexpr size_t kPrefixSeekBytes = 8;
// How far ahead of the write of a chunk's sorted keys their entries and
// bytes are prefetched (a few cache misses' worth of SST building).
constexpr size_t kEntryAhead = 16;
constexpr size_t kKeyAhead = 8;

// The DB side of a scan: the cached first keys of the range, then (if
// the range has more and the caller wants them) an iterator.
class DbRange {
 public:
  using Cached = std::vector<std::pair<std::string, EntityId>>;
  DbRange() = default;
  DbRange(const Cached* cached, bool more, std::string_view prefix)
      : cached_(cached), more_(more), prefix_(prefix) {}
  DbRange(rocksdb::Iterator* it, std::string_view prefix)
      : it_(it), prefix_(prefix) {}

  // True when the cached keys are used up and an iterator must go on.
  bool NeedsIterator() const {
    return cached_ != nullptr && next_ == cached_->size() && more_;
  }
  // Goes on from the last cached key (or the prefix) with `it`.
  void Continue(rocksdb::Iterator* it) {
    if (cached_->empty()) {
      it->Seek(rocksdb::Slice(prefix_.data(), prefix_.size()));
    } else {
      const std::string& last = cached_->back().first;
      it->Seek(rocksdb::Slice(last.data(), last.size()));
      if (it->Valid() && it->key() == rocksdb::Slice(last)) it->Next();
    }
    cached_ = nullptr;
    it_ = it;
  }

  // Whether there is a current key; false with *status set on a bad
  // value.
  bool Valid(absl::Status* status, IndexOrder order) {
    if (cached_ != nullptr) return next_ < cached_->size();
    if (it_ == nullptr || !it_->Valid()) return false;
    key_ = std::string_view(it_->key().data(), it_->key().size());
    if (!key_.starts_with(prefix_)) return false;
    const rocksdb::Slice v = it_->value();
    if (v.size() != 8) {
      *status = absl::DataLossError(
          StrCat("bad tx under a key of ", IndexOrderName(order)));
      return false;
    }
    tx_ = static_cast<EntityId>(DecodeFixed64BE(std::string_view(v.data(), 8)));
    return true;
  }
  std::string_view key() const {
    return cached_ != nullptr ? std::string_view((*cached_)[next_].first)
                              : key_;
  }
  EntityId tx() const {
    return cached_ != nullptr ? (*cached_)[next_].second : tx_;
  }
  void Next() {
    if (cached_ != nullptr) {
      ++next_;
    } else {
      it_->Next();
    }
  }

 private:
  const Cached* cached_ = nullptr;
  bool more_ = false;
  size_t next_ = 0;
  rocksdb::Iterator* it_ = nullptr;
  std::string_view prefix_;
  std::string_view key_;
  EntityId tx_ = 0;
};

}  // namespace

ImportBatch::ImportBatch(const StoreCore* core, size_t filter_bytes,
                         size_t summary_groups)
    : core_(core), groups_(filter_bytes, summary_groups) {}

ImportBatch::~ImportBatch() {
  // A chunk still being ingested (the import failed): let it finish; what
  // it ingested stays, as with any chunk the import did not record.
  if (frozen_ != nullptr) frozen_->worker.join();
}

void ImportBatch::Collect(Cf cf, std::string_view key, std::string_view value,
                          bool deleted) {
  runs_[static_cast<int>(cf)].push_back(
      RunEntry{arena_.Intern(key), arena_.Intern(value), deleted});
}

void ImportBatch::PutCurrent(IndexOrder order, std::string_view key,
                             EntityId tx) {
  // Readable orders are written from the index itself at ingestion.
  if (Readable(order)) return index_.Add(order, arena_.Intern(key), tx);
  char value[8];
  StoreBigEndian64(static_cast<uint64_t>(tx), value);
  Collect(CurrentCf(order), key, std::string_view(value, 8), false);
}

void ImportBatch::DeleteCurrent(IndexOrder order, std::string_view key) {
  if (Readable(order)) return index_.Add(order, arena_.Intern(key), kDeleted);
  Collect(CurrentCf(order), key, {}, true);
}

void ImportBatch::PutRaw(Cf cf, std::string_view key, std::string_view value) {
  Collect(cf, key, value, false);
}

void ImportBatch::SetSavePoint() {
  Marks marks;
  marks.index = index_.marks();
  for (size_t i = 0; i < marks.runs.size(); ++i)
    marks.runs[i] = runs_[i].size();
  save_points_.push_back(marks);
}

void ImportBatch::RollbackToSavePoint() {
  const Marks& marks = save_points_.back();
  index_.Truncate(marks.index);
  for (size_t i = 0; i < runs_.size(); ++i) runs_[i].resize(marks.runs[i]);
  save_points_.pop_back();
}

void ImportBatch::PopSavePoint() { save_points_.pop_back(); }

size_t ImportBatch::collected_keys() const {
  size_t n = index_.size();
  for (const auto& run : runs_) n += run.size();
  return n;
}

absl::StatusOr<std::optional<EntityId>> ImportBatch::Get(IndexOrder order,
                                                         std::string_view key) {
  std::optional<EntityId> written = index_.Find(order, key);
  if (!written && frozen_ != nullptr) {
    written = frozen_->index.Find(order, key);
  }
  if (written) {
    if (*written == kDeleted) return std::optional<EntityId>();
    return written;
  }
  std::string value;
  rocksdb::Status s =
      core_->db->Get(rocksdb::ReadOptions(), core_->cf(CurrentCf(order)),
                     rocksdb::Slice(key.data(), key.size()), &value);
  if (s.IsNotFound()) return std::optional<EntityId>();
  if (!s.ok()) {
    return absl::UnavailableError(
        StrCat("reading ", IndexOrderName(order), ": ", s.ToString()));
  }
  if (value.size() != 8) {
    return absl::DataLossError(
        StrCat("bad tx under a key of ", IndexOrderName(order)));
  }
  return std::optional<EntityId>(static_cast<EntityId>(DecodeFixed64BE(value)));
}

rocksdb::Iterator* ImportBatch::DbIterator(
    IndexOrder order, std::string_view prefix,
    std::unique_ptr<rocksdb::Iterator>* local) {
  if (prefix.size() >= kPrefixSeekBytes) {
    // A prefix seek: where the family has a prefix extractor, its filters
    // skip files. One iterator per order serves the whole chunk (the DB
    // changes only when the chunk is ingested).
    auto& shared = db_iterators_[static_cast<int>(order)];
    if (!shared) {
      shared.reset(core_->db->NewIterator(rocksdb::ReadOptions(),
                                          core_->cf(CurrentCf(order))));
    }
    return shared.get();
  }
  local->reset(core_->db->NewIterator(TotalOrderReadOptions(),
                                      core_->cf(CurrentCf(order))));
  return local->get();
}

absl::StatusOr<const ImportBatch::CachedRange*> ImportBatch::CachedDbRange(
    IndexOrder order, std::string_view prefix) {
  std::string cache_key;
  cache_key.reserve(prefix.size() + 1);
  cache_key.push_back(static_cast<char>(order));
  cache_key.append(prefix);
  auto found = db_cache_.find(cache_key);
  if (found != db_cache_.end()) return &found->second;
  if (db_cache_.size() >= kMaxCached) return nullptr;
  CachedRange range;
  std::unique_ptr<rocksdb::Iterator> local;
  rocksdb::Iterator* it = DbIterator(order, prefix, &local);
  for (it->Seek(rocksdb::Slice(prefix.data(), prefix.size())); it->Valid();
       it->Next()) {
    const std::string_view key(it->key().data(), it->key().size());
    if (!key.starts_with(prefix)) break;
    if (range.keys.size() == kMaxCachedRange) {
      range.more = true;
      break;
    }
    const rocksdb::Slice v = it->value();
    if (v.size() != 8) {
      return absl::DataLossError(
          StrCat("bad tx under a key of ", IndexOrderName(order)));
    }
    range.keys.emplace_back(
        std::string(key),
        static_cast<EntityId>(DecodeFixed64BE(std::string_view(v.data(), 8))));
  }
  if (!it->status().ok()) {
    return absl::UnavailableError(StrCat("scanning ", IndexOrderName(order),
                                         ": ", it->status().ToString()));
  }
  auto [slot, inserted] =
      db_cache_.emplace(std::move(cache_key), std::move(range));
  return &slot->second;
}

absl::Status ImportBatch::Scan(IndexOrder order, std::string_view prefix,
                               const std::function<bool(const Datom&)>& fn) {
  if (groups_.unloaded()) {
    absl::Status s = groups_.Load(core_);
    if (!s.ok()) return s;
  }
  // The chunk's writes under the prefix, then those of the chunk being
  // ingested (it shadows the DB, which may or may not hold it yet).
  ImportIndex::Cursor mine, ingesting;
  index_.Scan(order, prefix, &mine);
  if (frozen_ != nullptr) frozen_->index.Scan(order, prefix, &ingesting);
  DbRange db;
  rocksdb::Iterator* it = nullptr;
  std::unique_ptr<rocksdb::Iterator> total_order;
  // A scan of one AVET group (a, v) consults the summary and the filter.
  const bool grouped = order == IndexOrder::kAvet && groups_.on() &&
                       ImportIndex::ScanLevel(order, prefix) == 1;
  const uint64_t group_hash = grouped ? ImportIndex::GroupHash(prefix) : 0;
  const ImportedGroups::Summary* summary =
      grouped ? groups_.Find(prefix, group_hash) : nullptr;
  DbRange::Cached first;
  if (summary != nullptr) {
    if (summary->has_first) {
      std::string key(prefix);
      PutFixed64BE(summary->first_e, &key);
      first.emplace_back(std::move(key), summary->first_tx);
    }
    db = DbRange(&first, summary->more, prefix);
  } else if (!grouped || groups_.MayHold(group_hash)) {
    auto cached = CachedDbRange(order, prefix);
    if (!cached.ok()) return cached.status();
    if (*cached != nullptr) {
      db = DbRange(&(*cached)->keys, (*cached)->more, prefix);
    } else {
      it = DbIterator(order, prefix, &total_order);
      it->Seek(rocksdb::Slice(prefix.data(), prefix.size()));
      db = DbRange(it, prefix);
    }
  }
  absl::Status status;
  Datom d;
  for (;;) {
    if (db.NeedsIterator()) {
      it = DbIterator(order, prefix, &total_order);
      db.Continue(it);
    }
    const bool db_valid = db.Valid(&status, order);
    if (!status.ok()) break;
    const bool mine_valid = mine.Valid();
    const bool ingesting_valid = ingesting.Valid();
    if (!db_valid && !mine_valid && !ingesting_valid) break;
    // The smallest key; of equal keys the newest write wins (this chunk,
    // then the one being ingested, then the DB).
    std::string_view key;
    bool have = false;
    for (const std::string_view k :
         {mine_valid ? mine.key() : std::string_view(),
          ingesting_valid ? ingesting.key() : std::string_view(),
          db_valid ? db.key() : std::string_view()}) {
      if (k.empty()) continue;  // keys are never empty
      if (!have || k < key) key = k;
      have = true;
    }
    const bool from_mine = mine_valid && mine.key() == key;
    const bool from_ingesting = ingesting_valid && ingesting.key() == key;
    const bool from_db = db_valid && db.key() == key;
    const EntityId tx = from_mine        ? mine.tx()
                        : from_ingesting ? ingesting.tx()
                                         : db.tx();
    if (tx != kDeleted) {
      // Decoded before the DB side moves: the key may be its bytes.
      status = DecodeKey(order, key, &d);
      if (!status.ok()) break;
      d.tx = tx;
      d.added = true;
    }
    if (from_mine) mine.Next();
    if (from_ingesting) ingesting.Next();
    if (from_db) db.Next();
    if (tx == kDeleted) continue;
    if (!fn(d)) break;
  }
  if (status.ok() && it != nullptr && !it->status().ok()) {
    return absl::UnavailableError(StrCat("scanning ", IndexOrderName(order),
                                         ": ", it->status().ToString()));
  }
  return status;
}

absl::Status ImportBatch::WriteCfFiles(
    Frozen* chunk, Cf cf, std::vector<rocksdb::IngestExternalFileArg>* args) {
  const int c = static_cast<int>(cf);
  const SstRun::Split split =
      cf == Cf::kEavt || cf == Cf::kEavtHist   ? SstRun::Split::kPartition
      : cf == Cf::kAevt || cf == Cf::kAevtHist ? SstRun::Split::kPrefix
                                               : SstRun::Split::kNone;
  SstRun run(core_, cf, StrCat(chunk->dir, "/", CfName(cf)), split,
             /*compress=*/!ChunksOverlap(cf));
  absl::Status s;
  if (c < 4 && Readable(static_cast<IndexOrder>(c))) {
    const IndexOrder order = static_cast<IndexOrder>(c);
    const bool filter = order == IndexOrder::kAvet && groups_.on();
    std::optional<ImportDistinct> distinct;
    if (order == IndexOrder::kAvet && !chunk->distinct_attributes.empty()) {
      distinct.emplace(core_, &groups_, &chunk->distinct_attributes);
    }
    std::vector<std::pair<std::string_view, EntityId>> sorted;
    chunk->index.SortedKeys(order, &sorted);
    char value[8];
    size_t group_start = 0;
    for (size_t i = 0; i < sorted.size(); ++i) {
      // As below: the keys lie in the arena in write order.
      if (i + kKeyAhead < sorted.size()) {
        __builtin_prefetch(sorted[i + kKeyAhead].first.data());
      }
      const auto& [key, tx] = sorted[i];
      StoreBigEndian64(static_cast<uint64_t>(tx), value);
      s = run.Add(key, std::string_view(value, 8), tx == kDeleted);
      if (!s.ok()) return s;
      if (!filter && !distinct) continue;
      // At the last key of a group: its summary and its filter entry,
      // applied by FinishIngest (the transactor reads both meanwhile).
      const std::string_view group =
          key.substr(0, ImportIndex::GroupLength(order, key));
      if (i + 1 < sorted.size() && sorted[i + 1].first.starts_with(group) &&
          ImportIndex::GroupLength(order, sorted[i + 1].first) ==
              group.size()) {
        continue;
      }
      if (distinct) {
        s = distinct->Group(group, &sorted[group_start], i + 1 - group_start);
        if (!s.ok()) return s;
      }
      if (!filter) {
        group_start = i + 1;
        continue;
      }
      const uint64_t hash = ImportIndex::GroupHash(group);
      bool written = false;
      for (size_t j = group_start; j <= i; ++j) {
        written |= sorted[j].second != kDeleted;
      }
      if (groups_.summarizing()) {
        ImportedGroups::Summary summary;
        const ImportedGroups::Change change = groups_.Summarize(
            group, &sorted[group_start], i + 1 - group_start, &summary);
        if (change != ImportedGroups::Change::kNone) {
          chunk->summary_changes.push_back({hash, change, summary});
        }
      }
      if (written) chunk->filter_adds.push_back(hash);
      group_start = i + 1;
    }
    if (distinct) chunk->distinct_deltas = distinct->TakeDeltas();
  } else {
    const auto& entries = chunk->runs[c];
    // The last write of each key.
    const std::vector<uint32_t> latest =
        LatestByKey(static_cast<uint32_t>(entries.size()),
                    [&](uint32_t i) { return entries[i].key; });
    for (size_t i = 0; i < latest.size(); ++i) {
      // Entries and their keys are read in key order, scattered over
      // memory: each is asked for ahead (the entry first, its key once the
      // entry is in), not waited for one cache miss after another.
      if (i + kEntryAhead < latest.size()) {
        __builtin_prefetch(&entries[latest[i + kEntryAhead]]);
      }
      if (i + kKeyAhead < latest.size()) {
        __builtin_prefetch(entries[latest[i + kKeyAhead]].key.data());
      }
      const RunEntry& e = entries[latest[i]];
      s = run.Add(e.key, e.value, e.deleted);
      if (!s.ok()) return s;
    }
  }
  return run.Finish(args);
}

absl::Status ImportBatch::WriteAndIngest(Frozen* chunk, int threads) {
  // The families are sorted and written by `threads` threads, the
  // costliest first; each touches only its own family's data.
  constexpr Cf kByCost[] = {Cf::kEavt,     Cf::kAevt,     Cf::kAvet,
                            Cf::kLog,      Cf::kVaet,     Cf::kEavtHist,
                            Cf::kAevtHist, Cf::kAvetHist, Cf::kVaetHist,
                            Cf::kMeta,     Cf::kFulltext};
  constexpr int kFamilies = static_cast<int>(Cf::kCount);
  static_assert(std::size(kByCost) == kFamilies);
  std::array<std::vector<rocksdb::IngestExternalFileArg>, kFamilies> per_cf;
  std::array<absl::Status, kFamilies> statuses;
  std::atomic<int> next{0};
  auto work = [&] {
    for (int i = next++; i < kFamilies; i = next++) {
      const int c = static_cast<int>(kByCost[i]);
      statuses[c] = WriteCfFiles(chunk, kByCost[i], &per_cf[c]);
    }
  };
  std::vector<std::thread> helpers;
  for (int t = 1; t < threads; ++t) {
    helpers.emplace_back([&] {
      pthread_setname_np(pthread_self(), "mentat-sst");
      work();
    });
  }
  work();
  for (std::thread& t : helpers) t.join();
  std::vector<rocksdb::IngestExternalFileArg> args;
  for (int c = 0; c < kFamilies; ++c) {
    if (!statuses[c].ok()) return statuses[c];
    chunk->has_files[c] = !per_cf[c].empty();
    for (auto& arg : per_cf[c]) args.push_back(std::move(arg));
  }
  // One call for every family: the ingestion is atomic across them.
  if (args.empty()) return absl::OkStatus();
  return ImportFailure(core_->db->IngestExternalFiles(args),
                       "ingesting imported data", core_->path);
}

absl::Status ImportBatch::StartIngest(const std::string& dir, int threads) {
  absl::Status s = FinishIngest();
  if (!s.ok()) return s;
  if (collected_keys() == 0) return absl::OkStatus();
  // The worker reads the filter: load it now, never while it runs.
  if (groups_.unloaded()) {
    s = groups_.Load(core_);
    if (!s.ok()) return s;
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec == std::errc::no_space_on_device) {
    return absl::ResourceExhaustedError(
        StrCat("no space left on the disk holding ", core_->path,
               ": cannot create ", dir, ": ", ec.message()));
  }
  if (ec) {
    return absl::UnavailableError(
        StrCat("cannot create ", dir, ": ", ec.message()));
  }
  frozen_ = std::make_unique<Frozen>();
  Frozen* chunk = frozen_.get();
  chunk->dir = dir;
  chunk->index = std::move(index_);
  index_ = std::move(spare_index_);
  spare_index_.Clear();
  for (size_t c = 0; c < runs_.size(); ++c) {
    chunk->runs[c] = std::move(runs_[c]);
    runs_[c] = std::move(spare_runs_[c]);
    spare_runs_[c] = {};
  }
  chunk->arena = arena_.Release();
  chunk->distinct_attributes = distinct_attributes_;
  chunk->worker = std::thread([this, chunk, threads] {
    pthread_setname_np(pthread_self(), "mentat-ingest");
    chunk->status = WriteAndIngest(chunk, threads);
  });
  return absl::OkStatus();
}

absl::Status ImportBatch::FinishIngest() {
  if (frozen_ == nullptr) return absl::OkStatus();
  frozen_->worker.join();
  absl::Status s = frozen_->status;
  if (s.ok()) {
    for (size_t c = 0; c < ingested_.size(); ++c) {
      ingested_[c] = ingested_[c] || frozen_->has_files[c];
    }
    for (uint64_t hash : frozen_->filter_adds) groups_.Add(hash);
    for (const ImportedGroups::ChangeAt& change : frozen_->summary_changes) {
      groups_.Apply(change);
    }
    distinct_deltas_ = std::move(frozen_->distinct_deltas);
  }
  // Reads see the chunk in the DB from now on: fresh iterators, no cached
  // ranges from before.
  for (auto& it : db_iterators_) it.reset();
  db_cache_.clear();
  std::error_code ec;
  std::filesystem::remove_all(frozen_->dir, ec);
  // Its storage serves the next chunk (nothing views its keys any more).
  spare_index_ = std::move(frozen_->index);
  spare_index_.ClearForReuse();
  for (size_t c = 0; c < spare_runs_.size(); ++c) {
    spare_runs_[c] = std::move(frozen_->runs[c]);
    spare_runs_[c].clear();
  }
  arena_.Recycle(std::move(frozen_->arena));
  frozen_.reset();
  return s;
}

std::vector<Cf> ImportBatch::OverlappingFamiliesIngested() const {
  std::vector<Cf> families;
  for (int c = 0; c < static_cast<int>(Cf::kCount); ++c) {
    if (ingested_[c] && ChunksOverlap(static_cast<Cf>(c))) {
      families.push_back(static_cast<Cf>(c));
    }
  }
  return families;
}

}  // namespace mentat::storage::internal
