// The transactor's way back after a failed write: whether RocksDB takes
// writes again (ResumeWrites), and the memtable pin that makes its
// recovery switch to a new log (PinMemtable).

#include "internal/background_errors.h"
#include "internal/meta_keys.h"
#include "internal/rocks_status.h"
#include "internal/transactor.h"
#include "mentat/base/str_cat.h"

namespace mentat::storage {

absl::Status Transactor::ResumeWrites() {
  AssertOnTransactorThread("ResumeWrites");
  if (unsynced_group_) {
    return absl::UnavailableError(
        StrCat("writes are off until the store reopens (restart mentatd): a "
               "commit's fsync failed (",
               write_error_.ToString(),
               ") after its group was written; that group was not acknowledged "
               "and reads do not show it. Reads go on and nothing committed is "
               "lost"));
  }
  // RocksDB stops writes after a failed WAL write or sync, and resumes
  // from some errors by itself (a full disk once space is back: its
  // SstFileManager polls) and not from others; then nothing commits until
  // the store reopens. Resume answers Busy while its own recovery runs.
  const rocksdb::Status resumed = core_->db->Resume();
  if (resumed.ok() && !core_->background_errors->WalSwitchedSinceFailure()) {
    // Recovery left the WAL whose write failed in place (PinMemtable's
    // key was sealed away in the same write that failed): writing to it
    // would abort the process. Only reopening the store switches it.
    return absl::UnavailableError(StrCat(
        "writes are off until the store reopens (restart mentatd): a write "
        "to the store's log failed (",
        write_error_.ok() ? std::string("outside a commit")
                          : write_error_.ToString(),
        ") and RocksDB resumed on the same log file; reads go on and nothing "
        "committed is lost"));
  }
  if (resumed.ok()) {
    write_error_ = rocksdb::Status::OK();
    return absl::OkStatus();
  }
  if (internal::IsDiskFull(write_error_) || internal::IsDiskFull(resumed)) {
    const absl::Status full = internal::WriteFailure(
        internal::IsDiskFull(resumed) ? resumed : write_error_, "a commit",
        core_->path);
    return absl::ResourceExhaustedError(
        StrCat("writes are paused: ", full.message(),
               "; nothing was written. Reads go on; writes resume by "
               "themselves once space is freed (at least ",
               internal::kMemtableBytes >> 20, " MiB free)"));
  }
  if (resumed.IsBusy()) {
    return absl::UnavailableError(StrCat(
        "writes are paused after an I/O error (", write_error_.ToString(),
        "); the store resumes them by itself once the fault clears: "
        "retry later"));
  }
  return absl::UnavailableError(StrCat(
      "the store is read-only after an I/O error (", write_error_.ToString(),
      ") and it cannot resume (", resumed.ToString(),
      "); nothing was written: reopen the store to recover"));
}

rocksdb::Status Transactor::PinMemtable() {
  const uint64_t seals = core_->background_errors->PinnedFamilySeals();
  if (seals == pinned_at_seal_) return rocksdb::Status::OK();
  rocksdb::WriteBatch pin;
  rocksdb::ColumnFamilyHandle* meta = core_->cf(internal::Cf::kMeta);
  rocksdb::Status s = pin.Put(meta, internal::kMetaWalSwitchKey, "");
  if (s.ok()) s = pin.Delete(meta, internal::kMetaWalSwitchKey);
  if (!s.ok()) return s;
  rocksdb::WriteOptions wo;
  wo.disableWAL = true;
  s = core_->db->Write(wo, &pin);
  if (s.ok()) pinned_at_seal_ = seals;
  return s;
}

}  // namespace mentat::storage
