#include "internal/background_errors.h"

namespace mentat::storage::internal {

BackgroundErrors::State BackgroundErrors::Current() const {
  absl::MutexLock lock(&mu_);
  return state_;
}

bool BackgroundErrors::WalSwitchedSinceFailure() const {
  absl::MutexLock lock(&mu_);
  return wal_switched_;
}

uint64_t BackgroundErrors::PinnedFamilySeals() const {
  return pinned_family_seals_.load(std::memory_order_acquire);
}

void BackgroundErrors::OnMemTableSealed(const rocksdb::MemTableInfo& info) {
  if (info.cf_name == pinned_family_) {
    pinned_family_seals_.fetch_add(1, std::memory_order_acq_rel);
  }
  // RocksDB switches memtables one writer at a time, after a failed write
  // returned (the failure is reported before it returns): a seal now is a
  // switch after the failure, to a new WAL.
  absl::MutexLock lock(&mu_);
  wal_switched_ = true;
}

void BackgroundErrors::OnBackgroundError(rocksdb::BackgroundErrorReason reason,
                                         rocksdb::Status* error) {
  if (error == nullptr || error->ok()) return;
  absl::MutexLock lock(&mu_);
  if (reason == rocksdb::BackgroundErrorReason::kWriteCallback) {
    wal_switched_ = false;
  }
  // A compaction's error does not stop writes: it does not replace one
  // that does.
  if (!state_.error.ok() &&
      reason == rocksdb::BackgroundErrorReason::kCompaction &&
      state_.reason != rocksdb::BackgroundErrorReason::kCompaction) {
    return;
  }
  state_.error = *error;
  state_.reason = reason;
}

void BackgroundErrors::OnErrorRecoveryEnd(
    const rocksdb::BackgroundErrorRecoveryInfo& info) {
  absl::MutexLock lock(&mu_);
  // Recovery ends with the error it could not clear, or OK.
  state_.error = info.new_bg_error;
  if (info.new_bg_error.ok()) {
    state_.reason = rocksdb::BackgroundErrorReason::kWriteCallback;
  }
}

}  // namespace mentat::storage::internal
