#ifndef MENTAT_STORAGE_INTERNAL_BACKGROUND_ERRORS_H_
#define MENTAT_STORAGE_INTERNAL_BACKGROUND_ERRORS_H_

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "rocksdb/listener.h"
#include "rocksdb/status.h"

namespace mentat::storage::internal {

// What RocksDB's error handler says of one store: the background error
// that stopped its writes (or its compactions) until recovery ends, as
// RocksDB reports it to its listeners. RocksDB calls it on its own threads;
// Current() may be called from any thread. Never blocks for long.
class BackgroundErrors : public rocksdb::EventListener {
 public:
  // The error RocksDB holds now (OK when it takes writes and compacts), and
  // what hit it.
  struct State {
    rocksdb::Status error;
    rocksdb::BackgroundErrorReason reason =
        rocksdb::BackgroundErrorReason::kWriteCallback;
  };
  State Current() const;

  const char* Name() const override { return "mentat.BackgroundErrors"; }
  void OnBackgroundError(rocksdb::BackgroundErrorReason reason,
                         rocksdb::Status* error) override;
  void OnErrorRecoveryEnd(
      const rocksdb::BackgroundErrorRecoveryInfo& info) override;

 private:
  mutable absl::Mutex mu_;
  State state_ ABSL_GUARDED_BY(mu_);
};

}  // namespace mentat::storage::internal

#endif  // MENTAT_STORAGE_INTERNAL_BACKGROUND_ERRORS_H_
