#ifndef MENTAT_SERVER_SERVER_H_
#define MENTAT_SERVER_SERVER_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "mentat/server/config.h"

namespace mentat::server {

class ServerImpl;

// mentatd: the gRPC service mentat.v1.Mentat over the databases of a data
// directory, plus the standard health service, server reflection, and the
// HTTP side door for /metrics and /healthz.
//
// Start returns once every listener is bound and serving. Shutdown is
// graceful: new calls are refused, Subscribe streams end, running calls get
// shutdown_grace_ms to finish (queued transactions commit and are answered)
// before the rest are cancelled; then the readers stop and every database
// closes. Thread-safe.
class MentatServer {
 public:
  // Opens (and creates, with "default") the databases and starts serving.
  // Errors: InvalidArgument for a bad configuration, Unavailable when a
  // listener cannot bind or a database cannot open.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<MentatServer>> Start(
      const ServerConfig& config);

  // Shutdown()s.
  ~MentatServer();

  // The TCP port the first host:port listener bound (useful with port 0);
  // 0 if every listener is a unix socket.
  int port() const;
  // The bound HTTP port; 0 when --http is off.
  int http_port() const;
  // The configuration in effect.
  const ServerConfig& config() const;

  // Graceful shutdown, as above. Idempotent; any thread; returns when
  // done.
  void Shutdown();

 private:
  explicit MentatServer(std::unique_ptr<ServerImpl> impl);
  std::unique_ptr<ServerImpl> impl_;
};

// Sets up spdlog's default logger: text or JSON lines on stderr, at the
// configured level. InvalidArgument for an unknown level.
[[nodiscard]] absl::Status SetUpLogging(const ServerConfig& config);

// "mentatd 0.1.0".
std::string VersionString();

}  // namespace mentat::server

#endif  // MENTAT_SERVER_SERVER_H_
