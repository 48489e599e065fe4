#ifndef MENTAT_STORAGE_INTERNAL_ROCKS_STATUS_H_
#define MENTAT_STORAGE_INTERNAL_ROCKS_STATUS_H_

#include <string_view>

#include "absl/status/status.h"
#include "rocksdb/status.h"

namespace mentat::storage::internal {

// True if `s` reports a full disk: ENOSPC (RocksDB's NoSpace) or the space
// limit of an SstFileManager (SpaceLimit).
[[nodiscard]] bool IsDiskFull(const rocksdb::Status& s);

// The status of `what` (a phrase such as "the commit") that failed with
// `s` while writing under `dir`. A full disk is ResourceExhausted and
// names `dir`: "no space left on the disk holding DIR: WHAT failed (...)";
// corruption is DataLoss; any other failure Unavailable. OK for an OK `s`.
[[nodiscard]] absl::Status WriteFailure(const rocksdb::Status& s,
                                        std::string_view what,
                                        std::string_view dir);

// The status of `what` (a phrase such as "reading the basis's log entry")
// that failed with `s` while reading: corruption is DataLoss, any other
// failure Unavailable, "WHAT: ...". OK for an OK `s`.
[[nodiscard]] absl::Status ReadFailure(const rocksdb::Status& s,
                                       std::string_view what);

// The status of a bulk import's `what` that failed with `s`: as
// WriteFailure's ResourceExhausted naming `dir` on a full disk, else
// Unavailable "WHAT: ...". OK for an OK `s`.
[[nodiscard]] absl::Status ImportFailure(const rocksdb::Status& s,
                                         std::string_view what,
                                         std::string_view dir);

}  // namespace mentat::storage::internal

#endif  // MENTAT_STORAGE_INTERNAL_ROCKS_STATUS_H_
