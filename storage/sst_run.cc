#include "internal/sst_run.h"

#include <utility>

#include "internal/coding.h"
#include "internal/rocks_status.h"
#include "mentat/base/str_cat.h"
#include "mentat/storage/entity_ids.h"

namespace mentat::storage::internal {

SstRun::SstRun(const StoreCore* core, Cf cf, std::string path, Split split,
               bool compress)
    : core_(core),
      cf_(cf),
      path_(std::move(path)),
      split_(split),
      compress_(compress) {}

absl::Status SstRun::Add(std::string_view key, std::string_view value,
                         bool deleted) {
  if (split_ != Split::kNone && key.size() >= 8) {
    uint64_t part = DecodeFixed64BE(key);
    if (split_ == Split::kPartition) {
      part = static_cast<uint64_t>(PartitionIndex(static_cast<EntityId>(part)));
    }
    if (writer_ && part != part_) {
      absl::Status s = FinishFile();
      if (!s.ok()) return s;
    }
    part_ = part;
  }
  if (!writer_) {
    rocksdb::Options options(core_->db->GetDBOptions(),
                             core_->db->GetOptions(core_->cf(cf_)));
    if (!compress_) {
      // SstFileWriter takes the bottommost compression when one is set.
      options.compression = rocksdb::kNoCompression;
      options.bottommost_compression = rocksdb::kNoCompression;
    }
    // The files' pages stay in the page cache (SstFileWriter drops them
    // by default, a fadvise per MB): the transactor reads the chunk back
    // through the DB, and the import's closing merge reads the files of
    // the overlapping families again.
    writer_ = std::make_unique<rocksdb::SstFileWriter>(
        rocksdb::EnvOptions(), options, core_->cf(cf_),
        /*invalidate_page_cache=*/false);
    files_.push_back(StrCat(path_, "-", files_.size(), ".sst"));
    absl::Status s = ImportFailure(writer_->Open(files_.back()),
                                   "opening " + files_.back(), core_->path);
    if (!s.ok()) return s;
  }
  const rocksdb::Slice k(key.data(), key.size());
  const rocksdb::Status s =
      deleted ? writer_->Delete(k)
              : writer_->Put(k, rocksdb::Slice(value.data(), value.size()));
  // The message only on failure: this runs once per key of the chunk.
  if (s.ok()) return absl::OkStatus();
  return ImportFailure(s, "writing " + files_.back(), core_->path);
}

absl::Status SstRun::Finish(std::vector<rocksdb::IngestExternalFileArg>* args) {
  absl::Status s = FinishFile();
  if (!s.ok() || files_.empty()) return s;
  rocksdb::IngestExternalFileArg arg;
  arg.column_family = core_->cf(cf_);
  arg.external_files = files_;
  arg.options.move_files = true;
  args->push_back(std::move(arg));
  return absl::OkStatus();
}

absl::Status SstRun::FinishFile() {
  if (!writer_) return absl::OkStatus();
  absl::Status s = ImportFailure(writer_->Finish(),
                                 "finishing " + files_.back(), core_->path);
  writer_.reset();
  return s;
}

}  // namespace mentat::storage::internal
