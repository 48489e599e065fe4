#include "internal/background_errors.h"

namespace mentat::storage::internal {

BackgroundErrors::State BackgroundErrors::Current() const {
  absl::MutexLock lock(&mu_);
  return state_;
}

void BackgroundErrors::OnBackgroundError(rocksdb::BackgroundErrorReason reason,
                                         rocksdb::Status* error) {
  if (error == nullptr || error->ok()) return;
  absl::MutexLock lock(&mu_);
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
