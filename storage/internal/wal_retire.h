#ifndef MENTAT_STORAGE_INTERNAL_WAL_RETIRE_H_
#define MENTAT_STORAGE_INTERNAL_WAL_RETIRE_H_

#include <cstddef>
#include <string_view>

#include "absl/status/status.h"
#include "rocksdb/db.h"

namespace mentat::storage::internal {

// Write-ahead log files a store may keep alive after an open before
// RetireIdleWals retires them: the newest one RocksDB writes to, and a few
// left empty by opens without writes.
inline constexpr size_t kMaxLiveWals = 4;

// RocksDB 7.8 (Debian 12's) makes a new write-ahead log at every open and
// retires the older ones only when a memtable switches, so a store opened
// and closed without writes keeps one more empty log at each open; an l
// store held 59 after a session of restarts, and each open read them all.
// (RocksDB 8.3 advances the log number at an open whose logs were empty.)
//
// When more than kMaxLiveWals log files are there, writes one key to the meta
// family (`meta`, its value put then deleted: nothing changes) and flushes
// it: the memtable switch moves every empty family's log number to the new
// log, and the flush's manifest edit lets RocksDB delete the older ones.
// Call it after the open, before anything else writes. As WriteFailure
// (rocks_status.h) when the write or the flush fails: the logs stay then,
// and nothing else changes.
[[nodiscard]] absl::Status RetireIdleWals(rocksdb::DB* db,
                                          rocksdb::ColumnFamilyHandle* meta,
                                          std::string_view path);

// The write-ahead log files in the store's log directory (`path` unless
// RocksDB was given another), or -1 if it cannot be listed.
int WalFileCount(rocksdb::DB* db, std::string_view path);

}  // namespace mentat::storage::internal

#endif  // MENTAT_STORAGE_INTERNAL_WAL_RETIRE_H_
