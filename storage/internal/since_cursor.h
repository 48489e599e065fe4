#ifndef MENTAT_STORAGE_INTERNAL_SINCE_CURSOR_H_
#define MENTAT_STORAGE_INTERNAL_SINCE_CURSOR_H_

#include <memory>
#include <vector>

#include "internal/key_run.h"
#include "mentat/storage/datom_cursor.h"
#include "mentat/storage/keys.h"

namespace mentat::storage::internal {

// A cursor over the layers of a since() index in `order` (SinceIndex):
// `runs` oldest first, the first a base. Of a key in several runs the
// newest decides, and a tx of 0 there hides it. Every datom it yields is
// an assertion. The runs must outlive the cursor; it is not thread-safe,
// but cursors over the same runs may run on any threads.
std::unique_ptr<DatomCursor> NewSinceRunCursor(IndexOrder order,
                                               std::vector<const KeyRun*> runs);
// The cursor of an index of one layer (a base).
std::unique_ptr<DatomCursor> NewSinceRunCursor(IndexOrder order,
                                               const KeyRun* run);

}  // namespace mentat::storage::internal

#endif  // MENTAT_STORAGE_INTERNAL_SINCE_CURSOR_H_
