#ifndef MENTAT_SERVER_HTTP_SERVER_H_
#define MENTAT_SERVER_HTTP_SERVER_H_

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"

namespace mentat::server {

// The small HTTP side door (Boost.Beast) for /metrics and /healthz: GET
// only, one request per connection, served on its own thread so scrapes
// never touch gRPC's threads. Thread-safe: Stop from any thread.
class HttpServer {
 public:
  struct Response {
    int status = 200;
    std::string content_type = "text/plain; charset=utf-8";
    std::string body;
  };
  // Called on the HTTP thread with the request target ("/metrics").
  using Handler = std::function<Response(const std::string& target)>;

  // Binds "host:port" (port 0: any free port) and starts serving.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<HttpServer>> Start(
      const std::string& address, Handler handler);
  // Stop()s.
  ~HttpServer();

  // The bound port.
  int port() const { return port_; }
  // Closes the listener and joins the thread. Idempotent.
  void Stop();

 private:
  HttpServer(Handler handler);
  void Accept();

  Handler handler_;
  boost::asio::io_context context_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::thread thread_;
  int port_ = 0;
  bool stopped_ = false;
};

}  // namespace mentat::server

#endif  // MENTAT_SERVER_HTTP_SERVER_H_
