#ifndef MENTAT_STORAGE_INTERNAL_SST_RUN_H_
#define MENTAT_STORAGE_INTERNAL_SST_RUN_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "internal/store_core.h"
#include "rocksdb/db.h"
#include "rocksdb/sst_file_writer.h"

namespace mentat::storage::internal {

// Writes the keys of one column family, given in sorted order without
// repeats, as SST files for ingestion (a bulk import's chunk). With
// `split_by_partition`, a new file starts where the partition of the
// key's first 8 bytes (an entity id) changes: the files of fresh entities
// then lie above everything ingested before, and RocksDB places them in
// the last level instead of L0.
//
// One thread at a time; runs of different families may be written on
// different threads. `core` must outlive the run. Errors: as
// ImportFailure (a full disk names the store's directory).
class SstRun {
 public:
  // Files are named `path`-N.sst.
  SstRun(const StoreCore* core, Cf cf, std::string path,
         bool split_by_partition, bool compress = true);

  // Adds `key` with `value`, or a delete of it.
  [[nodiscard]] absl::Status Add(std::string_view key, std::string_view value,
                                 bool deleted);

  // Finishes the files and adds what ingests them to `args` (nothing if
  // there are none). The files are moved into the DB by the ingestion.
  [[nodiscard]] absl::Status Finish(
      std::vector<rocksdb::IngestExternalFileArg>* args);

 private:
  [[nodiscard]] absl::Status FinishFile();

  const StoreCore* core_;
  Cf cf_;
  std::string path_;
  bool split_;
  bool compress_;
  int partition_ = -1;
  std::vector<std::string> files_;
  std::unique_ptr<rocksdb::SstFileWriter> writer_;
};

}  // namespace mentat::storage::internal

#endif  // MENTAT_STORAGE_INTERNAL_SST_RUN_H_
