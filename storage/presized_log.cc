#include "internal/presized_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <utility>

#include "rocksdb/file_system.h"

namespace mentat::storage::internal {

namespace {

constexpr uint64_t kMinStep = uint64_t{64} << 10;

// A log file of RocksDB's, made `step` bytes longer whenever a write would
// pass its length, through a second descriptor of our own (RocksDB's file
// writes at its own offset, which a length change does not move; it is
// opened without O_APPEND, else its writes would land after the zeros).
class PresizedLogFile : public rocksdb::FSWritableFileOwnerWrapper {
 public:
  PresizedLogFile(std::unique_ptr<rocksdb::FSWritableFile> file, int fd,
                  uint64_t step)
      : FSWritableFileOwnerWrapper(std::move(file)), fd_(fd), step_(step) {}

  ~PresizedLogFile() override {
    // Without Close (RocksDB closes its logs; this is for errors) the zeros
    // stay: recovery skips them.
    if (fd_ >= 0) ::close(fd_);
  }

  void PrepareWrite(size_t offset, size_t len, const rocksdb::IOOptions& opts,
                    rocksdb::IODebugContext* dbg) override {
    const uint64_t end = static_cast<uint64_t>(offset) + len;
    if (end <= length_) return;
    if (fd_ >= 0) {
      const uint64_t length = (end / step_ + 1) * step_;
      if (::fallocate(fd_, 0, static_cast<off_t>(length_),
                      static_cast<off_t>(length - length_)) == 0) {
        length_ = length;
        return;
      }
      // No room, or a file system without fallocate: RocksDB's own way
      // from here on (its write reports a full disk as usual).
      ::close(fd_);
      fd_ = -1;
    }
    target()->PrepareWrite(offset, len, opts, dbg);
  }

  rocksdb::IOStatus Close(const rocksdb::IOOptions& opts,
                          rocksdb::IODebugContext* dbg) override {
    const uint64_t written = target()->GetFileSize(opts, dbg);
    rocksdb::IOStatus s = target()->Close(opts, dbg);
    if (fd_ >= 0) {
      // A closed log is read as it is (by a checkpoint's copy, a
      // replica's bootstrap): no zeros after its records.
      if (s.ok() && length_ > written &&
          ::ftruncate(fd_, static_cast<off_t>(written)) != 0) {
        s = rocksdb::IOStatus::IOError("cutting a log file to its records");
      }
      ::close(fd_);
      fd_ = -1;
    }
    return s;
  }

 private:
  int fd_;
  const uint64_t step_;
  // The file's length as made here; 0 before the first write.
  uint64_t length_ = 0;
};

class PresizedLogFileSystem : public rocksdb::FileSystemWrapper {
 public:
  PresizedLogFileSystem(std::shared_ptr<rocksdb::FileSystem> target,
                        uint64_t step)
      : FileSystemWrapper(std::move(target)), step_(step) {}

  const char* Name() const override { return "MentatPresizedLog"; }

  rocksdb::IOStatus NewWritableFile(
      const std::string& fname, const rocksdb::FileOptions& file_opts,
      std::unique_ptr<rocksdb::FSWritableFile>* result,
      rocksdb::IODebugContext* dbg) override {
    rocksdb::IOStatus s =
        target()->NewWritableFile(fname, file_opts, result, dbg);
    if (!s.ok() || !IsWriteAheadLogName(fname) || file_opts.use_direct_writes ||
        file_opts.use_mmap_writes) {
      return s;
    }
    const int fd = ::open(fname.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return s;  // RocksDB's own preallocation, as without this
    *result = std::make_unique<PresizedLogFile>(std::move(*result), fd, step_);
    return s;
  }

 private:
  const uint64_t step_;
};

}  // namespace

bool IsWriteAheadLogName(std::string_view file_name) {
  const size_t slash = file_name.rfind('/');
  if (slash != std::string_view::npos) file_name.remove_prefix(slash + 1);
  constexpr std::string_view kSuffix = ".log";
  if (file_name.size() <= kSuffix.size() ||
      file_name.substr(file_name.size() - kSuffix.size()) != kSuffix) {
    return false;
  }
  file_name.remove_suffix(kSuffix.size());
  return std::all_of(file_name.begin(), file_name.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
}

std::unique_ptr<rocksdb::Env> NewPresizedLogEnv(uint64_t step) {
  return rocksdb::NewCompositeEnv(std::make_shared<PresizedLogFileSystem>(
      rocksdb::FileSystem::Default(), std::max(step, kMinStep)));
}

}  // namespace mentat::storage::internal
