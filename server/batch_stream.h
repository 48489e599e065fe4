#ifndef MENTAT_SERVER_BATCH_STREAM_H_
#define MENTAT_SERVER_BATCH_STREAM_H_

#include "absl/status/statusor.h"
#include "stream_reactor.h"

namespace mentat::server {

// A stream whose messages are made one at a time, each by a task on a
// reader thread, the next task starting when the previous message has been
// written (so at most one message waits, and no thread parks). For index
// scans and log reads, which can pick up where they stopped.
class BatchStream : public StreamReactor {
 public:
  using StreamReactor::StreamReactor;

  // Schedules the first message.
  void Begin() { Schedule(); }

 protected:
  // Makes the next message into *out (leaving *has_message false if there
  // is none this time). Returns whether more may follow. Runs on a reader
  // thread, one call at a time.
  [[nodiscard]] virtual absl::StatusOr<bool> Produce(grpc::ByteBuffer* out,
                                                     bool* has_message) = 0;

  void OnRoom() override { Schedule(); }

  void Schedule() {
    Ref();
    sc().readers.Post([this] {
      Step();
      Unref();
    });
  }

 private:
  void Step();
};

}  // namespace mentat::server

#endif  // MENTAT_SERVER_BATCH_STREAM_H_
