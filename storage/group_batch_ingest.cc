// GroupBatch's bulk-import half: collected writes become one sorted SST
// file per column family, ingested into RocksDB (no memtable, no WAL).

#include <algorithm>
#include <filesystem>

#include "internal/group_batch.h"
#include "mentat/storage/str_cat.h"
#include "rocksdb/sst_file_writer.h"

namespace mentat::storage::internal {
namespace {

absl::Status FromRocks(const rocksdb::Status& s, std::string_view what) {
  if (s.ok()) return absl::OkStatus();
  return absl::UnavailableError(StrCat(what, ": ", s.ToString()));
}

// Writes one SST file of `cf` from sorted, unique keys.
class SstRun {
 public:
  SstRun(const StoreCore* core, Cf cf, const std::string& path)
      : core_(core), cf_(cf), path_(path) {}

  absl::Status Add(std::string_view key, std::string_view value, bool deleted) {
    if (!writer_) {
      rocksdb::Options options(core_->db->GetDBOptions(),
                               core_->db->GetOptions(core_->cf(cf_)));
      writer_ = std::make_unique<rocksdb::SstFileWriter>(
          rocksdb::EnvOptions(), options, core_->cf(cf_));
      absl::Status s = FromRocks(writer_->Open(path_), "opening " + path_);
      if (!s.ok()) return s;
    }
    const rocksdb::Slice k(key.data(), key.size());
    return FromRocks(
        deleted ? writer_->Delete(k)
                : writer_->Put(k, rocksdb::Slice(value.data(), value.size())),
        "writing " + path_);
  }

  // Finishes the file and adds it to `args` (nothing if it stayed empty).
  absl::Status Finish(std::vector<rocksdb::IngestExternalFileArg>* args) {
    if (!writer_) return absl::OkStatus();
    absl::Status s = FromRocks(writer_->Finish(), "finishing " + path_);
    if (!s.ok()) return s;
    rocksdb::IngestExternalFileArg arg;
    arg.column_family = core_->cf(cf_);
    arg.external_files = {path_};
    arg.options.move_files = true;
    args->push_back(std::move(arg));
    return absl::OkStatus();
  }

 private:
  const StoreCore* core_;
  Cf cf_;
  std::string path_;
  std::unique_ptr<rocksdb::SstFileWriter> writer_;
};

}  // namespace

size_t GroupBatch::collected_keys() const {
  size_t n = 0;
  for (const auto& map : overlay_) n += map.size();
  for (const auto& run : runs_) n += run.size();
  return n;
}

absl::Status GroupBatch::IngestRuns(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return absl::UnavailableError(
        StrCat("cannot create ", dir, ": ", ec.message()));
  }
  // Iterators over the DB must not outlive what ingestion replaces.
  for (auto& it : db_iterators_) it.reset();
  std::vector<rocksdb::IngestExternalFileArg> args;
  for (int c = 0; c < static_cast<int>(Cf::kCount); ++c) {
    const Cf cf = static_cast<Cf>(c);
    SstRun run(core_, cf, StrCat(dir, "/", CfName(cf), ".sst"));
    absl::Status s;
    if (c < 4 && Readable(static_cast<IndexOrder>(c))) {
      // The overlay holds the final state of every key, already sorted.
      char value[8];
      for (const auto& [key, tx] : overlay_[c]) {
        uint64_t v = static_cast<uint64_t>(tx);
        for (int i = 7; i >= 0; --i, v >>= 8) {
          value[i] = static_cast<char>(v & 0xff);
        }
        s = run.Add(key, std::string_view(value, 8), tx == kDeleted);
        if (!s.ok()) return s;
      }
    } else {
      auto& entries = runs_[c];
      std::stable_sort(
          entries.begin(), entries.end(),
          [](const RunEntry& a, const RunEntry& b) { return a.key < b.key; });
      for (size_t i = 0; i < entries.size(); ++i) {
        // The last write of a key wins.
        if (i + 1 < entries.size() && entries[i + 1].key == entries[i].key) {
          continue;
        }
        s = run.Add(entries[i].key, entries[i].value, entries[i].deleted);
        if (!s.ok()) return s;
      }
    }
    s = run.Finish(&args);
    if (!s.ok()) return s;
  }
  // One call for every family: the ingestion is atomic across them.
  if (!args.empty()) {
    absl::Status s = FromRocks(core_->db->IngestExternalFiles(args),
                               "ingesting imported data");
    if (!s.ok()) return s;
  }
  Clear();
  std::filesystem::remove_all(dir, ec);
  return absl::OkStatus();
}

}  // namespace mentat::storage::internal
