#ifndef MENTAT_STORAGE_INTERNAL_BACKGROUND_ERRORS_H_
#define MENTAT_STORAGE_INTERNAL_BACKGROUND_ERRORS_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "rocksdb/listener.h"
#include "rocksdb/status.h"

namespace mentat::storage::internal {

// What RocksDB's error handler says of one store: the background error
// that stopped its writes (or its compactions) until recovery ends, as
// RocksDB reports it to its listeners, and whether the WAL was switched
// since a WAL write last failed. RocksDB calls it on its own threads; the
// accessors may be called from any thread. Never blocks for long.
//
// Why the WAL switch matters: RocksDB 7.8 (Debian 12's) recovers from a
// failed WAL write by flushing the memtables, and switches to a new WAL
// only when one of them holds data. When none does, the WAL's writer that
// saw the error stays, and the next write to it aborts the process (its
// assertions are on) or fails for good. RocksDB 9.6 switches always.
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
  // False from a failed WAL write until RocksDB next switches memtables
  // (and with them the WAL, which the failed write left non-empty).
  bool WalSwitchedSinceFailure() const;
  // How often the memtable of the column family named at construction was
  // sealed (switched for a new one, which starts empty).
  uint64_t PinnedFamilySeals() const;

  explicit BackgroundErrors(std::string pinned_family)
      : pinned_family_(std::move(pinned_family)) {}

  const char* Name() const override { return "mentat.BackgroundErrors"; }
  void OnBackgroundError(rocksdb::BackgroundErrorReason reason,
                         rocksdb::Status* error) override;
  void OnErrorRecoveryEnd(
      const rocksdb::BackgroundErrorRecoveryInfo& info) override;
  void OnMemTableSealed(const rocksdb::MemTableInfo& info) override;

 private:
  mutable absl::Mutex mu_;
  State state_ ABSL_GUARDED_BY(mu_);
  bool wal_switched_ ABSL_GUARDED_BY(mu_) = true;
  const std::string pinned_family_;
  std::atomic<uint64_t> pinned_family_seals_{0};
};

}  // namespace mentat::storage::internal

#endif  // MENTAT_STORAGE_INTERNAL_BACKGROUND_ERRORS_H_
