#ifndef MENTAT_STORAGE_INTERNAL_INFO_LOG_H_
#define MENTAT_STORAGE_INTERNAL_INFO_LOG_H_

#include <cstdarg>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "rocksdb/env.h"

namespace mentat::storage::internal {

// RocksDB's info log of a store (<dir>/LOG, appended to), written through
// the store's Env with every write error ignored: a line that cannot be
// written is lost, and the next one is tried afresh. RocksDB's own logger
// keeps a failed write's error in its file writer and asserts on the next
// line (Debian builds RocksDB with assertions): on a full disk its
// SstFileManager logs an error every 5 s while it waits for space, and
// DB::Open logs one when it fails, so mentatd aborted.
//
// Thread-safe (RocksDB logs from any thread); never blocks beyond one
// write.
class InfoLog : public rocksdb::Logger {
 public:
  // A log appending to `path` through `env` (not owned; outlives the log).
  // Never fails: a file that cannot be opened now is tried again at the
  // next line.
  InfoLog(rocksdb::Env* env, std::string path, rocksdb::InfoLogLevel level);
  ~InfoLog() override;

  using rocksdb::Logger::Logv;
  void Logv(const char* format, va_list ap) override;

 private:
  rocksdb::Status CloseImpl() override;

  rocksdb::Env* const env_;
  const std::string path_;
  absl::Mutex mu_;
  std::unique_ptr<rocksdb::WritableFile> file_ ABSL_GUARDED_BY(mu_);
};

}  // namespace mentat::storage::internal

#endif  // MENTAT_STORAGE_INTERNAL_INFO_LOG_H_
