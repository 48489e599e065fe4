#include "batch_stream.h"

namespace mentat::server {

void BatchStream::Step() {
  if (cancelled()) {
    Done(absl::CancelledError("the client cancelled"));
    return;
  }
  if (std::chrono::steady_clock::now() >= deadline()) {
    Done(absl::DeadlineExceededError("the call's deadline passed"));
    return;
  }
  grpc::ByteBuffer message;
  bool has_message = false;
  absl::StatusOr<bool> more = Produce(&message, &has_message);
  if (!more.ok()) {
    Done(more.status());
    return;
  }
  if (has_message) {
    Push(std::move(message), /*last=*/!*more);
    return;
  }
  if (*more) {
    Schedule();
  } else {
    Done(absl::OkStatus());
  }
}

}  // namespace mentat::server
