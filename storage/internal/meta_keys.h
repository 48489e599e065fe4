#ifndef MENTAT_STORAGE_INTERNAL_META_KEYS_H_
#define MENTAT_STORAGE_INTERNAL_META_KEYS_H_

#include <string>

#include "internal/coding.h"
#include "mentat/storage/keys.h"
#include "mentat/storage/value_codec.h"

namespace mentat::storage::internal {

// Keys of the `meta` column family. Every commit's batch rewrites the ones
// it changed, so opening a store reads these few keys and never a scan of
// history.
inline constexpr char kMetaFormatKey[] = "format";
inline constexpr char kMetaBasisKey[] = "basis";          // tx, 8 bytes BE
inline constexpr char kMetaTxInstantKey[] = "txinstant";  // micros, 8 BE
// "2": log entries carry a header (term, partition counters; see
// log_codec.h). A store of format "1" is upgraded when it opens: its
// entries stay v1 and read as before, new ones are v2; a build that reads
// only "1" then refuses it rather than misread a v2 entry.
inline constexpr char kMetaFormatVersion[] = "2";
inline constexpr char kMetaFormatVersionV1[] = "1";
// The history retention horizon (tx, 8 BE): as_of before it is refused.
inline constexpr char kMetaRetentionKey[] = "retention";
// Written and deleted at once, in a memtable only, to make RocksDB switch
// its WAL after a failed WAL write (Transactor::SwitchWal). Never read.
inline constexpr char kMetaWalSwitchKey[] = "walswitch";
// The last excision's tx (8 BE): a column image made before it may hold
// datoms it removed, and is not used (ColumnWorker::LoadImages).
inline constexpr char kMetaExcisedKey[] = "excised";

// "part" + partition index (1 byte): the next counter, 8 bytes BE.
inline std::string MetaPartitionKey(int partition) {
  std::string k = "part";
  k.push_back(static_cast<char>(partition));
  return k;
}

// "s" + attribute: datoms(8) distinct(8) tracked(1).
inline constexpr char kMetaStatsPrefix[] = "s";
inline std::string MetaStatsKey(EntityId a) {
  std::string k = kMetaStatsPrefix;
  PutFixed64BE(static_cast<uint64_t>(a), &k);
  return k;
}

// "v" + attribute + encoded value: count, 8 bytes BE.
inline constexpr char kMetaValueCountPrefix[] = "v";
inline std::string MetaValueCountKey(EntityId a, const Value& v) {
  std::string k = kMetaValueCountPrefix;
  PutFixed64BE(static_cast<uint64_t>(a), &k);
  EncodeValue(v, &k);
  return k;
}

}  // namespace mentat::storage::internal

#endif  // MENTAT_STORAGE_INTERNAL_META_KEYS_H_
