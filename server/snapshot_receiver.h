#ifndef MENTAT_SERVER_SNAPSHOT_RECEIVER_H_
#define MENTAT_SERVER_SNAPSHOT_RECEIVER_H_

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "mentat/v1/replication.pb.h"

namespace mentat::server {

// Writes a Replication.Snapshot stream into a directory and checks it:
// every file named in the first message arrives whole, in order, with its
// size and SHA-256, and the stream ends with `last`. A stream cut short or
// corrupted is refused naming the file and what arrived; the caller then
// removes the directory. Not thread-safe (one stream, one thread).
class SnapshotReceiver {
 public:
  // `dir` must not exist; Add creates it.
  SnapshotReceiver(std::string database, std::string dir);

  // Each message in order. DataLoss for a message that does not follow
  // (a chunk of another file or offset, a file name that leaves the
  // directory), Unavailable for a failed write.
  [[nodiscard]] absl::Status Add(const v1::SnapshotChunk& chunk);

  // After the stream ended (with `stream_status`, gRPC's): OK only if the
  // stream was OK, `last` arrived and every file is whole with its
  // checksum; else why, naming the database, the file and the bytes it
  // got.
  [[nodiscard]] absl::Status Finish(const absl::Status& stream_status);

  int64_t basis_tx() const { return basis_tx_; }
  int64_t bytes() const { return bytes_; }

 private:
  [[nodiscard]] absl::Status CutShort(std::string_view why) const;

  const std::string database_;
  const std::string dir_;
  bool header_ = false;
  bool last_ = false;
  int64_t basis_tx_ = 0;
  std::vector<v1::SnapshotFile> files_;
  size_t file_ = 0;      // the file being written
  int64_t written_ = 0;  // bytes of it so far
  int64_t bytes_ = 0;    // bytes of every file so far
  std::ofstream out_;
};

}  // namespace mentat::server

#endif  // MENTAT_SERVER_SNAPSHOT_RECEIVER_H_
