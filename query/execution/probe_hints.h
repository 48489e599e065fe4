#ifndef MENTAT_QUERY_EXECUTION_PROBE_HINTS_H_
#define MENTAT_QUERY_EXECUTION_PROBE_HINTS_H_

#include <cstddef>

namespace mentat::query::execution {

// When a loop over `n` probes of a record cache (a join's sorted probes,
// an entity fetch's rows) hints its cursor (DatomCursor::Prefetch). Each
// probe waits on memory it could not know it needed: the cache's slot,
// then the record behind it. Hinting the slot of the probe kAhead on
// (step 0) and the record of the one kAhead / 2 on (step 1), once the slot
// has had time to arrive, overlaps those waits instead of adding them up.
//
// `hint(j, step)` hints probe j; it may skip a probe it cannot name.
class ProbeHints {
 public:
  static constexpr size_t kAhead = 16;

  // Before the loop: the slots of the first probes.
  template <typename Hint>
  static void Start(size_t n, Hint&& hint) {
    for (size_t j = 0; j < n && j < kAhead; ++j) hint(j, 0);
  }
  // Before probe i.
  template <typename Hint>
  static void Before(size_t i, size_t n, Hint&& hint) {
    if (i + kAhead < n) hint(i + kAhead, 0);
    if (i + kAhead / 2 < n) hint(i + kAhead / 2, 1);
  }
};

}  // namespace mentat::query::execution

#endif  // MENTAT_QUERY_EXECUTION_PROBE_HINTS_H_
