#ifndef MENTAT_STORAGE_INTERNAL_LOG_CODEC_H_
#define MENTAT_STORAGE_INTERNAL_LOG_CODEC_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "mentat/storage/datom.h"

namespace mentat::storage::internal {

// The value of a `log` entry (key: the tx, 8 bytes BE). Two formats:
//
//  v1 (meta/format "1"): the datoms of the transaction in order, as varint
//     count, then per datom e(8 BE) a(8 BE) added(1) and the encoded value.
//  v2 (meta/format "2", written since): 0x00, 0x02, then varints: the term
//     that wrote the entry and the next counter of partitions db, tx and
//     user after the transaction; then the v1 body. A v1 entry never
//     starts with 0x00: its first byte is its datom count, and every
//     transaction holds at least its :db/txInstant.
//
// The header lets a replica carry its primary's counters exactly (ids a
// primary handed out in a group whose fsync failed are named by no datom)
// and lets a restarted node know which term wrote its tail
// (docs/replication.md, phase 2).
struct LogEntryHeader {
  // The term of the primary that wrote the entry; 0 before phase 2's
  // elections.
  int64_t term = 0;
  // False for a v1 entry, which does not record the counters.
  bool has_counters = false;
  // The next counter of partitions db (0), tx (3) and user (4), in that
  // order, once the transaction committed.
  std::array<int64_t, 3> next_counter{};
};

// The partitions whose counters a v2 header holds, in its order.
inline constexpr std::array<int, 3> kLogHeaderPartitions = {0, 3, 4};

// Encodes a v2 entry. `header.has_counters` is ignored (v2 always has
// them).
void EncodeLogEntry(const LogEntryHeader& header,
                    const std::vector<Datom>& datoms, std::string* out);
// Encodes a v1 entry (tests of reading old stores).
void EncodeLogEntryV1(const std::vector<Datom>& datoms, std::string* out);

// Decodes an entry of transaction `tx` in either format; DataLoss on
// malformed bytes or an unknown format. `header` may be null; a v1 entry
// gives term 0 and has_counters false.
[[nodiscard]] absl::Status DecodeLogEntry(EntityId tx, std::string_view in,
                                          LogEntryHeader* header,
                                          std::vector<Datom>* out);
[[nodiscard]] inline absl::Status DecodeLogEntry(EntityId tx,
                                                 std::string_view in,
                                                 std::vector<Datom>* out) {
  return DecodeLogEntry(tx, in, nullptr, out);
}
// Only the header (cheap: stops before the datoms).
[[nodiscard]] absl::Status DecodeLogEntryHeader(EntityId tx,
                                                std::string_view in,
                                                LogEntryHeader* header);

}  // namespace mentat::storage::internal

#endif  // MENTAT_STORAGE_INTERNAL_LOG_CODEC_H_
