#ifndef MENTAT_STORAGE_INTERNAL_SST_RUN_H_
#define MENTAT_STORAGE_INTERNAL_SST_RUN_H_

#include <cstdint>
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
// repeats, as SST files for ingestion (a bulk import's chunk). A split
// starts a new file where the keys' first 8 bytes change in a way that
// (in an import of fresh entities) separates this chunk's keys from the
// ranges earlier chunks wrote: each file then lies beside or above
// everything ingested before, and RocksDB places it in the last level
// instead of L0.
//
// One thread at a time; runs of different families may be written on
// different threads. `core` must outlive the run. Errors: as
// ImportFailure (a full disk names the store's directory).
class SstRun {
 public:
  enum class Split {
    kNone,
    // Where the partition of the first 8 bytes (an entity id) changes:
    // EAVT, whose fresh entities lie above the earlier chunks' in each
    // partition.
    kPartition,
    // Where the first 8 bytes (an attribute) change: AEVT, whose fresh
    // entities lie above the earlier chunks' within each attribute.
    kPrefix,
  };
  // Files are named `path`-N.sst.
  SstRun(const StoreCore* core, Cf cf, std::string path, Split split,
         bool compress = true);

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
  Split split_;
  bool compress_;
  // The first 8 bytes of the file's keys (kPrefix), or their partition
  // (kPartition).
  uint64_t part_ = 0;
  std::vector<std::string> files_;
  std::unique_ptr<rocksdb::SstFileWriter> writer_;
};

}  // namespace mentat::storage::internal

#endif  // MENTAT_STORAGE_INTERNAL_SST_RUN_H_
