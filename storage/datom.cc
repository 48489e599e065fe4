#include "mentat/storage/datom.h"

#include "absl/strings/str_cat.h"

namespace mentat::storage {

std::string Datom::DebugString() const {
  return absl::StrCat("[", e, " ", a, " ", v.DebugString(), " ", tx, " ",
                      added ? "true" : "false", "]");
}

}  // namespace mentat::storage
