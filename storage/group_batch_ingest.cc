// GroupBatch's bulk-import half: reads over the chunk's ImportIndex and the
// DB, and the chunk written as sorted SST files and ingested into RocksDB
// (no memtable, no WAL).

#include <array>
#include <atomic>
#include <filesystem>
#include <iterator>
#include <thread>

#include "internal/coding.h"
#include "internal/group_batch.h"
#include "internal/rocks_status.h"
#include "mentat/storage/entity_ids.h"
#include "mentat/storage/str_cat.h"
#include "rocksdb/sst_file_writer.h"

namespace mentat::storage::internal {
namespace {

// `dir`, where the import writes: a full disk there is ResourceExhausted
// and names it.
absl::Status FromRocks(const rocksdb::Status& s, std::string_view what,
                       std::string_view dir = "") {
  if (s.ok()) return absl::OkStatus();
  if (!dir.empty() && IsDiskFull(s)) return WriteFailure(s, what, dir);
  return absl::UnavailableError(StrCat(what, ": ", s.ToString()));
}

// At most this many of the DB's keys are loaded into the import's filter
// at its start; a larger store imports without the filter.
constexpr size_t kMaxFilterPreload = 1 << 20;
// DB ranges of at most this many keys are cached; at most kMaxCached
// ranges are.
constexpr size_t kMaxCachedRange = 8;
constexpr size_t kMaxCached = 1 << 18;
// Scans of prefixes at least this long seek in prefix mode (the entity
// families' prefix extractor is 8 bytes); shorter ones in total order.
constexpr size_t kPrefixSeekBytes = 8;

// Writes the SST files of `cf` from sorted, unique keys. With
// `split_by_partition`, a new file starts where the partition of the
// key's first 8 bytes (an entity id) changes: the files of fresh entities
// then lie above everything ingested before, and RocksDB places them in
// the last level instead of L0.
class SstRun {
 public:
  SstRun(const StoreCore* core, Cf cf, std::string path,
         bool split_by_partition)
      : core_(core),
        cf_(cf),
        path_(std::move(path)),
        split_(split_by_partition) {}

  absl::Status Add(std::string_view key, std::string_view value, bool deleted) {
    if (split_ && key.size() >= 8) {
      const int partition =
          PartitionIndex(static_cast<EntityId>(DecodeFixed64BE(key)));
      if (writer_ && partition != partition_) {
        absl::Status s = FinishFile();
        if (!s.ok()) return s;
      }
      partition_ = partition;
    }
    if (!writer_) {
      rocksdb::Options options(core_->db->GetDBOptions(),
                               core_->db->GetOptions(core_->cf(cf_)));
      writer_ = std::make_unique<rocksdb::SstFileWriter>(
          rocksdb::EnvOptions(), options, core_->cf(cf_));
      files_.push_back(StrCat(path_, "-", files_.size(), ".sst"));
      absl::Status s = FromRocks(writer_->Open(files_.back()),
                                 "opening " + files_.back(), core_->path);
      if (!s.ok()) return s;
    }
    const rocksdb::Slice k(key.data(), key.size());
    return FromRocks(
        deleted ? writer_->Delete(k)
                : writer_->Put(k, rocksdb::Slice(value.data(), value.size())),
        "writing " + files_.back(), core_->path);
  }

  // Finishes the files and adds them to `args` (nothing if there are
  // none).
  absl::Status Finish(std::vector<rocksdb::IngestExternalFileArg>* args) {
    absl::Status s = FinishFile();
    if (!s.ok() || files_.empty()) return s;
    rocksdb::IngestExternalFileArg arg;
    arg.column_family = core_->cf(cf_);
    arg.external_files = files_;
    arg.options.move_files = true;
    args->push_back(std::move(arg));
    return absl::OkStatus();
  }

 private:
  absl::Status FinishFile() {
    if (!writer_) return absl::OkStatus();
    absl::Status s =
        FromRocks(writer_->Finish(), "finishing " + files_.back(), core_->path);
    writer_.reset();
    return s;
  }

  const StoreCore* core_;
  Cf cf_;
  std::string path_;
  bool split_;
  int partition_ = -1;
  std::vector<std::string> files_;
  std::unique_ptr<rocksdb::SstFileWriter> writer_;
};

void EncodeTx(EntityId tx, char* out) {
  uint64_t v = static_cast<uint64_t>(tx);
  for (int i = 7; i >= 0; --i, v >>= 8) out[i] = static_cast<char>(v & 0xff);
}

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

size_t GroupBatch::collected_keys() const {
  size_t n = index_.size();
  for (const auto& map : overlay_) n += map.size();
  for (const auto& run : runs_) n += run.size();
  return n;
}

void GroupBatch::FilterAdd(uint64_t hash) {
  const size_t blocks = filter_.size() / 8;
  uint64_t* block = &filter_[((hash >> 40) & (blocks - 1)) * 8];
  for (int i = 0; i < 4; ++i) {
    const uint64_t bit = (hash >> (9 * i)) & 511;
    block[bit >> 6] |= uint64_t{1} << (bit & 63);
  }
}

bool GroupBatch::FilterMayHold(uint64_t hash) const {
  const size_t blocks = filter_.size() / 8;
  const uint64_t* block = &filter_[((hash >> 40) & (blocks - 1)) * 8];
  for (int i = 0; i < 4; ++i) {
    const uint64_t bit = (hash >> (9 * i)) & 511;
    if ((block[bit >> 6] & (uint64_t{1} << (bit & 63))) == 0) return false;
  }
  return true;
}

absl::Status GroupBatch::LoadFilter() {
  rocksdb::ReadOptions ro;
  ro.total_order_seek = true;
  std::unique_ptr<rocksdb::Iterator> it(
      core_->db->NewIterator(ro, core_->cf(Cf::kAvet)));
  std::vector<uint64_t> hashes;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    if (hashes.size() == kMaxFilterPreload) {
      filter_state_ = FilterState::kOff;
      filter_ = {};
      return absl::OkStatus();
    }
    const std::string_view key(it->key().data(), it->key().size());
    hashes.push_back(ImportIndex::GroupHash(
        key.substr(0, ImportIndex::GroupLength(IndexOrder::kAvet, key))));
  }
  if (!it->status().ok()) {
    return FromRocks(it->status(), "reading avet for the import's filter");
  }
  for (uint64_t h : hashes) FilterAdd(h);
  filter_state_ = FilterState::kOn;
  return absl::OkStatus();
}

namespace {

uint64_t SummaryCheck(std::string_view group) {
  return std::hash<std::string_view>{}(group);
}

}  // namespace

const GroupBatch::GroupSummary* GroupBatch::FindSummary(std::string_view group,
                                                        uint64_t hash) const {
  auto it = summary_.find(hash);
  if (it == summary_.end() || it->second.check != SummaryCheck(group)) {
    return nullptr;
  }
  return &it->second;
}

GroupBatch::SummaryChange GroupBatch::Summarize(
    std::string_view group, const std::pair<std::string_view, EntityId>* writes,
    size_t n, GroupSummary* out) const {
  const uint64_t check = SummaryCheck(group);
  auto it = summary_.find(ImportIndex::GroupHash(group));
  GroupSummary summary;
  if (it != summary_.end()) {
    // Two groups of one hash: both go unsummarized from now on (the filter
    // holds both, so neither is summarized again).
    if (it->second.check != check) return SummaryChange::kErase;
    summary = it->second;
  } else if (FilterMayHold(ImportIndex::GroupHash(group))) {
    // The DB may hold keys of the group that the summary would not know.
    return SummaryChange::kNone;
  }
  summary.check = check;
  // Keys of one group differ only in their last 8 bytes, the entity, so
  // the entity orders them.
  for (size_t i = 0; i < n; ++i) {
    const std::string_view key = writes[i].first;
    const uint64_t e = DecodeFixed64BE(key.substr(key.size() - 8));
    if (writes[i].second == kDeleted) {
      if (summary.has_first && e == summary.first_e) {
        // What comes after the first key is unknown.
        if (summary.more) return SummaryChange::kErase;
        summary.has_first = false;
      }
      continue;
    }
    if (!summary.has_first) {
      summary.has_first = true;
      summary.first_e = e;
      summary.first_tx = writes[i].second;
    } else if (e == summary.first_e) {
      summary.first_tx = writes[i].second;
    } else {
      summary.more = true;
      if (e < summary.first_e) {
        summary.first_e = e;
        summary.first_tx = writes[i].second;
      }
    }
  }
  *out = summary;
  return SummaryChange::kSet;
}

rocksdb::Iterator* GroupBatch::DbIterator(
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
  rocksdb::ReadOptions ro;
  ro.total_order_seek = true;
  local->reset(core_->db->NewIterator(ro, core_->cf(CurrentCf(order))));
  return local->get();
}

absl::StatusOr<const GroupBatch::CachedRange*> GroupBatch::CachedDbRange(
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

absl::Status GroupBatch::ImportScan(
    IndexOrder order, std::string_view prefix,
    const std::function<bool(const Datom&)>& fn) {
  if (filter_state_ == FilterState::kUnloaded) {
    absl::Status s = LoadFilter();
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
  const bool grouped = order == IndexOrder::kAvet &&
                       filter_state_ == FilterState::kOn &&
                       ImportIndex::ScanLevel(order, prefix) == 1;
  const uint64_t group_hash = grouped ? ImportIndex::GroupHash(prefix) : 0;
  const GroupSummary* summary =
      grouped ? FindSummary(prefix, group_hash) : nullptr;
  DbRange::Cached first;
  if (summary != nullptr) {
    if (summary->has_first) {
      std::string key(prefix);
      PutFixed64BE(summary->first_e, &key);
      first.emplace_back(std::move(key), summary->first_tx);
    }
    db = DbRange(&first, summary->more, prefix);
  } else if (!grouped || FilterMayHold(group_hash)) {
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

absl::Status GroupBatch::WriteCfFiles(
    Frozen* chunk, Cf cf, std::vector<rocksdb::IngestExternalFileArg>* args) {
  const int c = static_cast<int>(cf);
  SstRun run(core_, cf, StrCat(chunk->dir, "/", CfName(cf)),
             cf == Cf::kEavt || cf == Cf::kEavtHist);
  absl::Status s;
  if (c < 4 && Readable(static_cast<IndexOrder>(c))) {
    const IndexOrder order = static_cast<IndexOrder>(c);
    const bool filter =
        order == IndexOrder::kAvet && filter_state_ == FilterState::kOn;
    std::vector<std::pair<std::string_view, EntityId>> sorted;
    chunk->index.SortedKeys(order, &sorted);
    char value[8];
    size_t group_start = 0;
    for (size_t i = 0; i < sorted.size(); ++i) {
      const auto& [key, tx] = sorted[i];
      EncodeTx(tx, value);
      s = run.Add(key, std::string_view(value, 8), tx == kDeleted);
      if (!s.ok()) return s;
      if (!filter) continue;
      // At the last key of a group: its summary and its filter entry,
      // applied by FinishIngest (the transactor reads both meanwhile).
      const std::string_view group =
          key.substr(0, ImportIndex::GroupLength(order, key));
      if (i + 1 < sorted.size() && sorted[i + 1].first.starts_with(group) &&
          ImportIndex::GroupLength(order, sorted[i + 1].first) ==
              group.size()) {
        continue;
      }
      const uint64_t hash = ImportIndex::GroupHash(group);
      bool written = false;
      for (size_t j = group_start; j <= i; ++j) {
        written |= sorted[j].second != kDeleted;
      }
      if (summary_limit_ > 0) {
        GroupSummary summary;
        const SummaryChange change = Summarize(group, &sorted[group_start],
                                               i + 1 - group_start, &summary);
        if (change != SummaryChange::kNone) {
          chunk->summary_changes.push_back({hash, change, summary});
        }
      }
      if (written) chunk->filter_adds.push_back(hash);
      group_start = i + 1;
    }
  } else {
    const auto& entries = chunk->runs[c];
    const std::vector<uint32_t> order =
        SortedByKey(static_cast<uint32_t>(entries.size()),
                    [&](uint32_t i) { return entries[i].key; });
    std::string_view last;
    for (size_t i = 0; i < order.size(); ++i) {
      // The last write of a key (sorted first) wins.
      const RunEntry& e = entries[order[i]];
      if (i > 0 && e.key == last) continue;
      last = e.key;
      s = run.Add(e.key, e.value, e.deleted);
      if (!s.ok()) return s;
    }
  }
  return run.Finish(args);
}

absl::Status GroupBatch::WriteAndIngest(Frozen* chunk, int threads) {
  // The families are sorted and written by `threads` threads, the
  // costliest first; each touches only its own family's data.
  constexpr Cf kByCost[] = {
      Cf::kEavt,     Cf::kAevt,     Cf::kAvet,     Cf::kLog,      Cf::kVaet,
      Cf::kEavtHist, Cf::kAevtHist, Cf::kAvetHist, Cf::kVaetHist, Cf::kMeta};
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
  for (int t = 1; t < threads; ++t) helpers.emplace_back(work);
  work();
  for (std::thread& t : helpers) t.join();
  std::vector<rocksdb::IngestExternalFileArg> args;
  for (int c = 0; c < kFamilies; ++c) {
    if (!statuses[c].ok()) return statuses[c];
    for (auto& arg : per_cf[c]) args.push_back(std::move(arg));
  }
  // One call for every family: the ingestion is atomic across them.
  if (args.empty()) return absl::OkStatus();
  return FromRocks(core_->db->IngestExternalFiles(args),
                   "ingesting imported data", core_->path);
}

absl::Status GroupBatch::StartIngest(const std::string& dir, int threads) {
  absl::Status s = FinishIngest();
  if (!s.ok()) return s;
  if (collected_keys() == 0) return absl::OkStatus();
  // The worker reads the filter: load it now, never while it runs.
  if (filter_state_ == FilterState::kUnloaded) {
    s = LoadFilter();
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
  index_.Clear();
  for (size_t c = 0; c < runs_.size(); ++c) {
    chunk->runs[c] = std::move(runs_[c]);
    runs_[c].clear();
  }
  chunk->arena = std::move(arena_);
  arena_.clear();
  arena_used_ = arena_size_ = 0;
  chunk->worker = std::thread([this, chunk, threads] {
    chunk->status = WriteAndIngest(chunk, threads);
  });
  return absl::OkStatus();
}

absl::Status GroupBatch::FinishIngest() {
  if (frozen_ == nullptr) return absl::OkStatus();
  frozen_->worker.join();
  absl::Status s = frozen_->status;
  if (s.ok()) {
    for (uint64_t hash : frozen_->filter_adds) FilterAdd(hash);
    for (const SummaryChangeAt& change : frozen_->summary_changes) {
      if (change.change == SummaryChange::kErase) {
        summary_.erase(change.hash);
      } else if (summary_.size() < summary_limit_ ||
                 summary_.contains(change.hash)) {
        summary_[change.hash] = change.summary;
      }
    }
  }
  // Reads see the chunk in the DB from now on: fresh iterators, no cached
  // ranges from before.
  for (auto& it : db_iterators_) it.reset();
  db_cache_.clear();
  std::error_code ec;
  std::filesystem::remove_all(frozen_->dir, ec);
  frozen_.reset();
  return s;
}

absl::Status GroupBatch::IngestRuns(const std::string& dir) {
  absl::Status s = StartIngest(dir, 2);
  if (!s.ok()) return s;
  return FinishIngest();
}

}  // namespace mentat::storage::internal
