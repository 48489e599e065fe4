// Store::Checkpoint: a consistent online copy of a store (RocksDB
// checkpoint), and the basis it holds, read back from the copy.

#include <rocksdb/utilities/checkpoint.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "internal/coding.h"
#include "internal/excision_purge.h"
#include "internal/meta_keys.h"
#include "internal/rocks_status.h"
#include "internal/store_core.h"
#include "mentat/base/str_cat.h"
#include "mentat/storage/store.h"

namespace mentat::storage {
namespace {

namespace fs = std::filesystem;

// The write-ahead log is copied into the checkpoint below this size; above
// it the memtables are flushed first, so a restore does not replay a large
// log. (A flush is per column family and cheap when they are small.)
constexpr uint64_t kFlushAboveLogBytes = uint64_t{64} << 20;

[[nodiscard]] absl::Status FromRocks(const rocksdb::Status& s,
                                     std::string_view what,
                                     std::string_view dir = "") {
  if (s.ok()) return absl::OkStatus();
  // A full disk where the copy goes: ResourceExhausted, naming it.
  if (!dir.empty() && internal::IsDiskFull(s)) {
    return internal::WriteFailure(s, what, dir);
  }
  if (s.IsInvalidArgument() || s.IsNotSupported()) {
    return absl::FailedPreconditionError(StrCat(what, ": ", s.ToString()));
  }
  return absl::UnavailableError(StrCat(what, ": ", s.ToString()));
}

// The column families of the store copied to `dir`.
[[nodiscard]] absl::StatusOr<std::vector<std::string>> ListFamilies(
    const rocksdb::DBOptions& db_options, const std::string& dir) {
  std::vector<std::string> names;
  rocksdb::Status s = rocksdb::DB::ListColumnFamilies(db_options, dir, &names);
  if (!s.ok()) return FromRocks(s, StrCat("reading the checkpoint in ", dir));
  return names;
}

// The basis a store in `dir` opens at: the basis recorded in `meta`, or the
// last transaction of the log if that is later (a checkpoint taken while a
// bulk import had ingested a chunk but not yet recorded its basis; Open
// repairs the counters the same way). Opens `dir` read-only: the WAL is
// replayed in memory and nothing in `dir` changes.
[[nodiscard]] absl::StatusOr<EntityId> ReadBasis(const std::string& dir) {
  rocksdb::DBOptions db_options;
  db_options.info_log_level = rocksdb::InfoLogLevel::WARN_LEVEL;
  auto names = ListFamilies(db_options, dir);
  if (!names.ok()) return names.status();
  std::vector<rocksdb::ColumnFamilyDescriptor> families;
  int meta = -1;
  int log = -1;
  for (const std::string& name : *names) {
    if (name == internal::CfName(internal::Cf::kMeta)) meta = families.size();
    if (name == internal::CfName(internal::Cf::kLog)) log = families.size();
    families.emplace_back(name, rocksdb::ColumnFamilyOptions());
  }
  if (meta < 0 || log < 0) {
    return absl::DataLossError(
        StrCat("the checkpoint in ", dir, " has no meta or log family"));
  }
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s =
      rocksdb::DB::OpenForReadOnly(db_options, dir, families, &handles, &raw);
  if (!s.ok()) return FromRocks(s, StrCat("opening the checkpoint in ", dir));
  std::unique_ptr<rocksdb::DB> db(raw);
  auto close = [&] {
    for (auto* h : handles)
      db->DestroyColumnFamilyHandle(h).PermitUncheckedError();
    db->Close().PermitUncheckedError();
  };

  std::string value;
  s = db->Get(rocksdb::ReadOptions(), handles[meta], internal::kMetaBasisKey,
              &value);
  if (!s.ok() || value.size() != 8) {
    close();
    return absl::DataLossError(
        StrCat("the checkpoint in ", dir, " has no basis: ", s.ToString()));
  }
  EntityId basis = static_cast<EntityId>(internal::DecodeFixed64BE(value));
  std::unique_ptr<rocksdb::Iterator> it(
      db->NewIterator(rocksdb::ReadOptions(), handles[log]));
  it->SeekToLast();
  if (it->Valid() && it->key().size() == 8) {
    const EntityId last = static_cast<EntityId>(internal::DecodeFixed64BE(
        std::string_view(it->key().data(), it->key().size())));
    if (last > basis) basis = last;
  }
  s = it->status();
  it.reset();
  close();
  if (!s.ok()) return FromRocks(s, StrCat("reading the checkpoint's log"));
  return basis;
}

// Opens the store copied to `dir` for writing and closes it, which
// writes it a new MANIFEST holding only the files it has. A copied
// MANIFEST is RocksDB's log of file changes, which names each file
// deleted since it began by its first and last keys: after an excision,
// a deleted file's keys may be excised datoms (docs/query.md,
// "Excision").
[[nodiscard]] absl::Status RewriteManifest(const std::string& dir) {
  rocksdb::DBOptions db_options;
  db_options.info_log_level = rocksdb::InfoLogLevel::WARN_LEVEL;
  auto names = ListFamilies(db_options, dir);
  if (!names.ok()) return names.status();
  std::vector<rocksdb::ColumnFamilyDescriptor> families;
  rocksdb::ColumnFamilyOptions cf_options;
  cf_options.disable_auto_compactions = true;
  for (const std::string& name : *names)
    families.emplace_back(name, cf_options);
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s =
      rocksdb::DB::Open(db_options, dir, families, &handles, &raw);
  if (!s.ok()) return FromRocks(s, StrCat("opening the checkpoint in ", dir));
  std::unique_ptr<rocksdb::DB> db(raw);
  for (auto* h : handles)
    db->DestroyColumnFamilyHandle(h).PermitUncheckedError();
  return FromRocks(db->Close(), StrCat("closing the checkpoint in ", dir));
}

}  // namespace

absl::StatusOr<CheckpointReport> Store::Checkpoint(
    const std::string& dir) const {
  std::error_code ec;
  const fs::path target(dir);
  if (fs::exists(target, ec)) {
    return absl::AlreadyExistsError(
        StrCat("backup destination ", dir, " already exists"));
  }
  const fs::path parent = target.parent_path();
  if (!parent.empty() && !fs::is_directory(parent, ec)) {
    return absl::FailedPreconditionError(
        StrCat("backup destination ", dir, ": its parent directory ",
               parent.string(), " does not exist"));
  }

  // An excision whose bytes are still in files the checkpoint would link
  // (docs/deploy.md, "Excision"): rewrite them first.
  if (core_->unpurged_excisions.load() != 0) {
    absl::Status purged = internal::PurgeDeletedBytes(core_.get());
    if (!purged.ok()) return purged;
  }
  rocksdb::Checkpoint* raw = nullptr;
  absl::Status st = FromRocks(rocksdb::Checkpoint::Create(core_->db, &raw),
                              "starting a checkpoint");
  if (!st.ok()) return st;
  std::unique_ptr<rocksdb::Checkpoint> checkpoint(raw);
  const rocksdb::Status created =
      checkpoint->CreateCheckpoint(dir, kFlushAboveLogBytes);
  if (!created.ok()) {
    // RocksDB removes its own partial copy (dir + ".tmp").
    if (fs::exists(target, ec)) {
      return absl::AlreadyExistsError(
          StrCat("backup destination ", dir, " already exists"));
    }
    return FromRocks(created, StrCat("writing the checkpoint to ", dir),
                     parent.empty() ? dir : parent.string());
  }
  std::string excised;
  if (core_->db
          ->Get(rocksdb::ReadOptions(), core_->cf(internal::Cf::kMeta),
                internal::kMetaExcisedKey, &excised)
          .ok()) {
    st = RewriteManifest(dir);
    if (!st.ok()) {
      fs::remove_all(target, ec);
      return st;
    }
  }
  auto basis = ReadBasis(dir);
  if (!basis.ok()) {
    // Never leave a directory that looks like a backup but is not one.
    fs::remove_all(target, ec);
    return basis.status();
  }
  CheckpointReport report;
  report.basis_tx = *basis;
  for (const auto& entry : fs::recursive_directory_iterator(dir, ec)) {
    if (!entry.is_regular_file(ec)) continue;
    ++report.files;
    report.bytes += static_cast<int64_t>(entry.file_size(ec));
  }
  return report;
}

}  // namespace mentat::storage
