#include "internal/column_worker.h"

#include "internal/coding.h"
#include "internal/meta_keys.h"
#include "internal/store_core.h"

namespace mentat::storage::internal {
namespace {

constexpr char kMetaColumnPrefix[] = "col";

std::string MetaColumnKey(IndexOrder order, EntityId attribute) {
  std::string k = kMetaColumnPrefix;
  k.push_back(static_cast<char>(order));
  PutFixed64BE(static_cast<uint64_t>(attribute), &k);
  return k;
}

// Keys read between checks for Stop.
constexpr size_t kStopCheckKeys = 4096;

}  // namespace

ColumnWorker::ColumnWorker(StoreCore* core)
    : core_(core), cache_(core->column_cache.get()) {
  thread_ = std::thread([this] { Run(); });
}

ColumnWorker::~ColumnWorker() { Stop(); }

void ColumnWorker::Stop() {
  stopping_.store(true, std::memory_order_relaxed);
  cache_->Stop();
  if (thread_.joinable()) thread_.join();
}

void ColumnWorker::Run() {
  ColumnCache::Job job;
  while (cache_->NextJob(&job)) {
    if (job.kind == ColumnCache::JobKind::kBuild) {
      Build(job);
    } else {
      Fold(job);
    }
  }
}

void ColumnWorker::Build(ColumnCache::Job job) {
  if (!cache_->BeginBuild(&job)) return;
  // The snapshot is taken after the cache started logging the
  // attribute's commits: every commit is in one or the other (or both).
  const rocksdb::Snapshot* snapshot = core_->db->GetSnapshot();
  std::shared_ptr<KeyRun> base;
  EntityId base_at = 0;
  bool too_big = false;
  do {
    rocksdb::ReadOptions ro = TotalOrderReadOptions();
    ro.snapshot = snapshot;
    std::string basis;
    if (!core_->db->Get(ro, core_->cf(Cf::kMeta), kMetaBasisKey, &basis).ok() ||
        basis.size() != 8) {
      break;
    }
    base_at = static_cast<EntityId>(DecodeFixed64BE(basis));
    ro.ignore_range_deletions = true;
    // A scan's blocks would only push hot ones out of the block cache.
    ro.fill_cache = false;
    std::unique_ptr<rocksdb::Iterator> it(
        core_->db->NewIterator(ro, core_->cf(CurrentCf(job.order))));
    std::string prefix;
    AppendEntityId(job.attribute, &prefix);
    const bool with_entities = job.order == IndexOrder::kAevt;
    const size_t limit = cache_->max_column_bytes();
    auto run = std::make_shared<KeyRun>();
    bool ok = true;
    size_t n = 0;
    for (it->Seek(prefix); it->Valid(); it->Next()) {
      const std::string_view k(it->key().data(), it->key().size());
      if (!k.starts_with(prefix)) break;
      const std::string_view v(it->value().data(), it->value().size());
      if (v.size() != 8 ||
          (with_entities && k.size() < 2 * kEntityPrefixBytes)) {
        ok = false;  // malformed: readers keep reading RocksDB (and fail)
        break;
      }
      run->Append(k, static_cast<EntityId>(DecodeFixed64BE(v)), with_entities);
      if (run->keys.size() > UINT32_MAX ||
          run->keys.size() + run->size() * 20 > limit) {
        too_big = true;
        ok = false;
        break;
      }
      if (++n % kStopCheckKeys == 0 &&
          stopping_.load(std::memory_order_relaxed)) {
        ok = false;
        break;
      }
    }
    if (ok && it->status().ok()) {
      run->ShrinkToFit();
      base = std::move(run);
    }
  } while (false);
  core_->db->ReleaseSnapshot(snapshot);
  if (cache_->FinishBuild(job, std::move(base), base_at, too_big)) {
    Remember(job.order, job.attribute, true);
  } else if (too_big) {
    Remember(job.order, job.attribute, false);
  }
}

void ColumnWorker::Fold(ColumnCache::Job job) {
  std::shared_ptr<const AttributeColumn> column = cache_->BeginFold(&job);
  if (column == nullptr) return;
  auto base = std::make_shared<KeyRun>();
  column->delta.FoldInto(*column->base, column->with_entities(), base.get());
  base->ShrinkToFit();
  cache_->FinishFold(job, std::move(base));
}

void ColumnWorker::Remember(IndexOrder order, EntityId attribute, bool held) {
  const std::string key = MetaColumnKey(order, attribute);
  rocksdb::WriteOptions wo;
  if (held) {
    std::string value;
    if (core_->db
            ->Get(rocksdb::ReadOptions(), core_->cf(Cf::kMeta), key, &value)
            .ok()) {
      return;
    }
    core_->db->Put(wo, core_->cf(Cf::kMeta), key, "").PermitUncheckedError();
  } else {
    core_->db->Delete(wo, core_->cf(Cf::kMeta), key).PermitUncheckedError();
  }
}

std::vector<std::pair<IndexOrder, EntityId>> ColumnWorker::RememberedColumns(
    StoreCore* core) {
  std::vector<std::pair<IndexOrder, EntityId>> out;
  std::unique_ptr<rocksdb::Iterator> it(
      core->db->NewIterator(TotalOrderReadOptions(), core->cf(Cf::kMeta)));
  const std::string_view prefix = kMetaColumnPrefix;
  for (it->Seek(prefix); it->Valid(); it->Next()) {
    const std::string_view k(it->key().data(), it->key().size());
    if (!k.starts_with(prefix)) break;
    if (k.size() != prefix.size() + 9) continue;
    const auto order = static_cast<IndexOrder>(k[prefix.size()]);
    if (order != IndexOrder::kAevt && order != IndexOrder::kAvet) continue;
    out.emplace_back(order, static_cast<EntityId>(
                                DecodeFixed64BE(k.substr(prefix.size() + 1))));
  }
  return out;
}

}  // namespace mentat::storage::internal
