// Backup: a consistent online checkpoint of one database (see the Backup
// RPC in mentat.proto and Store::Checkpoint).
//
// The checkpoint runs on a reader thread. With the destination on the data
// directory's file system it hard-links the table files and copies the
// small rest, and takes milliseconds; to another file system it copies
// everything and holds that reader for the copy. Writes continue either way.
// The server's side file of Transact tempid maps (mentatd-requests.log) is
// copied after the checkpoint: entries past the backup's basis name
// transactions the backup does not hold, and a restored server never
// answers from them (a replay is first looked up in the database).

#include <spdlog/spdlog.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

#include "call.h"
#include "mentat/base/str_cat.h"
#include "service.h"

namespace mentat::server {
namespace {

namespace fs = std::filesystem;

// True if `path` is `dir` or lies below it (both absolute and normalized).
bool IsUnder(const fs::path& path, const fs::path& dir) {
  auto p = path.begin();
  for (auto d = dir.begin(); d != dir.end(); ++d, ++p) {
    if (d->empty()) continue;  // a trailing separator
    if (p == path.end() || *p != *d) return false;
  }
  return true;
}

// The destination, resolved (symbolic links of its existing part followed),
// or the status that refuses it.
[[nodiscard]] absl::StatusOr<fs::path> CheckDestination(
    const ServerConfig& config, const std::string& destination) {
  if (destination.empty()) {
    return absl::InvalidArgumentError("destination: a directory is required");
  }
  const fs::path requested(destination);
  if (!requested.is_absolute()) {
    return absl::InvalidArgumentError(
        StrCat("destination: \"", destination, "\" is not an absolute path"));
  }
  std::error_code ec;
  const fs::path resolved = fs::weakly_canonical(requested, ec);
  if (ec) {
    return absl::InvalidArgumentError(StrCat(
        "destination: cannot resolve \"", destination, "\": ", ec.message()));
  }
  if (!config.backup_dir.empty()) {
    const fs::path root = fs::weakly_canonical(config.backup_dir, ec);
    if (ec || !IsUnder(resolved, root) || resolved == root) {
      return absl::PermissionDeniedError(StrCat(
          "destination: \"", destination,
          "\" is outside the server's --backup-dir ", config.backup_dir));
    }
  }
  return resolved;
}

}  // namespace

void ServeBackup(const UnaryCall& call, const Buf* req) {
  ServiceContext& sc = call.sc();
  auto request = std::make_shared<v1::BackupRequest>();
  absl::Status s = call.Begin(req, request.get());
  if (!s.ok()) return call.Finish(s);
  absl::StatusOr<fs::path> destination =
      CheckDestination(sc.config, request->destination());
  if (!destination.ok()) return call.Finish(destination.status());
  auto database = sc.registry.Get(request->database());
  if (!database.ok()) return call.Finish(database.status());
  sc.readers.Post([call, request, database = *std::move(database),
                   path = destination->string()] {
    absl::Status wanted = call.StillWanted();
    if (!wanted.ok()) return call.Finish(wanted);
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<storage::CheckpointReport> report =
        database->store().Checkpoint(path);
    if (!report.ok()) return call.Finish(report.status());
    v1::BackupResponse response;
    std::error_code ec;
    const fs::path ledger = fs::path(database->path()) / "mentatd-requests.log";
    if (fs::exists(ledger, ec)) {
      const fs::path copy = fs::path(path) / ledger.filename();
      if (fs::copy_file(ledger, copy, ec)) {
        response.set_files(1);
        response.set_bytes(static_cast<int64_t>(fs::file_size(copy, ec)));
      } else if (ec == std::errc::no_space_on_device) {
        // The checkpoint fit, its ledger did not: no half backup stays.
        const std::string why = ec.message();
        fs::remove_all(path, ec);
        return call.Finish(absl::ResourceExhaustedError(
            StrCat("no space left on the disk holding ",
                   fs::path(path).parent_path().string(),
                   ": copying the request ledger into the backup failed (", why,
                   "); the backup was removed")));
      } else {
        spdlog::warn("backup of {}: could not copy {}: {}", database->name(),
                     ledger.string(), ec.message());
      }
    }
    response.set_basis_tx(report->basis_tx);
    response.set_files(response.files() + report->files);
    response.set_bytes(response.bytes() + report->bytes);
    response.set_elapsed_micros(
        std::chrono::duration_cast<std::chrono::microseconds>(
            std::chrono::steady_clock::now() - start)
            .count());
    spdlog::info("backup of {} to {}: basis tx {}, {} files, {} bytes, {} us",
                 database->name(), path, response.basis_tx(), response.files(),
                 response.bytes(), response.elapsed_micros());
    call.Finish(absl::OkStatus(), &response);
  });
}

}  // namespace mentat::server
