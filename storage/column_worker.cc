#include "internal/column_worker.h"

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>

#include "internal/coding.h"
#include "internal/column_image.h"
#include "internal/log_codec.h"
#include "internal/meta_keys.h"
#include "internal/store_core.h"
#include "mentat/base/str_cat.h"
#include "mentat/storage/entity_ids.h"

namespace mentat::storage::internal {
namespace {

// "4 GiB", "256 MiB", "2 KiB" or "100 bytes": sizes as an operator
// writes them in --column-cache.
std::string SizeText(size_t bytes) {
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) return StrCat(bytes, " bytes");
  double v = static_cast<double>(bytes) / 1024;
  int unit = 0;
  while (v >= 1024 && unit < 3) {
    v /= 1024;
    ++unit;
  }
  const int64_t tenths = static_cast<int64_t>(v * 10 + 0.5);
  return tenths % 10 == 0
             ? StrCat(tenths / 10, " ", kUnits[unit])
             : StrCat(tenths / 10, ".", tenths % 10, " ", kUnits[unit]);
}

// Keys read between checks for Stop.
constexpr size_t kStopCheckKeys = 4096;

// An image further behind the log than this many transactions is built
// again instead: replaying them would slow the store's opening more than
// a build in the background costs.
constexpr size_t kMaxImageReplayTx = 50000;

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
    switch (job.kind) {
      case ColumnCache::JobKind::kBuild:
        Build(job);
        break;
      case ColumnCache::JobKind::kFold:
        Fold(job);
        break;
      case ColumnCache::JobKind::kVerify:
        Verify(job);
        break;
    }
    ReportRefusals();
  }
}

void ColumnWorker::ReportRefusals() {
  for (const ColumnCache::Refusal& r : cache_->TakeRefusals()) {
    const size_t limit = cache_->max_column_bytes();
    const std::string message = StrCat(
        "the ", IndexOrderName(r.order), " column of ",
        AttributeName(r.attribute), " would take more than ", SizeText(limit),
        ", half of the column cache (", SizeText(2 * limit),
        "): it is not kept, and reads of the attribute in bulk (scans, "
        "aggregates, joins over most of it) go to the indexes until the "
        "database reopens. A column cache more than twice the column's "
        "size keeps it (mentatd --column-cache)");
    rocksdb::Warn(core_->db->GetDBOptions().info_log.get(), "[mentat] %s",
                  message.c_str());
    if (core_->options.on_notice) core_->options.on_notice(message);
  }
  cache_->RefusalsReported();
}

std::string ColumnWorker::AttributeName(EntityId attribute) const {
  std::string prefix;
  EavtKey::EncodePrefix(attribute, ids::kDbIdent, &prefix);
  std::unique_ptr<rocksdb::Iterator> it(
      core_->db->NewIterator(TotalOrderReadOptions(), core_->cf(Cf::kEavt)));
  it->Seek(prefix);
  Datom d;
  if (it->Valid() && it->key().starts_with(prefix) &&
      DecodeKey(IndexOrder::kEavt,
                std::string_view(it->key().data(), it->key().size()), &d)
          .ok() &&
      d.v.type() == ValueType::kKeyword) {
    return StrCat(":", d.v.text());
  }
  return StrCat("attribute ", attribute);
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
  std::shared_ptr<const KeyRun> kept = base;
  if (cache_->FinishBuild(job, std::move(base), base_at, too_big) &&
      core_->options.column_images) {
    if (WriteColumnImage(core_->path, job.order, job.attribute, base_at, *kept)
            .ok()) {
      cache_->SetImage(job.order, job.attribute, base_at);
    }
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

void ColumnWorker::Verify(ColumnCache::Job job) {
  uint32_t checksum = 0;
  std::shared_ptr<const KeyRun> base = cache_->BeginVerify(job, &checksum);
  if (base == nullptr) return;
  const bool intact = ColumnImageIntact(*base, checksum);
  if (!intact) {
    // The column is read from RocksDB again (and rebuilt); the file goes
    // so that the next opening does not map it either.
    const std::string path =
        ColumnImagePath(core_->path, job.order, job.attribute);
    rocksdb::Warn(core_->db->GetDBOptions().info_log.get(),
                  "column image %s: checksum mismatch; removed, and the "
                  "column is built again from the store",
                  path.c_str());
    std::error_code ignored;
    std::filesystem::remove(path, ignored);
  }
  cache_->FinishVerify(job, intact);
}

void ColumnWorker::LoadImages(StoreCore* core, EntityId basis,
                              const Schema& schema) {
  ColumnCache* cache = core->column_cache.get();
  EntityId excised = 0;
  std::string excised_bytes;
  if (core->db
          ->Get(rocksdb::ReadOptions(), core->cf(Cf::kMeta), kMetaExcisedKey,
                &excised_bytes)
          .ok() &&
      excised_bytes.size() == 8) {
    excised = static_cast<EntityId>(DecodeFixed64BE(excised_bytes));
  }
  for (const std::string& path : ListColumnImages(core->path)) {
    absl::StatusOr<ColumnImage> image = MapColumnImage(path);
    const bool usable = image.ok() && image->as_of <= basis &&
                        image->as_of >= excised &&
                        schema.FindAttribute(image->attribute) != nullptr;
    if (!usable) {
      std::error_code ignored;
      std::filesystem::remove(path, ignored);
      continue;
    }
    // The commits after the image: its attribute's datoms, from the log.
    const bool with_entities = image->order == IndexOrder::kAevt;
    ChangeListBuilder changes(with_entities);
    rocksdb::ReadOptions ro;
    const std::string lower =
        Fixed64BE(static_cast<uint64_t>(image->as_of) + 1);
    std::unique_ptr<rocksdb::Iterator> it(
        core->db->NewIterator(ro, core->cf(Cf::kLog)));
    std::vector<Datom> datoms;
    std::string key;
    size_t transactions = 0;
    EntityId last_change = 0;
    bool ok = true;
    for (it->Seek(lower); it->Valid(); it->Next()) {
      if (++transactions > kMaxImageReplayTx) {
        ok = false;
        break;
      }
      const std::string_view k(it->key().data(), it->key().size());
      if (k.size() != 8) continue;
      const auto tx = static_cast<EntityId>(DecodeFixed64BE(k));
      datoms.clear();
      if (!DecodeLogEntry(
               tx, std::string_view(it->value().data(), it->value().size()),
               &datoms)
               .ok()) {
        ok = false;
        break;
      }
      for (const Datom& d : datoms) {
        if (d.a != image->attribute) continue;
        last_change = tx;
        key.clear();
        EncodeKey(image->order, d, &key);
        changes.Add(key, d.added ? d.tx : 0);
      }
    }
    if (!ok || !it->status().ok()) {
      cache->RequestBuild(image->order, image->attribute);
      continue;
    }
    auto column = std::make_shared<AttributeColumn>();
    column->order = image->order;
    column->attribute = image->attribute;
    // As of the last commit that wrote the attribute: an image whose
    // attribute no commit wrote since is not written again at close.
    column->as_of = last_change == 0 ? image->as_of : last_change;
    column->first_change = column->as_of;
    column->delta = ColumnDelta().With(changes.Finish(), with_entities);
    column->base = image->keys;
    cache->Install(std::move(column), image->as_of, image->checksum);
  }
}

void ColumnWorker::SaveImages(StoreCore* core, EntityId basis) {
  ColumnCache* cache = core->column_cache.get();
  // A column's newest version holds the attribute as of every basis from
  // its last change on: its image is written (or moved) as of `basis`, so
  // that the next opening replays only what comes after the close.
  const std::vector<ColumnCache::CurrentImage> current = cache->CurrentImages();
  for (const auto& column : cache->StaleImages()) {
    std::shared_ptr<const KeyRun> keys = column->base;
    if (!column->delta.empty()) {
      auto folded = std::make_shared<KeyRun>();
      column->delta.FoldInto(*column->base, column->with_entities(),
                             folded.get());
      keys = std::move(folded);
    }
    const EntityId as_of = std::max(column->as_of, basis);
    if (WriteColumnImage(core->path, column->order, column->attribute, as_of,
                         *keys)
            .ok()) {
      cache->SetImage(column->order, column->attribute, as_of);
    }
  }
  for (const ColumnCache::CurrentImage& image : current) {
    // Errors leave the image as it was: still exact, only further behind.
    if (image.as_of < basis) {
      (void)AdvanceColumnImage(core->path, image.order, image.attribute,
                               image.as_of, basis);
    }
  }
}

}  // namespace mentat::storage::internal
