#ifndef MENTAT_STORAGE_TESTING_FAULT_ENV_H_
#define MENTAT_STORAGE_TESTING_FAULT_ENV_H_

// For tests: a RocksDB Env that injects I/O faults into the files a store
// writes, switchable at runtime from any thread. Pass it as
// StoreOptions::env. Test-only and header-only (nothing in the storage
// library links it).

#include <rocksdb/env.h>

#include <atomic>
#include <memory>
#include <string>
#include <string_view>

#include "absl/synchronization/mutex.h"

namespace mentat::storage::testing {

// Which fault the environment injects.
enum class Fault {
  kNone,
  // Every write (Append, PositionedAppend) to a writable file fails with
  // an IOError; nothing of the data reaches the file.
  kWriteError,
  // Every fsync/fdatasync of a file or a directory fails with an IOError
  // after the data was written (as Linux reports EIO from fsync).
  kSyncError,
  // The disk is full: a write stores a prefix of its data (a torn write),
  // then fails with IOError NoSpace, as write(2) with ENOSPC does.
  kNoSpace,
};

class FaultEnv : public rocksdb::EnvWrapper {
 public:
  FaultEnv() : rocksdb::EnvWrapper(rocksdb::Env::Default()) {}

  // Switches the fault on (or off with kNone). With `only_suffix` set,
  // only files whose name ends with it are affected (".log" for the WAL,
  // ".sst" for table files); with `only_under`, only files whose path
  // starts with it (a checkpoint's destination). Directories are affected
  // whenever both filters are empty. Thread-safe.
  void Set(Fault fault, std::string_view only_suffix = "",
           std::string_view only_under = "") {
    absl::MutexLock lock(&mu_);
    suffix_ = only_suffix;
    prefix_ = only_under;
    fault_.store(fault);
  }
  Fault fault() const { return fault_.load(); }
  // How many operations failed by injection since the start.
  int injected() const { return injected_.load(); }
  // How often RocksDB asked for the free space of a full disk.
  int full_disk_polls() const { return full_disk_polls_.load(); }
  // With false, a kNoSpace fault fails writes while the free space
  // RocksDB polls looks as the real disk's: a disk that another process
  // fills and frees again between RocksDB's poll and its next write, so
  // DB::Resume succeeds and the next write fails again. Default true.
  void ReportFullDisk(bool report) { report_full_.store(report); }

  // A gate on the fsyncs of the WAL (".log" files), so that a test can act
  // while a commit's fsync is under way. Held, each fsync waits until a
  // pass lets it through (PassLogSyncs) or the gate opens
  // (ReleaseLogSyncs); a fault set meanwhile applies to it when it goes
  // on. Thread-safe.
  void HoldLogSyncs() {
    absl::MutexLock lock(&mu_);
    hold_ = true;
  }
  void PassLogSyncs(int n) {
    absl::MutexLock lock(&mu_);
    passes_ += n;
  }
  void ReleaseLogSyncs() {
    absl::MutexLock lock(&mu_);
    hold_ = false;
  }
  // WAL fsyncs that reached the gate, and WAL appends, since the start.
  int held_log_syncs() {
    absl::MutexLock lock(&mu_);
    return held_syncs_;
  }
  int log_appends() {
    absl::MutexLock lock(&mu_);
    return log_appends_;
  }
  // Waits (at most a minute, for a test that would hang otherwise) until
  // `n` WAL fsyncs reached the gate, or `n` WAL appends were made; false
  // on the deadline.
  bool AwaitHeldLogSyncs(int n) {
    return AwaitCount(&FaultEnv::held_syncs_, n);
  }
  bool AwaitLogAppends(int n) { return AwaitCount(&FaultEnv::log_appends_, n); }

  const char* Name() const override { return "MentatFaultEnv"; }

  rocksdb::Status NewWritableFile(const std::string& f,
                                  std::unique_ptr<rocksdb::WritableFile>* r,
                                  const rocksdb::EnvOptions& options) override {
    return Wrap(f, target()->NewWritableFile(f, r, options), r);
  }
  rocksdb::Status ReopenWritableFile(
      const std::string& f, std::unique_ptr<rocksdb::WritableFile>* r,
      const rocksdb::EnvOptions& options) override {
    return Wrap(f, target()->ReopenWritableFile(f, r, options), r);
  }
  rocksdb::Status ReuseWritableFile(
      const std::string& f, const std::string& old,
      std::unique_ptr<rocksdb::WritableFile>* r,
      const rocksdb::EnvOptions& options) override {
    return Wrap(f, target()->ReuseWritableFile(f, old, r, options), r);
  }
  // RocksDB's own file logger, over this Env's files (EnvWrapper would
  // hand the LOG to the default Env): the faults reach RocksDB's info log
  // too, unless the store brings its own logger.
  rocksdb::Status NewLogger(const std::string& fname,
                            std::shared_ptr<rocksdb::Logger>* result) override {
    return rocksdb::NewEnvLogger(fname, this, result);
  }
  // A full disk has no free space: RocksDB's SstFileManager then waits (and
  // logs an error every few seconds) instead of recovering at once. The
  // disk is full for every file on it, whatever suffix narrows the writes
  // that fail: else DB::Resume saw the real disk's space and resumed while
  // the fault was on, at whatever moment a busy machine made it.
  rocksdb::Status GetFreeSpace(const std::string& path,
                               uint64_t* free) override {
    if (fault_.load() == Fault::kNoSpace && report_full_.load() &&
        UnderPrefix(path + "/")) {
      full_disk_polls_.fetch_add(1);
      *free = 0;
      return rocksdb::Status::OK();
    }
    return target()->GetFreeSpace(path, free);
  }
  rocksdb::Status NewDirectory(
      const std::string& name,
      std::unique_ptr<rocksdb::Directory>* result) override {
    rocksdb::Status s = target()->NewDirectory(name, result);
    if (s.ok()) *result = std::make_unique<Dir>(this, std::move(*result));
    return s;
  }

 private:
  struct CountWait {
    FaultEnv* env;
    int FaultEnv::*count;
    int n;
  };
  static bool Reached(CountWait* w) ABSL_NO_THREAD_SAFETY_ANALYSIS {
    return w->env->*w->count >= w->n;  // under mu_ (Await's condition)
  }
  bool AwaitCount(int FaultEnv::*count, int n) {
    CountWait w{this, count, n};
    absl::MutexLock lock(&mu_);
    return mu_.AwaitWithTimeout(absl::Condition(&Reached, &w),
                                absl::Minutes(1));
  }
  // A WAL file's name.
  static bool IsLog(const std::string& file) {
    return file.size() >= 4 && file.compare(file.size() - 4, 4, ".log") == 0;
  }
  // Before a WAL fsync: waits at the gate while it is held.
  void AtLogSync() {
    absl::MutexLock lock(&mu_);
    held_syncs_++;
    mu_.Await(absl::Condition(
        +[](FaultEnv* e) ABSL_NO_THREAD_SAFETY_ANALYSIS {
          return !e->hold_ || e->passes_ > 0;
        },
        this));
    if (hold_) passes_--;
  }
  void CountLogAppend() {
    absl::MutexLock lock(&mu_);
    log_appends_++;
  }

  // Whether `path` is under the only_under filter (or there is none).
  bool UnderPrefix(const std::string& path) {
    absl::MutexLock lock(&mu_);
    return UnderPrefixLocked(path);
  }
  bool UnderPrefixLocked(const std::string& path) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return prefix_.empty() || path.compare(0, prefix_.size(), prefix_) == 0;
  }
  // The fault that applies to `file` now, kNone if none does.
  Fault FaultFor(const std::string& file) {
    const Fault f = fault_.load();
    if (f == Fault::kNone) return f;
    absl::MutexLock lock(&mu_);
    if (!UnderPrefixLocked(file)) return Fault::kNone;
    if (suffix_.empty()) return f;
    if (file.size() >= suffix_.size() &&
        file.compare(file.size() - suffix_.size(), suffix_.size(), suffix_) ==
            0) {
      return f;
    }
    return Fault::kNone;
  }
  rocksdb::Status Injected(Fault f, const std::string& file) {
    injected_.fetch_add(1);
    switch (f) {
      case Fault::kWriteError:
        return rocksdb::Status::IOError("injected write error", file);
      case Fault::kSyncError:
        return rocksdb::Status::IOError("injected fsync error", file);
      case Fault::kNoSpace:
        return rocksdb::Status::NoSpace("injected full disk", file);
      case Fault::kNone:
        break;
    }
    return rocksdb::Status::OK();
  }

  class File : public rocksdb::WritableFileWrapper {
   public:
    File(FaultEnv* env, std::string name,
         std::unique_ptr<rocksdb::WritableFile> target)
        : rocksdb::WritableFileWrapper(target.get()),
          env_(env),
          name_(std::move(name)),
          is_log_(IsLog(name_)),
          owned_(std::move(target)) {}

    rocksdb::Status Append(const rocksdb::Slice& data) override {
      rocksdb::Status s = BeforeWrite(data);
      if (s.ok()) s = rocksdb::WritableFileWrapper::Append(data);
      if (is_log_) env_->CountLogAppend();
      return s;
    }
    rocksdb::Status Append(const rocksdb::Slice& data,
                           const rocksdb::DataVerificationInfo& info) override {
      rocksdb::Status s = BeforeWrite(data);
      if (s.ok()) s = rocksdb::WritableFileWrapper::Append(data, info);
      if (is_log_) env_->CountLogAppend();
      return s;
    }
    rocksdb::Status PositionedAppend(const rocksdb::Slice& data,
                                     uint64_t offset) override {
      const Fault f = env_->FaultFor(name_);
      if (f == Fault::kWriteError || f == Fault::kNoSpace) {
        return env_->Injected(f, name_);
      }
      return rocksdb::WritableFileWrapper::PositionedAppend(data, offset);
    }
    rocksdb::Status PositionedAppend(
        const rocksdb::Slice& data, uint64_t offset,
        const rocksdb::DataVerificationInfo& info) override {
      const Fault f = env_->FaultFor(name_);
      if (f == Fault::kWriteError || f == Fault::kNoSpace) {
        return env_->Injected(f, name_);
      }
      return rocksdb::WritableFileWrapper::PositionedAppend(data, offset, info);
    }
    rocksdb::Status Sync() override {
      return Synced([&] { return rocksdb::WritableFileWrapper::Sync(); });
    }
    rocksdb::Status Fsync() override {
      return Synced([&] { return rocksdb::WritableFileWrapper::Fsync(); });
    }
    rocksdb::Status RangeSync(uint64_t offset, uint64_t nbytes) override {
      return Synced([&] {
        return rocksdb::WritableFileWrapper::RangeSync(offset, nbytes);
      });
    }

   private:
    // The fault a write meets: none, a failure with nothing written, or a
    // torn write (half the data, then NoSpace).
    rocksdb::Status BeforeWrite(const rocksdb::Slice& data) {
      const Fault f = env_->FaultFor(name_);
      if (f == Fault::kWriteError) return env_->Injected(f, name_);
      if (f == Fault::kNoSpace) {
        rocksdb::WritableFileWrapper::Append(
            rocksdb::Slice(data.data(), data.size() / 2))
            .PermitUncheckedError();
        return env_->Injected(f, name_);
      }
      return rocksdb::Status::OK();
    }
    template <typename F>
    rocksdb::Status Synced(F sync) {
      if (is_log_) env_->AtLogSync();
      const Fault f = env_->FaultFor(name_);
      if (f == Fault::kSyncError) return env_->Injected(f, name_);
      return sync();
    }

    FaultEnv* env_;
    std::string name_;
    const bool is_log_;
    std::unique_ptr<rocksdb::WritableFile> owned_;
  };

  class Dir : public rocksdb::DirectoryWrapper {
   public:
    Dir(FaultEnv* env, std::unique_ptr<rocksdb::Directory> target)
        : rocksdb::DirectoryWrapper(target.get()),
          env_(env),
          owned_(std::move(target)) {}
    rocksdb::Status Fsync() override {
      if (env_->fault_.load() == Fault::kSyncError && env_->NoFilter()) {
        return env_->Injected(Fault::kSyncError, "directory");
      }
      return rocksdb::DirectoryWrapper::Fsync();
    }

   private:
    FaultEnv* env_;
    std::unique_ptr<rocksdb::Directory> owned_;
  };

  bool NoFilter() {
    absl::MutexLock lock(&mu_);
    return suffix_.empty() && prefix_.empty();
  }
  rocksdb::Status Wrap(const std::string& file, rocksdb::Status s,
                       std::unique_ptr<rocksdb::WritableFile>* r) {
    if (s.ok()) *r = std::make_unique<File>(this, file, std::move(*r));
    return s;
  }

  std::atomic<Fault> fault_{Fault::kNone};
  std::atomic<int> injected_{0};
  std::atomic<int> full_disk_polls_{0};
  std::atomic<bool> report_full_{true};
  absl::Mutex mu_;
  std::string suffix_ ABSL_GUARDED_BY(mu_);
  std::string prefix_ ABSL_GUARDED_BY(mu_);
  bool hold_ ABSL_GUARDED_BY(mu_) = false;
  int passes_ ABSL_GUARDED_BY(mu_) = 0;
  int held_syncs_ ABSL_GUARDED_BY(mu_) = 0;
  int log_appends_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace mentat::storage::testing

#endif  // MENTAT_STORAGE_TESTING_FAULT_ENV_H_
