#ifndef MENTAT_STORAGE_INTERNAL_PRESIZED_LOG_H_
#define MENTAT_STORAGE_INTERNAL_PRESIZED_LOG_H_

#include <cstdint>
#include <memory>
#include <string_view>

#include "rocksdb/env.h"

namespace mentat::storage::internal {

// An Env whose files are RocksDB's default ones, except that each
// write-ahead log file (<number>.log) is made longer than what was written
// to it, `step` bytes at a time (fallocate, read back as zeros), and cut
// back to what was written when RocksDB closes it.
//
// Why: RocksDB appends its log past the file's end, so every commit's
// fdatasync also has to make the file's new size durable (an ext4 journal
// commit on top of the data write). Into a file already that long, the
// fdatasync writes the data alone: on this project's VMs a 150-byte
// commit's p50 fell from 0.25-0.5 ms to 0.18-0.2 ms, and its tail more.
//
// Why it is safe: a crash leaves zeros after the last record, which
// RocksDB's log reader skips as it does for its own preallocation (no
// record is lost and no corruption reported). A hole of zeros *before* a
// record that did reach the disk could be skipped over too, which is
// possible only when several records await one fsync; the store writes
// every log record with sync (StoreOptions::sync_commits), so at most the
// last record is ever unsynced, and it is the torn tail that recovery
// drops anyway. Store::Open therefore uses this Env only with
// sync_commits and RocksDB's default Env (a test's fault-injecting Env is
// left as it is).
//
// `step` is at least 64 KiB (smaller is raised to it). Thread-safe as
// RocksDB's file systems are; a file is written by one thread at a time.
std::unique_ptr<rocksdb::Env> NewPresizedLogEnv(uint64_t step);

// Whether `file_name` (a path or a name) is a RocksDB write-ahead log:
// digits then ".log".
bool IsWriteAheadLogName(std::string_view file_name);

}  // namespace mentat::storage::internal

#endif  // MENTAT_STORAGE_INTERNAL_PRESIZED_LOG_H_
