#include "internal/info_log.h"

#include <pthread.h>
#include <sys/time.h>

#include <cstdio>
#include <ctime>
#include <vector>

#include "absl/synchronization/mutex.h"

namespace mentat::storage::internal {

InfoLog::InfoLog(rocksdb::Env* env, std::string path,
                 rocksdb::InfoLogLevel level)
    : rocksdb::Logger(level), env_(env), path_(std::move(path)) {}

InfoLog::~InfoLog() { CloseImpl().PermitUncheckedError(); }

rocksdb::Status InfoLog::CloseImpl() {
  absl::MutexLock lock(&mu_);
  if (file_ == nullptr) return rocksdb::Status::OK();
  rocksdb::Status s = file_->Close();
  file_.reset();
  return s;
}

void InfoLog::Logv(const char* format, va_list ap) {
  // The line as RocksDB's own logger writes it: local time to the
  // microsecond, the thread, the message.
  struct timeval now;
  gettimeofday(&now, nullptr);
  struct tm t;
  localtime_r(&now.tv_sec, &t);
  char head[64];
  const int head_len = std::snprintf(
      head, sizeof(head), "%04d/%02d/%02d-%02d:%02d:%02d.%06ld %lx ",
      t.tm_year + 1900, t.tm_mon + 1, t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec,
      static_cast<long>(now.tv_usec),
      static_cast<unsigned long>(pthread_self()));
  std::string line(head, head_len > 0 ? static_cast<size_t>(head_len) : 0);
  char body[512];
  va_list copy;
  va_copy(copy, ap);
  const int n = std::vsnprintf(body, sizeof(body), format, copy);
  va_end(copy);
  if (n < 0) return;
  if (static_cast<size_t>(n) < sizeof(body)) {
    line.append(body, static_cast<size_t>(n));
  } else {
    std::vector<char> big(static_cast<size_t>(n) + 1);
    std::vsnprintf(big.data(), big.size(), format, ap);
    line.append(big.data(), static_cast<size_t>(n));
  }
  if (line.empty() || line.back() != '\n') line.push_back('\n');

  absl::MutexLock lock(&mu_);
  if (file_ == nullptr) {
    // Appends (creating the file if needed); on failure the line is lost.
    if (!env_->ReopenWritableFile(path_, &file_, rocksdb::EnvOptions()).ok()) {
      file_.reset();
      return;
    }
  }
  // A failed (or torn) write loses this line only: the file takes the
  // next one as if nothing happened.
  file_->Append(rocksdb::Slice(line)).PermitUncheckedError();
  file_->Flush().PermitUncheckedError();
}

}  // namespace mentat::storage::internal
