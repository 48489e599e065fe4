#include "http_server.h"

#include <boost/asio/ip/address.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <charconv>

#include "mentat/base/str_cat.h"

namespace mentat::server {

namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = boost::asio::ip::tcp;

namespace {

// One connection: read a request, answer, close.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, const HttpServer::Handler& handler)
      : stream_(std::move(socket)), handler_(handler) {}

  void Run() {
    stream_.expires_after(std::chrono::seconds(10));
    http::async_read(stream_, buffer_, request_,
                     [self = shared_from_this()](beast::error_code ec, size_t) {
                       self->OnRead(ec);
                     });
  }

 private:
  void OnRead(beast::error_code ec) {
    if (ec) return;
    response_.version(request_.version());
    response_.keep_alive(false);
    if (request_.method() != http::verb::get &&
        request_.method() != http::verb::head) {
      response_.result(http::status::method_not_allowed);
      response_.set(http::field::content_type, "text/plain");
      response_.body() = "GET only\n";
    } else {
      std::string target(request_.target());
      if (size_t q = target.find('?'); q != std::string::npos) {
        target.resize(q);
      }
      HttpServer::Response r = handler_(target);
      response_.result(static_cast<http::status>(r.status));
      response_.set(http::field::content_type, r.content_type);
      response_.body() = std::move(r.body);
    }
    response_.set(http::field::server, "mentatd");
    response_.prepare_payload();
    http::async_write(stream_, response_,
                      [self = shared_from_this()](beast::error_code, size_t) {
                        beast::error_code ignored;
                        self->stream_.socket().shutdown(
                            tcp::socket::shutdown_send, ignored);
                      });
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  http::request<http::string_body> request_;
  http::response<http::string_body> response_;
  const HttpServer::Handler& handler_;
};

}  // namespace

HttpServer::HttpServer(Handler handler)
    : handler_(std::move(handler)), acceptor_(context_) {}

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(
    const std::string& address, Handler handler) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos) {
    return absl::InvalidArgumentError(
        StrCat("--http: expected HOST:PORT, got \"", address, "\""));
  }
  std::string host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  int port = -1;
  const std::string port_text = address.substr(colon + 1);
  auto [p, ec] = std::from_chars(port_text.data(),
                                 port_text.data() + port_text.size(), port);
  if (ec != std::errc() || p != port_text.data() + port_text.size() ||
      port < 0 || port > 65535) {
    return absl::InvalidArgumentError(
        StrCat("--http: bad port in \"", address, "\""));
  }
  if (host.empty() || host == "localhost") host = "127.0.0.1";
  beast::error_code error;
  const auto ip = boost::asio::ip::make_address(host, error);
  if (error) {
    return absl::InvalidArgumentError(
        StrCat("--http: bad address \"", host, "\": ", error.message()));
  }
  std::unique_ptr<HttpServer> server(new HttpServer(std::move(handler)));
  const tcp::endpoint endpoint(ip, static_cast<unsigned short>(port));
  server->acceptor_.open(endpoint.protocol(), error);
  if (!error) {
    server->acceptor_.set_option(boost::asio::socket_base::reuse_address(true),
                                 error);
  }
  if (!error) server->acceptor_.bind(endpoint, error);
  if (!error) {
    server->acceptor_.listen(boost::asio::socket_base::max_listen_connections,
                             error);
  }
  if (error) {
    return absl::UnavailableError(
        StrCat("--http: cannot listen on ", address, ": ", error.message()));
  }
  server->port_ = server->acceptor_.local_endpoint().port();
  server->Accept();
  server->thread_ = std::thread([raw = server.get()] {
    pthread_setname_np(pthread_self(), "mentat-http");
    raw->context_.run();
  });
  return server;
}

void HttpServer::Accept() {
  acceptor_.async_accept(
      boost::asio::make_strand(context_),
      [this](beast::error_code ec, tcp::socket socket) {
        if (ec == boost::asio::error::operation_aborted ||
            !acceptor_.is_open()) {
          return;  // closed: stopping
        }
        if (ec) {
          // Out of descriptors (EMFILE) or another passing failure: try
          // again shortly instead of leaving /healthz unanswered for good.
          auto timer = std::make_shared<boost::asio::steady_timer>(
              context_, std::chrono::milliseconds(50));
          timer->async_wait([this, timer](beast::error_code wait_error) {
            if (!wait_error) Accept();
          });
          return;
        }
        std::make_shared<Session>(std::move(socket), handler_)->Run();
        Accept();
      });
}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::Stop() {
  if (stopped_) return;
  stopped_ = true;
  boost::asio::post(context_, [this] {
    beast::error_code ignored;
    acceptor_.close(ignored);
    context_.stop();
  });
  if (thread_.joinable()) thread_.join();
}

}  // namespace mentat::server
