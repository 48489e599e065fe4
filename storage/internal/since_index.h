#ifndef MENTAT_STORAGE_INTERNAL_SINCE_INDEX_H_
#define MENTAT_STORAGE_INTERNAL_SINCE_INDEX_H_

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "mentat/storage/datom_cursor.h"
#include "mentat/storage/db.h"

namespace mentat::storage::internal {

// The datoms of since(t): current at the basis and asserted after t. Built
// from the `log` entries of the transactions in (t, basis], so it costs
// what it holds rather than a scan of the current indexes. Immutable once
// built; cursors over it may run on any thread.
class SinceIndex {
 public:
  // Builds the index, or returns nullptr when the log range holds more
  // than `limit` datoms (the caller then filters the current indexes).
  static absl::StatusOr<std::shared_ptr<const SinceIndex>> Build(const Db& db,
                                                                 EntityId t,
                                                                 size_t limit);

  std::unique_ptr<DatomCursor> NewCursor(IndexOrder order) const;

  struct Entry {
    std::string key;
    Datom datom;
  };

 private:
  std::array<std::vector<Entry>, 4> by_order_;
};

}  // namespace mentat::storage::internal

#endif  // MENTAT_STORAGE_INTERNAL_SINCE_INDEX_H_
