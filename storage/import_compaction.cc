#include "internal/import_compaction.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <string>
#include <thread>

#include "internal/rocks_status.h"
#include "mentat/base/str_cat.h"
#include "rocksdb/env.h"

namespace mentat::storage::internal {

bool ChunksOverlap(Cf cf) {
  switch (cf) {
    case Cf::kAvet:
    case Cf::kVaet:
    case Cf::kAvetHist:
    case Cf::kVaetHist:
      return true;
    default:
      return false;
  }
}

CompactionPause::CompactionPause(const StoreCore* core) : core_(core) {
  for (int c = 0; c < static_cast<int>(Cf::kCount); ++c) {
    rocksdb::ColumnFamilyHandle* cf = core_->cf(static_cast<Cf>(c));
    if (static_cast<Cf>(c) == Cf::kMeta ||
        core_->db->GetOptions(cf).disable_auto_compactions) {
      continue;
    }
    if (core_->db
            ->SetOptions(cf, {{"disable_auto_compactions", "true"},
                              {"check_flush_compaction_key_order", "false"}})
            .ok()) {
      paused_.push_back(cf);
    }
  }
}

CompactionPause::~CompactionPause() {
  for (rocksdb::ColumnFamilyHandle* cf : paused_) {
    // Best effort: a store reopened later starts with both on anyway.
    core_->db
        ->SetOptions(cf, {{"disable_auto_compactions", "false"},
                          {"check_flush_compaction_key_order", "true"}})
        .PermitUncheckedError();
  }
}

namespace {

[[nodiscard]] absl::Status CompactFamily(const StoreCore* core, Cf cf) {
  rocksdb::ColumnFamilyHandle* handle = core->cf(cf);
  rocksdb::ColumnFamilyMetaData meta;
  core->db->GetColumnFamilyMetaData(handle, &meta);
  std::vector<std::string> files;
  size_t in_l0 = 0;
  for (const rocksdb::LevelMetaData& level : meta.levels) {
    for (const rocksdb::SstFileMetaData& file : level.files) {
      files.push_back(file.name);
      if (level.level == 0) ++in_l0;
    }
  }
  if (files.empty()) return absl::OkStatus();
  const rocksdb::Options options = core->db->GetOptions(handle);
  rocksdb::CompactionOptions compaction;
  // CompactionOptions defaults to Snappy: the family's own last-level
  // compression instead, as its compactions would write.
  compaction.compression =
      options.bottommost_compression != rocksdb::kDisableCompressionOption
          ? options.bottommost_compression
          : options.compression;
  compaction.output_file_size_limit = options.target_file_size_base;
  // One input set, all levels: the output is one sorted run in the last
  // level, which nothing overlaps.
  const auto start = std::chrono::steady_clock::now();
  const rocksdb::Status s =
      core->db->CompactFiles(compaction, handle, files, options.num_levels - 1);
  const std::chrono::duration<double> took =
      std::chrono::steady_clock::now() - start;
  // In the store's LOG, which keeps warnings and worse only: one line per
  // family and import, saying where the import's last seconds went.
  rocksdb::Log(rocksdb::InfoLogLevel::WARN_LEVEL, options.info_log,
               "[%s] import: merged %zu files (%zu in L0, %" PRIu64
               " bytes) into the last level in %.3f s: %s",
               CfName(cf), files.size(), in_l0, meta.size, took.count(),
               s.ToString().c_str());
  return ImportFailure(s, StrCat("merging the imported files of ", CfName(cf)),
                       core->path);
}

}  // namespace

absl::Status CompactImportedFamilies(const StoreCore* core,
                                     const std::vector<Cf>& families,
                                     int threads) {
  std::vector<absl::Status> statuses(families.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < families.size(); i = next++) {
      statuses[i] = CompactFamily(core, families[i]);
    }
  };
  std::vector<std::thread> helpers;
  for (int t = 1; t < threads && static_cast<size_t>(t) < families.size();
       ++t) {
    helpers.emplace_back(work);
  }
  work();
  for (std::thread& t : helpers) t.join();
  for (const absl::Status& s : statuses) {
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

std::vector<Cf> FamiliesCrowdedInL0(const StoreCore* core) {
  std::vector<Cf> crowded;
  for (int c = 0; c < static_cast<int>(Cf::kCount); ++c) {
    // The import writes no meta files, and meta's compactions run on.
    if (static_cast<Cf>(c) == Cf::kMeta) continue;
    rocksdb::ColumnFamilyHandle* handle = core->cf(static_cast<Cf>(c));
    rocksdb::ColumnFamilyMetaData meta;
    core->db->GetColumnFamilyMetaData(handle, &meta);
    if (meta.levels.empty()) continue;
    const size_t files = meta.levels[0].files.size();
    const auto trigger = static_cast<size_t>(std::max(
        1, core->db->GetOptions(handle).level0_file_num_compaction_trigger));
    if (files >= trigger) crowded.push_back(static_cast<Cf>(c));
  }
  return crowded;
}

}  // namespace mentat::storage::internal
