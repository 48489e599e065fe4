#ifndef MENTAT_STORAGE_INTERNAL_COLUMN_IMAGE_H_
#define MENTAT_STORAGE_INTERNAL_COLUMN_IMAGE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "internal/key_run.h"
#include "mentat/storage/datom.h"
#include "mentat/storage/keys.h"

namespace mentat::storage::internal {

// A column's keys on disk, so that a reopened store has its columns at
// once instead of reading each attribute from RocksDB again (seconds at
// scale m, while the first queries crawl through RocksDB). One file per
// column, <store>/columns/<aevt|avet>-<attribute>.col: a header (the
// column, and the basis its keys are as of), then the KeyRun's arrays as
// they lie in memory. A store maps the file and reads the arrays in
// place, so opening costs what the first queries touch; the log after
// the image's basis brings it up to date.
//
// Images are hints: a missing or malformed one means the column is built
// from RocksDB again. Written through a temporary file, synced, then
// renamed over the old one, so a crash leaves the old image or the new.
//
// A byte flipped on disk must not become a wrong answer, so both parts
// carry a CRC32C: the header's is checked when the image is mapped (it
// says where to replay the log from); the arrays' (`checksum`) is checked
// by the column thread before any reader is given the column
// (ColumnCache::Install), because reading every page of every image would
// make opening a large store cost seconds.
struct ColumnImage {
  IndexOrder order = IndexOrder::kAevt;
  EntityId attribute = 0;
  EntityId as_of = 0;  // the keys are the attribute's as of this basis
  // Views into the mapped file (KeyRun::mapping keeps it mapped).
  std::shared_ptr<const KeyRun> keys;
  // What ColumnImageChecksum(*keys) gives if no byte of the arrays changed
  // since they were written.
  uint32_t checksum = 0;
};

// The CRC32C of a column's arrays (keys, ends, txs and entities), as the
// image of the run carries it.
uint32_t ColumnImageChecksum(const KeyRun& keys);

// True if the arrays of `keys` (mapped from an image) are as written:
// their ColumnImageChecksum is `checksum`, and every key's offsets hold
// (in order, within the keys, long enough for its attribute and entity),
// which MapColumnImage checks only for the first and last key. No other
// key of a mapped image may be read before this holds.
bool ColumnImageIntact(const KeyRun& keys, uint32_t checksum);

// CRC32C (Castagnoli) of `n` bytes continuing `crc` (0 to start):
// Crc32cExtend(Crc32cExtend(0, a), b) is the CRC32C of a then b. With
// the CPU's crc32 instruction where it has one.
uint32_t Crc32cExtend(uint32_t crc, const char* data, size_t n);

// The image file of (order, attribute) in the store at `store_path`.
std::string ColumnImagePath(const std::string& store_path, IndexOrder order,
                            EntityId attribute);

// The image files of the store in `store_path`.
std::vector<std::string> ListColumnImages(const std::string& store_path);

// Writes `keys`, the column of (order, attribute) as of `as_of`, as its
// image in `store_path`. Unavailable on an I/O error (the old image, if
// any, stays).
[[nodiscard]] absl::Status WriteColumnImage(const std::string& store_path,
                                            IndexOrder order,
                                            EntityId attribute, EntityId as_of,
                                            const KeyRun& keys);

// Moves the basis in the header of the image of (order, attribute) from
// `from` to `to`, for a column that no commit between the two wrote: its
// keys are then as of `to` too, and the next opening replays the log
// from there rather than from `from` (every opening would otherwise read
// the whole log since the image, growing with every write to other
// attributes). A torn write leaves a header whose checksum fails, and the
// image is built again like any malformed one. FailedPrecondition if the
// image is not that column's as of `from`, DataLoss if malformed,
// Unavailable on an I/O error.
[[nodiscard]] absl::Status AdvanceColumnImage(const std::string& store_path,
                                              IndexOrder order,
                                              EntityId attribute, EntityId from,
                                              EntityId to);

// Maps the image at `path`, checking its header and the offsets of its
// first and last key (not the arrays: see ColumnImage and
// ColumnImageIntact), so that it reads a few pages of the file whatever
// its size. DataLoss if it is not a well-formed
// image, Unavailable on an I/O error.
[[nodiscard]] absl::StatusOr<ColumnImage> MapColumnImage(
    const std::string& path);

}  // namespace mentat::storage::internal

#endif  // MENTAT_STORAGE_INTERNAL_COLUMN_IMAGE_H_
