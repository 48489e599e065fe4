#include "internal/column_cache.h"

#include <algorithm>
#include <utility>

#include "absl/synchronization/mutex.h"
#include "internal/column_image.h"

namespace mentat::storage::internal {

ColumnCache::ColumnCache(const ColumnCacheOptions& options)
    : options_(options) {}

std::shared_ptr<const AttributeColumn> ColumnCache::Find(IndexOrder order,
                                                         EntityId attribute,
                                                         EntityId t) {
  const uint64_t key = SlotKey(order, attribute);
  bool unchecked = false;
  {
    absl::MutexLock lock(&mu_);
    auto it = slots_.find(key);
    if (it == slots_.end()) return nullptr;
    unchecked = it->second.verifying;
  }
  if (unchecked && !CheckImage(key)) return nullptr;
  return FindChecked(key, t);
}

bool ColumnCache::CheckImage(uint64_t slot_key) {
  std::shared_ptr<const KeyRun> base;
  uint32_t expected = 0;
  uint64_t generation = 0;
  {
    absl::MutexLock lock(&mu_);
    for (;;) {
      auto it = slots_.find(slot_key);
      if (it == slots_.end()) return false;
      Slot& slot = it->second;
      if (!slot.verifying) return !slot.versions.empty();
      if (slot.check_failed || stopping_) return false;
      if (!slot.checking) {
        slot.checking = true;
        base = slot.versions.back()->base;
        expected = slot.image_checksum;
        generation = slot.generation;
        break;
      }
      idle_cv_.Wait(&mu_);  // the column thread (or a reader) checks it
    }
  }
  const bool intact = ColumnImageIntact(*base, expected);
  absl::MutexLock lock(&mu_);
  Slot& slot = slots_[slot_key];
  slot.checking = false;
  idle_cv_.SignalAll();
  if (slot.generation != generation || !slot.verifying) {
    return !slot.verifying && !slot.versions.empty();
  }
  if (!intact) {
    // The column thread's check (queued when the image was installed)
    // removes the file and rebuilds the column.
    slot.check_failed = true;
    return false;
  }
  slot.verifying = false;
  if (FoldDueLocked(*slot.versions.back())) {
    QueueLocked(slot, JobKind::kFold,
                (slot_key & 1) == 0 ? IndexOrder::kAevt : IndexOrder::kAvet,
                static_cast<EntityId>(slot_key >> 2));
  }
  return true;
}

std::shared_ptr<const AttributeColumn> ColumnCache::FindChecked(
    uint64_t slot_key, EntityId t) {
  absl::MutexLock lock(&mu_);
  auto it = slots_.find(slot_key);
  if (it == slots_.end() || it->second.verifying) return nullptr;
  Slot& slot = it->second;
  // Each group commit that wrote the attribute made a version, so the
  // newest one not newer than t holds the attribute exactly as of t,
  // unless t falls inside the group of the version after it.
  for (auto v = slot.versions.rbegin(); v != slot.versions.rend(); ++v) {
    if ((*v)->as_of <= t) {
      slot.used = ++tick_;
      hits_.fetch_add(1, std::memory_order_relaxed);
      return *v;
    }
    if ((*v)->first_change <= t) return nullptr;
  }
  return nullptr;
}

void ColumnCache::CountScanned(IndexOrder order, EntityId attribute,
                               uint64_t rows) {
  absl::MutexLock lock(&mu_);
  Slot& slot = slots_[SlotKey(order, attribute)];
  slot.scanned += rows;
  if (slot.scanned >= options_.build_after_rows) {
    QueueLocked(slot, JobKind::kBuild, order, attribute);
  }
}

void ColumnCache::RefuseLocked(Slot& slot, IndexOrder order,
                               EntityId attribute) {
  if (slot.too_big) return;
  slot.too_big = true;
  ++refused_;
  refusals_.push_back(Refusal{order, attribute});
}

std::vector<ColumnCache::Refusal> ColumnCache::TakeRefusals() {
  absl::MutexLock lock(&mu_);
  reporting_ = !refusals_.empty();
  return std::exchange(refusals_, {});
}

void ColumnCache::RefusalsReported() {
  absl::MutexLock lock(&mu_);
  reporting_ = false;
  idle_cv_.SignalAll();
}

void ColumnCache::RequestBuild(IndexOrder order, EntityId attribute) {
  absl::MutexLock lock(&mu_);
  QueueLocked(slots_[SlotKey(order, attribute)], JobKind::kBuild, order,
              attribute);
}

void ColumnCache::QueueLocked(Slot& slot, JobKind kind, IndexOrder order,
                              EntityId attribute, bool import) {
  if (slot.queued || stopping_) return;
  if (kind == JobKind::kBuild && (!slot.versions.empty() || slot.too_big)) {
    return;
  }
  slot.queued = true;
  jobs_.push_back(Job{kind, order, attribute, slot.generation, import});
  if (import) ++import_builds_;
  jobs_cv_.Signal();
}

void ColumnCache::EndLocked(Slot& slot, const Job& job) {
  if (job.import && import_builds_ > 0) --import_builds_;
  EndJobLocked(slot);
}

void ColumnCache::QueueImportBuilds(const Statistics& stats) {
  struct Wanted {
    int64_t datoms;
    IndexOrder order;
    EntityId attribute;
  };
  std::vector<Wanted> wanted;
  for (const auto& [attribute, held] : stats.all()) {
    const AttributeStats& s = *held;
    if (s.datoms < 0 ||
        static_cast<uint64_t>(s.datoms) < options_.build_after_rows) {
      continue;
    }
    wanted.push_back({s.datoms, IndexOrder::kAevt, attribute});
    if (s.values_tracked) {
      wanted.push_back({s.datoms, IndexOrder::kAvet, attribute});
    }
  }
  // Smallest first, so that as many fit as can; the rest in a fixed order
  // (the statistics are a hash map).
  std::sort(wanted.begin(), wanted.end(), [](const Wanted& a, const Wanted& b) {
    if (a.datoms != b.datoms) return a.datoms < b.datoms;
    if (a.order != b.order) return a.order == IndexOrder::kAvet;
    return a.attribute < b.attribute;
  });
  absl::MutexLock lock(&mu_);
  for (const Wanted& w : wanted) {
    QueueLocked(slots_[SlotKey(w.order, w.attribute)], JobKind::kBuild, w.order,
                w.attribute, /*import=*/true);
  }
}

void ColumnCache::WaitImportBuilds() {
  absl::MutexLock lock(&mu_);
  while (import_builds_ > 0 && !stopping_) idle_cv_.Wait(&mu_);
}

bool ColumnCache::FoldDueLocked(const AttributeColumn& column) const {
  const auto share = static_cast<size_t>(
      static_cast<double>(column.base->size()) * options_.fold_fraction);
  return column.delta.size() > std::max(options_.fold_min_keys, share);
}

void ColumnCache::Commit(EntityId tx, const std::vector<const Datom*>& datoms) {
  // The columns that want this group: their slots' keys, read under the
  // lock, so that the keys are encoded outside it. A build that starts
  // logging after this reads a snapshot that holds the group already.
  struct Changes {
    ChangeListBuilder builder;
    EntityId first_tx = 0;  // the group's first transaction among them
  };
  absl::flat_hash_map<uint64_t, Changes> changes;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [key, slot] : slots_) {
      if (!slot.versions.empty() || slot.logging) {
        changes.emplace(key, Changes{ChangeListBuilder((key & 1) == 0)});
      }
    }
  }
  if (changes.empty()) return;
  std::string key;
  for (const Datom* d : datoms) {
    for (IndexOrder order : {IndexOrder::kAevt, IndexOrder::kAvet}) {
      auto it = changes.find(SlotKey(order, d->a));
      if (it == changes.end()) continue;
      key.clear();
      EncodeKey(order, *d, &key);
      it->second.builder.Add(key, d->added ? d->tx : 0);
      if (it->second.first_tx == 0 || d->tx < it->second.first_tx) {
        it->second.first_tx = d->tx;
      }
    }
  }
  absl::MutexLock lock(&mu_);
  for (auto& [slot_key, slot_changes] : changes) {
    ChangeListBuilder& builder = slot_changes.builder;
    if (builder.empty()) continue;
    auto it = slots_.find(slot_key);
    if (it == slots_.end()) continue;
    Slot& slot = it->second;
    const bool with_entities = (slot_key & 1) == 0;
    auto run = std::make_shared<const KeyRun>(builder.Finish());
    if (slot.logging) slot.log.emplace_back(tx, run);
    if (slot.versions.empty()) continue;
    const AttributeColumn& newest = *slot.versions.back();
    // A build that read a snapshot holding this group already has it.
    if (newest.as_of >= tx) continue;
    auto next = std::make_shared<AttributeColumn>();
    next->order = newest.order;
    next->attribute = newest.attribute;
    next->as_of = tx;
    next->first_change = std::min(slot_changes.first_tx, tx);
    next->base = newest.base;
    next->delta = newest.delta.With(*run, with_entities);
    const bool fold = FoldDueLocked(*next);
    PushLocked(slot, std::move(next), /*replace=*/false);
    if (fold) {
      QueueLocked(slot, JobKind::kFold,
                  with_entities ? IndexOrder::kAevt : IndexOrder::kAvet,
                  static_cast<EntityId>(slot_key >> 2));
    }
  }
  EvictLocked();
}

void ColumnCache::PushLocked(Slot& slot,
                             std::shared_ptr<const AttributeColumn> column,
                             bool replace) {
  bytes_ -= slot.charge;
  slot.charge = column->charge();
  bytes_ += slot.charge;
  if (replace && !slot.versions.empty()) {
    slot.versions.back() = std::move(column);
  } else {
    slot.versions.push_back(std::move(column));
  }
  if (slot.versions.size() > options_.kept_versions + 1) {
    slot.versions.erase(slot.versions.begin(),
                        slot.versions.end() -
                            static_cast<ptrdiff_t>(options_.kept_versions + 1));
  }
}

void ColumnCache::DropLocked(Slot& slot) {
  bytes_ -= slot.charge;
  slot.charge = 0;
  slot.versions.clear();
  slot.scanned = 0;
  slot.verifying = false;
  slot.check_failed = false;
  ++slot.generation;
}

void ColumnCache::EndJobLocked(Slot& slot) {
  slot.queued = false;
  slot.logging = false;
  slot.log.clear();
  --running_;
  idle_cv_.SignalAll();
}

void ColumnCache::EvictLocked() {
  while (bytes_ > options_.capacity_bytes) {
    Slot* oldest = nullptr;
    for (auto& [key, slot] : slots_) {
      if (!slot.versions.empty() &&
          (oldest == nullptr || slot.used < oldest->used)) {
        oldest = &slot;
      }
    }
    if (oldest == nullptr) return;
    DropLocked(*oldest);
  }
}

void ColumnCache::TouchAll(EntityId tx) {
  absl::MutexLock lock(&mu_);
  floor_ = std::max(floor_, tx);
  for (auto& [key, slot] : slots_) DropLocked(slot);
}

bool ColumnCache::NextJob(Job* job) {
  absl::MutexLock lock(&mu_);
  while (!stopping_ && jobs_.empty()) jobs_cv_.Wait(&mu_);
  if (stopping_) return false;
  *job = jobs_.front();
  jobs_.pop_front();
  ++running_;
  return true;
}

bool ColumnCache::BeginBuild(Job* job) {
  absl::MutexLock lock(&mu_);
  Slot& slot = slots_[SlotKey(job->order, job->attribute)];
  if (stopping_ || !slot.versions.empty() || slot.too_big) {
    EndLocked(slot, *job);
    return false;
  }
  job->generation = slot.generation;
  slot.logging = true;
  slot.log.clear();
  return true;
}

ColumnDelta ColumnCache::ReplayLog(const Slot& slot, EntityId after,
                                   bool with_entities) {
  ColumnDelta delta;
  for (const auto& [tx, changes] : slot.log) {
    if (tx > after) delta = delta.With(*changes, with_entities);
  }
  return delta;
}

bool ColumnCache::FinishBuild(const Job& job, std::shared_ptr<KeyRun> base,
                              EntityId base_at, bool too_big) {
  absl::MutexLock lock(&mu_);
  Slot& slot = slots_[SlotKey(job.order, job.attribute)];
  // A bulk import since the build began, or one the snapshot is older
  // than: what it read may be gone.
  const bool stale = slot.generation != job.generation || base_at < floor_;
  if (too_big) RefuseLocked(slot, job.order, job.attribute);
  if (base == nullptr || stale || stopping_) {
    if (base == nullptr) slot.scanned = 0;
    EndLocked(slot, job);
    return false;
  }
  auto column = std::make_shared<AttributeColumn>();
  column->order = job.order;
  column->attribute = job.attribute;
  // The snapshot held every commit up to base_at, and the log every
  // commit that wrote the attribute after the build began, so the column
  // holds the attribute as of the last of them.
  column->as_of = base_at;
  for (const auto& [tx, changes] : slot.log) {
    column->as_of = std::max(column->as_of, tx);
  }
  column->first_change = column->as_of;
  column->delta = ReplayLog(slot, base_at, column->with_entities());
  column->base = std::move(base);
  if (column->charge() > max_column_bytes()) {
    RefuseLocked(slot, job.order, job.attribute);
    EndLocked(slot, job);
    return false;
  }
  // A column no query asked for takes only room that is free.
  if (job.import && bytes_ + column->charge() > options_.capacity_bytes) {
    EndLocked(slot, job);
    return false;
  }
  const bool fold = FoldDueLocked(*column);
  PushLocked(slot, std::move(column), /*replace=*/false);
  slot.scanned = 0;
  slot.used = ++tick_;
  ++builds_;
  EndLocked(slot, job);
  if (fold) QueueLocked(slot, JobKind::kFold, job.order, job.attribute);
  EvictLocked();
  return !slot.versions.empty();
}

std::shared_ptr<const AttributeColumn> ColumnCache::BeginFold(Job* job) {
  absl::MutexLock lock(&mu_);
  Slot& slot = slots_[SlotKey(job->order, job->attribute)];
  if (stopping_ || slot.versions.empty() ||
      slot.generation != job->generation) {
    EndJobLocked(slot);
    return nullptr;
  }
  slot.logging = true;
  slot.log.clear();
  return slot.versions.back();
}

void ColumnCache::FinishFold(const Job& job, std::shared_ptr<KeyRun> base) {
  absl::MutexLock lock(&mu_);
  Slot& slot = slots_[SlotKey(job.order, job.attribute)];
  if (base == nullptr || stopping_ || slot.versions.empty() ||
      slot.generation != job.generation) {
    EndJobLocked(slot);
    return;
  }
  // The folded version was the newest when the fold began, and every
  // commit since is in the log: the new base plus the log is the newest
  // version's state, under its as_of.
  const AttributeColumn& newest = *slot.versions.back();
  auto column = std::make_shared<AttributeColumn>();
  column->order = job.order;
  column->attribute = job.attribute;
  column->as_of = newest.as_of;
  column->first_change = newest.first_change;
  column->delta = ReplayLog(slot, 0, column->with_entities());
  column->base = std::move(base);
  if (column->charge() > max_column_bytes()) {
    RefuseLocked(slot, job.order, job.attribute);
    DropLocked(slot);
    EndJobLocked(slot);
    return;
  }
  PushLocked(slot, std::move(column), /*replace=*/true);
  ++folds_;
  EndJobLocked(slot);
  EvictLocked();
}

void ColumnCache::Stop() {
  absl::MutexLock lock(&mu_);
  stopping_ = true;
  for (const Job& job : jobs_) {
    slots_[SlotKey(job.order, job.attribute)].queued = false;
  }
  jobs_.clear();
  import_builds_ = 0;
  jobs_cv_.SignalAll();
  idle_cv_.SignalAll();
}

void ColumnCache::WaitIdle() {
  absl::MutexLock lock(&mu_);
  // A job's refusals are reported after it ends (ColumnWorker::Run).
  while (!jobs_.empty() || running_ != 0 || !refusals_.empty() || reporting_) {
    idle_cv_.Wait(&mu_);
  }
}

void ColumnCache::Install(std::shared_ptr<const AttributeColumn> column,
                          EntityId image_as_of, uint32_t checksum) {
  absl::MutexLock lock(&mu_);
  Slot& slot = slots_[SlotKey(column->order, column->attribute)];
  slot.image_as_of = image_as_of;
  if (!slot.versions.empty() || slot.queued ||
      column->charge() > max_column_bytes()) {
    return;
  }
  const IndexOrder order = column->order;
  const EntityId attribute = column->attribute;
  PushLocked(slot, std::move(column), /*replace=*/false);
  slot.used = ++tick_;
  slot.verifying = true;
  slot.image_checksum = checksum;
  QueueLocked(slot, JobKind::kVerify, order, attribute);
  EvictLocked();
}

std::shared_ptr<const KeyRun> ColumnCache::BeginVerify(const Job& job,
                                                       uint32_t* checksum) {
  absl::MutexLock lock(&mu_);
  const uint64_t key = SlotKey(job.order, job.attribute);
  // A reader checking it: its answer comes first, then this job's. (The
  // map may rehash while the lock is released: the slot is found again.)
  while (slots_[key].checking && slots_[key].verifying && !stopping_) {
    idle_cv_.Wait(&mu_);
  }
  Slot& slot = slots_[key];
  if (stopping_ || !slot.verifying || slot.generation != job.generation) {
    EndJobLocked(slot);
    return nullptr;
  }
  slot.checking = true;
  *checksum = slot.image_checksum;
  // No fold runs while the slot verifies, so every version shares the
  // image's base.
  return slot.versions.back()->base;
}

void ColumnCache::FinishVerify(const Job& job, bool intact) {
  absl::MutexLock lock(&mu_);
  Slot& slot = slots_[SlotKey(job.order, job.attribute)];
  slot.checking = false;
  if (!slot.verifying || slot.generation != job.generation) {
    EndJobLocked(slot);
    return;
  }
  slot.verifying = false;
  slot.check_failed = false;
  if (!intact) {
    DropLocked(slot);
    slot.image_as_of = 0;
    EndJobLocked(slot);
    QueueLocked(slot, JobKind::kBuild, job.order, job.attribute);
    return;
  }
  const bool fold = FoldDueLocked(*slot.versions.back());
  EndJobLocked(slot);
  if (fold) QueueLocked(slot, JobKind::kFold, job.order, job.attribute);
}

void ColumnCache::SetImage(IndexOrder order, EntityId attribute,
                           EntityId as_of) {
  absl::MutexLock lock(&mu_);
  slots_[SlotKey(order, attribute)].image_as_of = as_of;
}

std::vector<std::shared_ptr<const AttributeColumn>> ColumnCache::StaleImages()
    const {
  absl::MutexLock lock(&mu_);
  std::vector<std::shared_ptr<const AttributeColumn>> out;
  for (const auto& [key, slot] : slots_) {
    // An unchecked column is not written again: a flipped byte in its
    // base would get a fresh checksum.
    if (!slot.versions.empty() && !slot.verifying &&
        slot.versions.back()->as_of != slot.image_as_of) {
      out.push_back(slot.versions.back());
    }
  }
  return out;
}

std::vector<ColumnCache::CurrentImage> ColumnCache::CurrentImages() const {
  absl::MutexLock lock(&mu_);
  std::vector<CurrentImage> out;
  for (const auto& [key, slot] : slots_) {
    // Held since its image (a dropped column's commits are not seen), and
    // every commit that wrote the attribute made a newer version.
    if (!slot.versions.empty() && slot.image_as_of != 0 &&
        slot.versions.back()->as_of == slot.image_as_of) {
      const AttributeColumn& c = *slot.versions.back();
      out.push_back({c.order, c.attribute, slot.image_as_of});
    }
  }
  return out;
}

CacheCounters ColumnCache::counters() const {
  absl::MutexLock lock(&mu_);
  CacheCounters c;
  c.hits = hits_.load(std::memory_order_relaxed);
  c.misses = builds_;
  c.bytes = bytes_;
  c.folds = folds_;
  c.refused = refused_;
  for (const auto& [key, slot] : slots_)
    c.entries += slot.versions.empty() ? 0 : 1;
  return c;
}

}  // namespace mentat::storage::internal
