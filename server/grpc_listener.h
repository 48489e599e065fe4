#ifndef MENTAT_SERVER_GRPC_LISTENER_H_
#define MENTAT_SERVER_GRPC_LISTENER_H_

#include <grpcpp/server_builder.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace boost::asio {
class io_context;
}

namespace mentat::server {

// mentatd's gRPC listening sockets. gRPC 1.51's own listener stops for
// good the first time accept() fails for want of descriptors: its error
// path never asks the poller for the socket again (grpc/grpc#16058,
// #20418), so a burst of connections under a low `ulimit -n` left the
// server alive, /healthz saying ok, and every new call hanging. mentatd
// therefore binds and accepts itself, on one Boost.Asio thread, and hands
// each connection to gRPC through the ServerBuilder's external connection
// acceptor; HTTP/2 and TLS stay gRPC's.
//
// Admission. A new connection is refused (closed at once; the client sees
// UNAVAILABLE and may retry) when
//  - `max_connections` connections are open (0: no such limit), or
//  - the descriptor it got lies within `reserved_fds` of the process's
//    RLIMIT_NOFILE: descriptors are handed out lowest first, so every one
//    below it is in use, and the last `reserved_fds` stay free for the
//    databases' files, the HTTP side door and gRPC itself.
// When accept() fails for want of descriptors or memory (EMFILE, ENFILE,
// ENOBUFS, ENOMEM), the waiting connection is taken with a descriptor held
// in reserve for this and closed, and accepting resumes after a short
// pause (a Boost.Asio timer), so the listener never stops and never spins.
//
// Thread-safe. Counters may be read from any thread.
class GrpcListener {
 public:
  struct Options {
    // "host:port" ("[::1]:7878", "0.0.0.0:0", "localhost:7878") or
    // "unix:/path" (also "unix:///path"); a socket file left by an earlier
    // run is replaced.
    std::vector<std::string> addresses;
    // Most connections open at once; 0: bounded by descriptors only.
    int max_connections = 0;
    // Descriptors kept free below RLIMIT_NOFILE.
    int reserved_fds = 64;
    // gRPC (1.51, `poll` poller) binds each connection it is handed to one
    // of its server's listening completion queues, taking them in turn, and
    // the queue's pollers then read every call of that connection. The
    // first queue of the `queue_turns` (registered before the ones added
    // through the ServerBuilder) is the callback API's, polled by gRPC's
    // own threads, which read a call and hand it to a unary thread: on a VM
    // that hop made every third connection's point reads and pings 40-70%
    // slower. With `queue_turns` > 1 the listener gives that queue's turns
    // to placeholder connections (placeholder_connection.h), so every
    // client connection is bound to a queue of mentatd's own. 0: hand
    // connections over as they come.
    int queue_turns = 0;
  };

  // Binds and listens on every address (nothing is accepted before Start).
  // Unavailable naming the address and the reason when one cannot be
  // bound ("address in use" only when the system says so),
  // InvalidArgument for an address of the wrong form.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<GrpcListener>> Bind(
      const Options& options);

  // Stop()s.
  ~GrpcListener();
  GrpcListener(const GrpcListener&) = delete;
  GrpcListener& operator=(const GrpcListener&) = delete;

  // Starts accepting; connections go to `acceptor` (the ServerBuilder's,
  // which must outlive this listener or its Stop).
  void Start(grpc::experimental::ExternalConnectionAcceptor* acceptor);

  // Closes the sockets (new connections are refused by the system) and
  // joins the thread. Connections already handed over stay gRPC's.
  // Idempotent.
  void Stop();

  // The port of the first host:port address; 0 if every address is a unix
  // socket.
  int port() const { return port_; }

  struct Counters {
    int64_t accepted = 0;      // connections handed to gRPC
    int64_t refused = 0;       // connections closed at once (limits, EMFILE)
    int64_t open = 0;          // handed over and not yet closed by gRPC
    int64_t fd_limit = 0;      // RLIMIT_NOFILE (soft) when Start ran
    int64_t placeholders = 0;  // placeholder connections handed over
  };
  Counters counters() const;

  // Empty while a new connection would be admitted; else why it would be
  // refused ("..., refusing new connections"). Opens a descriptor and
  // counts the open ones: meant for /healthz, not for every call.
  std::string Problem() const;

 private:
  struct Socket;
  class Loop;
  GrpcListener();

  // Declared first: the sockets and the loop use it until they are gone.
  std::unique_ptr<boost::asio::io_context> context_;
  std::vector<std::unique_ptr<Socket>> sockets_;
  std::unique_ptr<Loop> loop_;
  Options options_;
  int port_ = 0;
};

// Raises the soft RLIMIT_NOFILE to the hard limit (a server that holds a
// connection per client and files per database wants every descriptor it
// may have). Returns the soft limit in effect afterwards.
int64_t RaiseDescriptorLimit();

}  // namespace mentat::server

#endif  // MENTAT_SERVER_GRPC_LISTENER_H_
