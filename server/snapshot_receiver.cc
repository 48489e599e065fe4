#include "snapshot_receiver.h"

#include <openssl/evp.h>

#include <filesystem>
#include <memory>

#include "mentat/base/str_cat.h"

namespace mentat::server {

namespace fs = std::filesystem;

namespace {

// A name that stays inside the directory: relative, no "..".
bool SafeName(const std::string& name) {
  if (name.empty() || name.front() == '/') return false;
  for (const auto& part : fs::path(name)) {
    if (part == "..") return false;
  }
  return true;
}

std::string Sha256(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> md(EVP_MD_CTX_new(),
                                                        EVP_MD_CTX_free);
  EVP_DigestInit_ex(md.get(), EVP_sha256(), nullptr);
  std::vector<char> buf(1 << 16);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    if (in.gcount() > 0) {
      EVP_DigestUpdate(md.get(), buf.data(), static_cast<size_t>(in.gcount()));
    }
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(md.get(), digest, &len);
  return std::string(reinterpret_cast<const char*>(digest), len);
}

}  // namespace

SnapshotReceiver::SnapshotReceiver(std::string database, std::string dir)
    : database_(std::move(database)), dir_(std::move(dir)) {}

absl::Status SnapshotReceiver::CutShort(std::string_view why) const {
  std::string got;
  if (!header_) {
    got = "no file list arrived";
  } else if (file_ < files_.size()) {
    const v1::SnapshotFile& f = files_[file_];
    got = StrCat("file ", file_ + 1, " of ", files_.size(), " (", f.name(),
                 ") has ", written_, " of its ", f.size(), " bytes");
  } else {
    got = StrCat("all ", files_.size(), " files arrived but not the end mark");
  }
  return absl::DataLossError(StrCat("the snapshot of database ", database_,
                                    " from the primary was cut short (", why,
                                    "): ", got, "; nothing was kept"));
}

absl::Status SnapshotReceiver::Add(const v1::SnapshotChunk& chunk) {
  if (!header_) {
    if (chunk.files_size() == 0 || chunk.basis_tx() <= 0) {
      return absl::DataLossError(
          StrCat("the snapshot of database ", database_,
                 " does not start with its file list and basis"));
    }
    for (const v1::SnapshotFile& f : chunk.files()) {
      if (!SafeName(f.name()) || f.size() < 0) {
        return absl::DataLossError(
            StrCat("the snapshot of database ", database_,
                   " names a file outside its directory: \"", f.name(), "\""));
      }
    }
    std::error_code ec;
    fs::create_directories(dir_, ec);
    if (ec) {
      return absl::UnavailableError(
          StrCat("cannot create ", dir_, ": ", ec.message()));
    }
    files_.assign(chunk.files().begin(), chunk.files().end());
    basis_tx_ = chunk.basis_tx();
    header_ = true;
    return absl::OkStatus();
  }
  if (chunk.last()) {
    if (file_ < files_.size()) return CutShort("the end mark came early");
    last_ = true;
    return absl::OkStatus();
  }
  if (file_ >= files_.size() || chunk.file() != files_[file_].name() ||
      chunk.offset() != written_) {
    return absl::DataLossError(StrCat(
        "the snapshot of database ", database_, " sent bytes of \"",
        chunk.file(), "\" at offset ", chunk.offset(), " where ",
        file_ < files_.size()
            ? StrCat("\"", files_[file_].name(), "\" at offset ", written_)
            : std::string("nothing more"),
        " was due"));
  }
  const v1::SnapshotFile& f = files_[file_];
  if (written_ + static_cast<int64_t>(chunk.data().size()) > f.size()) {
    return absl::DataLossError(StrCat("the snapshot of database ", database_,
                                      " sent more than the ", f.size(),
                                      " bytes of ", f.name()));
  }
  const fs::path path = fs::path(dir_) / f.name();
  if (!out_.is_open()) {
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    out_.open(path, std::ios::binary | std::ios::trunc);
    if (!out_)
      return absl::UnavailableError(StrCat("cannot write ", path.string()));
  }
  out_.write(chunk.data().data(),
             static_cast<std::streamsize>(chunk.data().size()));
  if (!out_) return absl::UnavailableError(StrCat("writing ", path.string()));
  written_ += static_cast<int64_t>(chunk.data().size());
  bytes_ += static_cast<int64_t>(chunk.data().size());
  if (written_ == f.size()) {
    out_.close();
    if (!out_) return absl::UnavailableError(StrCat("writing ", path.string()));
    if (Sha256(path) != f.sha256()) {
      return absl::DataLossError(StrCat(
          "the snapshot of database ", database_, ": file ", f.name(),
          " arrived whole but its SHA-256 does not match; nothing was kept"));
    }
    ++file_;
    written_ = 0;
  }
  return absl::OkStatus();
}

absl::Status SnapshotReceiver::Finish(const absl::Status& stream_status) {
  if (!stream_status.ok()) {
    return CutShort(StrCat("the stream ended with ",
                           absl::StatusCodeToString(stream_status.code()), ": ",
                           stream_status.message()));
  }
  if (!last_) return CutShort("the stream ended early");
  return absl::OkStatus();
}

}  // namespace mentat::server
