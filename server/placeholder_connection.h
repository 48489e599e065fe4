#ifndef MENTAT_SERVER_PLACEHOLDER_CONNECTION_H_
#define MENTAT_SERVER_PLACEHOLDER_CONNECTION_H_

// Placeholder connections: connected TCP sockets on the loopback interface
// that no client will speak on. GrpcListener hands the server end of one
// to gRPC to use up a completion queue's turn (see GrpcListener::Options::
// queue_turns), then resets the client end: gRPC reads the reset and
// closes its end.
//
// Thread safety: one thread at a time (the listener's).

#include <sys/socket.h>

#include <memory>

#include "absl/status/statusor.h"

namespace mentat::server {

class PlaceholderConnections {
 public:
  // Listens on 127.0.0.1 (or ::1) on a port of the system's choosing.
  // Unavailable when the host has no loopback address to listen on.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<PlaceholderConnections>>
  Open();

  ~PlaceholderConnections();
  PlaceholderConnections(const PlaceholderConnections&) = delete;
  PlaceholderConnections& operator=(const PlaceholderConnections&) = delete;

  struct Ends {
    int server = -1;  // non-blocking, close-on-exec
    int client = -1;
  };
  // A new loopback connection, both ends owned by the caller; both -1
  // when one could not be made. The client end stays open until the server
  // end is handed over: gRPC asks the socket for its peer, which a reset
  // connection no longer has.
  Ends Make();

  // Closes a client end with a reset (no TIME_WAIT left behind).
  static void Reset(int client);

 private:
  PlaceholderConnections(int listener, const sockaddr_storage& address,
                         socklen_t length);

  const int listener_;
  const sockaddr_storage address_;
  const socklen_t length_;
};

}  // namespace mentat::server

#endif  // MENTAT_SERVER_PLACEHOLDER_CONNECTION_H_
