#ifndef MENTAT_STORAGE_DATOM_CURSOR_H_
#define MENTAT_STORAGE_DATOM_CURSOR_H_

#include <cstdint>
#include <string_view>

#include "absl/status/status.h"
#include "mentat/storage/datom.h"

namespace mentat::storage {

// Iterates the datoms of one index order whose keys start with a prefix
// (built with EavtKey::EncodePrefix and friends), in key order. A cursor is
// reusable: Seek again with another prefix instead of making a new one,
// which is what index nested-loop joins do.
//
// Not thread-safe; a cursor belongs to the thread that made it, and must
// not outlive the DbView it came from.
class DatomCursor {
 public:
  virtual ~DatomCursor() = default;

  // Positions at the first datom whose key starts with `prefix` (copied).
  virtual void Seek(std::string_view prefix) = 0;
  // Positions at the first datom whose key is >= `target` and still starts
  // with the prefix of the last Seek. `target` must start with that prefix.
  virtual void SeekWithin(std::string_view target) = 0;
  // SeekWithin for a caller that walks its targets in ascending order (a
  // merge join): when the cursor sits on a key below `target`, a cursor
  // may step there with Next, which costs less than a seek through every
  // level while the target is a few keys ahead. The position is the one
  // SeekWithin(target) gives.
  virtual void SeekForward(std::string_view target) { SeekWithin(target); }
  virtual bool Valid() const = 0;
  virtual void Next() = 0;
  // Steps past the datoms whose keys start with `prefix`, from the
  // current one on, but at most `limit` of them, and returns how many it
  // stepped over (a history view counts an assertion and its retraction
  // as two). `prefix` must start with the last Seek's prefix. Counting
  // callers use it: a cursor over a column counts a run of keys with one
  // search instead of a step per key. Default: Next in a loop.
  virtual uint64_t SkipPrefix(std::string_view prefix, uint64_t limit) {
    uint64_t n = 0;
    while (n < limit && Valid() && key().starts_with(prefix)) {
      Next();
      ++n;
    }
    return n;
  }
  // The current datom (e, a, v, tx, added). For history views a key can
  // come twice: its assertion and its retraction, ordered by tx.
  virtual const Datom& datom() const = 0;
  // The encoded key (in the cursor's order) of the current datom.
  virtual std::string_view key() const = 0;
  // With keys_only, moves leave datom() as it was instead of decoding
  // the key: for callers that read key() alone (counting, comparing).
  // Cursors that cannot skip the decoding ignore it. Default: off.
  virtual void SetKeysOnly(bool keys_only) { (void)keys_only; }
  // With skip_value, moves decode e, a, tx and added but leave datom().v
  // as it was: for callers that know the value from their seek prefix or
  // do not read it. Cursors that cannot skip it decode it anyway. Default:
  // off.
  virtual void SetSkipValue(bool skip_value) { (void)skip_value; }
  // With bulk, the seeks that follow read many prefixes about once each
  // (a join over thousands of rows): a cursor with a cache still answers
  // from what it holds, but reads a miss the plain way and keeps nothing,
  // so that one big query neither pays for filling the cache nor pushes
  // out what small queries read again and again. Default: off.
  virtual void SetBulk(bool bulk) { (void)bulk; }
  // A hint that Seek(prefix) comes soon, so that the memory it will read
  // can be fetched meanwhile; it changes nothing else. A loop of seeks
  // gives step 0 some 2n seeks ahead (where a lookup table's slot is) and
  // step 1 n ahead (the data the slot points at, fetched by then). Cursors
  // with nothing to fetch ignore it.
  virtual void Prefetch(std::string_view prefix, int step) {
    (void)prefix;
    (void)step;
  }
  // Non-OK if iteration stopped on an error (I/O, corruption).
  [[nodiscard]] virtual absl::Status status() const = 0;
};

}  // namespace mentat::storage

#endif  // MENTAT_STORAGE_DATOM_CURSOR_H_
