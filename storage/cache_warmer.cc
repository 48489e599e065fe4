#include "internal/cache_warmer.h"

#include <pthread.h>
#include <rocksdb/db.h>
#include <sched.h>

#include <string>
#include <string_view>
#include <vector>

#include "internal/coding.h"
#include "internal/record_cache.h"
#include "internal/store_core.h"
#include "mentat/storage/entity_ids.h"
#include "mentat/storage/keys.h"

namespace mentat::storage::internal {

CacheWarmer::CacheWarmer(std::function<std::shared_ptr<const Db>()> latest,
                         RecordCache* cache, size_t target_bytes)
    : latest_(std::move(latest)), cache_(cache), target_bytes_(target_bytes) {
  thread_ = std::thread([this] { Run(); });
}

CacheWarmer::~CacheWarmer() { Stop(); }

void CacheWarmer::Stop() {
  stopping_.store(true, std::memory_order_relaxed);
  if (thread_.joinable()) thread_.join();
}

void CacheWarmer::Wait() const {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(&done_));
}

void CacheWarmer::Run() {
  pthread_setname_np(pthread_self(), "mentat-warm");
  // Lowering a thread's own priority needs no privilege; if it fails
  // anyway the walk still runs, at normal priority.
  sched_param param{};
  pthread_setschedparam(pthread_self(), SCHED_IDLE, &param);
  std::string start;
  while (!stopping_.load(std::memory_order_relaxed) && WarmChunk(&start)) {
  }
  absl::MutexLock lock(&mu_);
  done_ = true;
}

bool CacheWarmer::WarmChunk(std::string* start) {
  // What the cache holds, readers' records included, kept up to date with
  // the warmer's own until the next chunk counts again.
  size_t held = cache_->counters().bytes;
  if (held >= target_bytes_) return false;
  const std::shared_ptr<const Db> db = latest_();
  const StoreCore& core = db->core();
  rocksdb::ReadOptions ro = TotalOrderReadOptions();
  ro.snapshot = db->snapshot();
  ro.ignore_range_deletions = true;
  // The records are what later reads use; blocks read once in key order
  // would only push out of the block cache what other reads keep there.
  ro.fill_cache = false;
  ro.readahead_size = size_t{1} << 20;
  std::unique_ptr<rocksdb::Iterator> it(
      core.db->NewIterator(ro, core.cf(CurrentCf(IndexOrder::kEavt))));
  it->Seek(rocksdb::Slice(start->data(), start->size()));

  std::vector<IndexRecord::Entry> entries;
  std::string keys;
  for (size_t n = 0; n < kChunkEntities && it->Valid(); ++n) {
    if (stopping_.load(std::memory_order_relaxed)) return false;
    const std::string_view first(it->key().data(), it->key().size());
    if (first.size() < kEntityPrefixBytes) return false;  // not an EAVT key
    const EntityId e = static_cast<EntityId>(DecodeFixed64BE(first));
    if (IsTxId(e)) {
      // Transactions are read through the log, not as entities, and there
      // are as many of them as commits: the user partition's entities
      // (after them in key order) are what reads ask for.
      start->clear();
      EavtKey::EncodePrefix(MakeEntityId(Partition::kUser, 0), start);
      it->Seek(rocksdb::Slice(start->data(), start->size()));
      continue;
    }
    const std::string prefix(first.substr(0, kEntityPrefixBytes));
    entries.clear();
    keys.clear();
    bool keep = true;
    for (; it->Valid(); it->Next()) {
      const std::string_view k(it->key().data(), it->key().size());
      if (!k.starts_with(prefix)) break;
      // An entity too large for a record, or an entry a reader would
      // report as malformed: left to the reads that meet it.
      if (!keep) continue;
      if (entries.size() == kMaxEntityEntries || it->value().size() != 8) {
        keep = false;
        continue;
      }
      IndexRecord::AppendEntry(
          k,
          static_cast<EntityId>(DecodeFixed64BE(
              std::string_view(it->value().data(), it->value().size()))),
          0, &entries, &keys);
    }
    if (!keep) continue;
    // As a reader of the latest basis reads it (CachedCursor::Load without
    // history): a reader of an earlier basis reads it again, whole.
    auto record = IndexRecord::Make(prefix, entries, keys);
    record->read_at = db->basis_tx();
    record->history_complete = false;
    record->current_only = true;
    const size_t charge = RecordCache::ChargeOf(*record);
    if (!cache_->InsertIfRoom(db->basis_tx(), std::move(record))) return false;
    held += charge;
    if (held >= target_bytes_) return false;
  }
  // An error ends the walk: the cache is a hint, and the reads that follow
  // meet (and report) the same error.
  if (!it->status().ok() || !it->Valid()) return false;
  start->assign(it->key().data(), it->key().size());
  return true;
}

}  // namespace mentat::storage::internal
