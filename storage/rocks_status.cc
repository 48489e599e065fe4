#include "internal/rocks_status.h"

#include <cerrno>
#include <cstring>
#include <string>

#include "mentat/base/str_cat.h"

namespace mentat::storage::internal {

bool IsDiskFull(const rocksdb::Status& s) {
  if (s.IsNoSpace() || s.subcode() == rocksdb::Status::kSpaceLimit) {
    return true;
  }
  // Some paths wrap the file system's error in a plain IOError; its text
  // still carries strerror(ENOSPC).
  return s.IsIOError() &&
         s.ToString().find(std::strerror(ENOSPC)) != std::string::npos;
}

[[nodiscard]] absl::Status WriteFailure(const rocksdb::Status& s,
                                        std::string_view what,
                                        std::string_view dir) {
  if (s.ok()) return absl::OkStatus();
  if (IsDiskFull(s)) {
    return absl::ResourceExhaustedError(
        StrCat("no space left on the disk holding ", dir, ": ", what,
               " failed (", s.ToString(), ")"));
  }
  if (s.IsCorruption()) {
    return absl::DataLossError(StrCat(what, " failed: ", s.ToString()));
  }
  return absl::UnavailableError(StrCat(what, " failed: ", s.ToString()));
}

[[nodiscard]] absl::Status ReadFailure(const rocksdb::Status& s,
                                       std::string_view what) {
  if (s.ok()) return absl::OkStatus();
  if (s.IsCorruption()) {
    return absl::DataLossError(StrCat(what, ": ", s.ToString()));
  }
  return absl::UnavailableError(StrCat(what, ": ", s.ToString()));
}

[[nodiscard]] absl::Status ImportFailure(const rocksdb::Status& s,
                                         std::string_view what,
                                         std::string_view dir) {
  if (s.ok()) return absl::OkStatus();
  if (IsDiskFull(s)) return WriteFailure(s, what, dir);
  return absl::UnavailableError(StrCat(what, ": ", s.ToString()));
}

}  // namespace mentat::storage::internal
