// Replication.Snapshot: a checkpoint of a database (Store::Checkpoint),
// streamed file by file to a replica that bootstraps from it
// (docs/replication.md). The checkpoint lives in a directory of its own
// under <data-dir>/.replication-snapshots while the stream runs.

#include <openssl/evp.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "batch_stream.h"
#include "call.h"
#include "mentat/base/str_cat.h"
#include "message_size.h"
#include "replication_service.h"

namespace mentat::server {

namespace {

namespace fs = std::filesystem;

// Where checkpoints for streaming go. Not a database name (it starts with
// '.'), so the registry never opens it.
constexpr char kSnapshotDir[] = ".replication-snapshots";

[[nodiscard]] absl::StatusOr<std::string> Sha256Of(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::UnavailableError(StrCat("cannot read ", path.string()));
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> md(EVP_MD_CTX_new(),
                                                        EVP_MD_CTX_free);
  if (!md || EVP_DigestInit_ex(md.get(), EVP_sha256(), nullptr) != 1) {
    return absl::InternalError("SHA-256 is not available");
  }
  std::vector<char> buf(1 << 16);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const std::streamsize n = in.gcount();
    if (n > 0) EVP_DigestUpdate(md.get(), buf.data(), static_cast<size_t>(n));
  }
  if (in.bad()) {
    return absl::UnavailableError(StrCat("reading ", path.string()));
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(md.get(), digest, &len);
  return std::string(reinterpret_cast<const char*>(digest), len);
}

// Removes the checkpoints of earlier mentatd processes (named
// <database>-<pid>-<n>, their pid not ours): one that crashed mid-stream
// left its checkpoint behind, and its hard links would hold the SST files
// RocksDB has since compacted away, for good.
void RemoveStaleCheckpoints(const fs::path& parent) {
  const std::string ours = StrCat("-", ::getpid(), "-");
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(parent, ec)) {
    const std::string name = entry.path().filename().string();
    const size_t last = name.rfind('-');
    const size_t pid_at = last == std::string::npos || last == 0
                              ? std::string::npos
                              : name.rfind('-', last - 1);
    if (pid_at != std::string::npos &&
        name.compare(pid_at, last + 1 - pid_at, ours) == 0) {
      continue;  // this process's: a stream in progress
    }
    std::error_code rm;
    fs::remove_all(entry.path(), rm);
  }
}

class SnapshotStream : public BatchStream {
 public:
  SnapshotStream(ServiceContext& sc, grpc::CallbackServerContext* ctx)
      : BatchStream(sc, Method::kSnapshot, ctx) {}

  void Start(std::shared_ptr<Database> database) {
    database_ = std::move(database);
    Begin();
  }

 protected:
  ~SnapshotStream() override {
    if (!dir_.empty()) {
      std::error_code ec;
      fs::remove_all(dir_, ec);
    }
  }

  [[nodiscard]] absl::StatusOr<bool> Produce(grpc::ByteBuffer* out,
                                             bool* has_message) override {
    absl::Status live = database_->CheckLive();
    if (!live.ok()) return live;
    v1::SnapshotChunk message;
    bool more = true;
    if (dir_.empty()) {
      absl::Status s = TakeCheckpoint(&message);
      if (!s.ok()) return s;
    } else if (file_ < files_.size()) {
      absl::Status s = ReadChunk(&message);
      if (!s.ok()) return s;
    } else {
      message.set_last(true);
      more = false;
    }
    sc().metrics.replication_bytes_sent.fetch_add(message.ByteSizeLong(),
                                                  std::memory_order_relaxed);
    absl::Status s = SerializeResponse(message, out);
    if (!s.ok()) return s;
    *has_message = true;
    return more;
  }

 private:
  [[nodiscard]] absl::Status TakeCheckpoint(v1::SnapshotChunk* header) {
    static std::atomic<int> counter{0};
    const fs::path parent = fs::path(sc().config.data_dir) / kSnapshotDir;
    std::error_code ec;
    fs::create_directories(parent, ec);
    if (ec) {
      return absl::UnavailableError(
          StrCat("cannot create ", parent.string(), ": ", ec.message()));
    }
    RemoveStaleCheckpoints(parent);
    dir_ = (parent / StrCat(database_->name(), "-", ::getpid(), "-",
                            counter.fetch_add(1)))
               .string();
    fs::remove_all(dir_, ec);
    auto report = database_->store().Checkpoint(dir_);
    if (!report.ok()) return report.status();
    header->set_basis_tx(report->basis_tx);
    for (const fs::directory_entry& entry :
         fs::recursive_directory_iterator(dir_, ec)) {
      if (!entry.is_regular_file()) continue;
      auto sha = Sha256Of(entry.path());
      if (!sha.ok()) return sha.status();
      v1::SnapshotFile* f = header->add_files();
      f->set_name(fs::relative(entry.path(), dir_).string());
      f->set_size(static_cast<int64_t>(entry.file_size()));
      f->set_sha256(*sha);
      files_.push_back(*f);
    }
    if (ec) {
      return absl::UnavailableError(
          StrCat("listing the checkpoint ", dir_, ": ", ec.message()));
    }
    return absl::OkStatus();
  }

  [[nodiscard]] absl::Status ReadChunk(v1::SnapshotChunk* message) {
    const v1::SnapshotFile& f = files_[file_];
    if (!in_.is_open()) {
      in_.open(fs::path(dir_) / f.name(), std::ios::binary);
      if (!in_) {
        return absl::UnavailableError(
            StrCat("cannot read ", f.name(), " of the checkpoint ", dir_));
      }
      offset_ = 0;
    }
    const size_t chunk =
        std::min<size_t>(TargetMessageBytes(sc().config), size_t{1} << 20);
    const int64_t left = f.size() - offset_;
    std::string data(static_cast<size_t>(
                         std::min<int64_t>(left, static_cast<int64_t>(chunk))),
                     '\0');
    in_.read(data.data(), static_cast<std::streamsize>(data.size()));
    if (in_.gcount() != static_cast<std::streamsize>(data.size())) {
      return absl::UnavailableError(StrCat("reading ", f.name(),
                                           " of the checkpoint ", dir_,
                                           " at offset ", offset_));
    }
    message->set_file(f.name());
    message->set_offset(offset_);
    offset_ += static_cast<int64_t>(data.size());
    message->set_data(std::move(data));
    if (offset_ >= f.size()) {
      in_.close();
      ++file_;
    }
    return absl::OkStatus();
  }

  std::shared_ptr<Database> database_;
  // Touched by one Produce at a time.
  std::string dir_;
  std::vector<v1::SnapshotFile> files_;
  size_t file_ = 0;
  std::ifstream in_;
  int64_t offset_ = 0;
};

}  // namespace

Writer* HandleSnapshot(ServiceContext& sc, Ctx* ctx, const Buf* req) {
  auto* reactor = new SnapshotStream(sc, ctx);
  v1::SnapshotRequest request;
  absl::Status s = Admit(sc, ctx);
  if (s.ok()) s = ParseRequest(*req, &request);
  if (s.ok()) s = CheckFollowerCluster(sc, request.cluster(), "Snapshot");
  if (!s.ok()) {
    reactor->Done(s);
    return reactor;
  }
  auto database = sc.registry.Get(request.database());
  if (!database.ok()) {
    reactor->Done(database.status());
    return reactor;
  }
  reactor->Start(*std::move(database));
  return reactor;
}

}  // namespace mentat::server
