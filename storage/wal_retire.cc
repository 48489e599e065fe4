#include "internal/wal_retire.h"

#include <string>
#include <vector>

#include "internal/meta_keys.h"
#include "internal/presized_log.h"
#include "internal/rocks_status.h"
#include "mentat/base/str_cat.h"

namespace mentat::storage::internal {

int WalFileCount(rocksdb::DB* db, std::string_view path) {
  // By name in the directory: RocksDB's own listing (GetSortedWalFiles)
  // leaves out the empty logs, the very ones counted here.
  const std::string dir = db->GetDBOptions().wal_dir.empty()
                              ? std::string(path)
                              : db->GetDBOptions().wal_dir;
  std::vector<std::string> children;
  if (!db->GetEnv()->GetChildren(dir, &children).ok()) return -1;
  int logs = 0;
  for (const std::string& name : children) {
    if (IsWriteAheadLogName(name)) ++logs;
  }
  return logs;
}

absl::Status RetireIdleWals(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* meta,
                            std::string_view path) {
  const int alive = WalFileCount(db, path);
  // Not listed: nothing to decide on; the open goes on as it did before.
  if (alive < 0 || static_cast<size_t>(alive) <= kMaxLiveWals) {
    return absl::OkStatus();
  }
  // Through the log, so that the memtable it lands in is flushed like any
  // other (a write without the log would be kept for the close instead).
  rocksdb::WriteBatch batch;
  rocksdb::Status s = batch.Put(meta, kMetaWalSwitchKey, "");
  if (s.ok()) s = batch.Delete(meta, kMetaWalSwitchKey);
  if (s.ok()) s = db->Write(rocksdb::WriteOptions(), &batch);
  if (s.ok()) {
    rocksdb::FlushOptions fo;
    fo.wait = true;
    s = db->Flush(fo, meta);
  }
  // The flush returns once its result is installed; RocksDB deletes the
  // files it made obsolete afterwards, on its own thread. Deletions
  // enabled again scan for obsolete files and delete them here, so that
  // the open returns with the logs gone.
  if (s.ok() && db->DisableFileDeletions().ok()) {
    s = db->EnableFileDeletions(/*force=*/true);
  }
  if (!s.ok()) {
    return WriteFailure(
        s, StrCat("retiring ", alive, " idle write-ahead logs at the open"),
        path);
  }
  return absl::OkStatus();
}

}  // namespace mentat::storage::internal
