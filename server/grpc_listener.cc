#include "grpc_listener.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>
#include <variant>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "mentat/base/str_cat.h"
#include "placeholder_connection.h"

namespace mentat::server {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using local = asio::local::stream_protocol;

namespace {

// After accept() failed for want of descriptors, or for a reason not
// known to pass, wait this long before trying again.
constexpr auto kShortPause = std::chrono::milliseconds(20);
constexpr auto kLongPause = std::chrono::seconds(1);
// No placeholder connection (Options::queue_turns) once the descriptors
// handed out come within this many of the reserve.
constexpr int kPlaceholderMargin = 32;
// Refusals and accept errors are logged at most once per this long.
constexpr auto kLogEvery = std::chrono::seconds(10);

std::string Reason(const boost::system::error_code& ec) {
  if (ec == asio::error::address_in_use) {
    return "address in use (another process, or another mentatd, listens "
           "on it)";
  }
  if (ec == asio::error::access_denied) {
    return "permission denied (ports below 1024 need privileges; a unix "
           "socket needs a writable directory)";
  }
  if (ec.value() == EADDRNOTAVAIL) {
    return "address not available (no interface of this host has it)";
  }
  return ec.message();
}

struct HostPort {
  std::string host;
  std::string port;
};

[[nodiscard]] absl::StatusOr<HostPort> SplitHostPort(
    const std::string& address) {
  HostPort hp;
  std::string_view rest = address;
  if (rest.starts_with("[")) {
    const size_t close = rest.find(']');
    if (close == std::string_view::npos || close + 1 >= rest.size() ||
        rest[close + 1] != ':') {
      return absl::InvalidArgumentError(
          StrCat("--listen: expected [IPv6]:PORT, got \"", address, "\""));
    }
    hp.host = std::string(rest.substr(1, close - 1));
    hp.port = std::string(rest.substr(close + 2));
  } else {
    const size_t colon = rest.rfind(':');
    if (colon == std::string_view::npos) {
      return absl::InvalidArgumentError(StrCat(
          "--listen: expected HOST:PORT or unix:PATH, got \"", address, "\""));
    }
    hp.host = std::string(rest.substr(0, colon));
    hp.port = std::string(rest.substr(colon + 1));
  }
  int port = -1;
  auto [p, ec] =
      std::from_chars(hp.port.data(), hp.port.data() + hp.port.size(), port);
  if (hp.port.empty() || ec != std::errc() ||
      p != hp.port.data() + hp.port.size() || port < 0 || port > 65535) {
    return absl::InvalidArgumentError(
        StrCat("--listen: bad port in \"", address, "\""));
  }
  return hp;
}

// Open descriptors of this process (the entries of /proc/self/fd, less the
// one reading it); -1 if it cannot be read.
int64_t OpenDescriptors() {
  std::error_code ec;
  int64_t n = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++n;
  }
  if (ec) return -1;
  return n - 1;
}

int64_t SoftDescriptorLimit() {
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) {
    return int64_t{1} << 30;
  }
  return static_cast<int64_t>(rl.rlim_cur);
}

}  // namespace

int64_t RaiseDescriptorLimit() {
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    struct rlimit raised = rl;
    raised.rlim_cur = rl.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &raised) != 0) {
      spdlog::warn("cannot raise the descriptor limit from {} to {}: {}",
                   rl.rlim_cur, rl.rlim_max, std::strerror(errno));
    }
  }
  return SoftDescriptorLimit();
}

// One bound socket.
struct GrpcListener::Socket {
  std::string address;
  bool is_unix = false;
  std::variant<tcp::acceptor, local::acceptor> acceptor;
  int fd() {
    return std::visit([](auto& a) { return a.native_handle(); }, acceptor);
  }
};

// The accepting thread and what it shares with readers of the counters.
class GrpcListener::Loop {
 public:
  Loop(GrpcListener* owner,
       grpc::experimental::ExternalConnectionAcceptor* acceptor)
      : owner_(owner), acceptor_(acceptor), context_(*owner->context_) {
    fd_limit_ = SoftDescriptorLimit();
    reserve_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (owner->options_.queue_turns > 1) {
      auto placeholders = PlaceholderConnections::Open();
      if (placeholders.ok()) {
        placeholders_ = *std::move(placeholders);
      } else {
        spdlog::warn(
            "gRPC connections go to its completion queues in turn, the "
            "callback API's among them (slower point reads on those): {}",
            std::string(placeholders.status().message()));
      }
    }
  }
  ~Loop() {
    if (reserve_ >= 0) ::close(reserve_);
  }

  void Run() {
    for (auto& socket : owner_->sockets_) Wait(socket.get());
    thread_ = std::thread([this] {
      pthread_setname_np(pthread_self(), "mentat-accept");
      context_.run();
    });
  }

  void Stop() {
    asio::post(context_, [this] {
      boost::system::error_code ignored;
      for (auto& socket : owner_->sockets_) {
        std::visit([&](auto& a) { a.close(ignored); }, socket->acceptor);
      }
      context_.stop();
    });
    if (thread_.joinable()) thread_.join();
  }

  Counters counters() {
    Counters c;
    c.accepted = accepted_.load(std::memory_order_relaxed);
    c.refused = refused_.load(std::memory_order_relaxed);
    c.fd_limit = fd_limit_;
    c.placeholders = placeholders_handed_.load(std::memory_order_relaxed);
    absl::MutexLock lock(&mu_);
    SweepLocked();
    c.open = static_cast<int64_t>(open_.size());
    return c;
  }

 private:
  // Asks the poller to tell when `socket` has a connection waiting.
  void Wait(Socket* socket) {
    std::visit(
        [this, socket](auto& a) {
          a.async_wait(std::decay_t<decltype(a)>::wait_read,
                       [this, socket](const boost::system::error_code& ec) {
                         if (ec) return;  // closed: stopping
                         AcceptAll(socket);
                       });
        },
        socket->acceptor);
  }

  void WaitAfter(Socket* socket, std::chrono::milliseconds pause) {
    // One timer per pause is enough: every socket waits on its own
    // async_wait afterwards.
    auto timer = std::make_shared<asio::steady_timer>(context_, pause);
    timer->async_wait(
        [this, socket, timer](const boost::system::error_code& ec) {
          if (ec) return;
          Wait(socket);
        });
  }

  void AcceptAll(Socket* socket) {
    const int listener = socket->fd();
    for (;;) {
      const int fd =
          ::accept4(listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd >= 0) {
        Admit(socket, listener, fd);
        continue;
      }
      const int error = errno;
      switch (error) {
        case EAGAIN:
#if EAGAIN != EWOULDBLOCK
        case EWOULDBLOCK:
#endif
          Wait(socket);
          return;
        case EINTR:
        case ECONNABORTED:
        case EPROTO:
        case EPERM:
          continue;  // that connection went away; the next may be fine
        case EMFILE:
        case ENFILE:
        case ENOBUFS:
        case ENOMEM:
          Shed(socket, listener, error);
          WaitAfter(socket, kShortPause);
          return;
        default:
          Note(StrCat("accept on ", socket->address, " failed: ",
                      std::strerror(error), "; trying again in a second"));
          WaitAfter(socket,
                    std::chrono::duration_cast<std::chrono::milliseconds>(
                        kLongPause));
          return;
      }
    }
  }

  // Out of descriptors: take the waiting connection with the reserved one
  // and close it, so that its client hears at once instead of waiting in
  // the backlog for a descriptor to free up.
  void Shed(Socket* socket, int listener, int error) {
    if (reserve_ >= 0) {
      ::close(reserve_);
      reserve_ = -1;
      const int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd >= 0) {
        Refuse(fd);
      }
      reserve_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    }
    Note(StrCat("refusing connections on ", socket->address, ": ",
                std::strerror(error), " (", OpenDescriptors(), " of ",
                fd_limit_,
                " descriptors open; raise `ulimit -n`, LimitNOFILE "
                "or --max-connections)"));
  }

  void Admit(Socket* socket, int listener, int fd) {
    const int reserved = owner_->options_.reserved_fds;
    if (fd >= fd_limit_ - reserved) {
      Refuse(fd);
      Note(StrCat("refusing connections on ", socket->address, ": descriptor ",
                  fd, " is within ", reserved, " of the ", fd_limit_,
                  " this process may open (`ulimit -n`); the last ", reserved,
                  " stay free for the databases (raise `ulimit -n` or "
                  "LimitNOFILE)"));
      return;
    }
    struct stat st;
    if (::fstat(fd, &st) != 0) {
      ::close(fd);
      return;
    }
    if (placeholders_ != nullptr) {
      // gRPC skips (and closes) a connection that has no peer any more
      // without taking a turn: skip it here too, so that the turns counted
      // stay gRPC's.
      sockaddr_storage peer;
      socklen_t peer_length = sizeof peer;
      if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_length) !=
          0) {
        ::close(fd);
        return;
      }
    }
    const int max = owner_->options_.max_connections;
    {
      absl::MutexLock lock(&mu_);
      if (max > 0 && static_cast<int64_t>(open_.size()) >= max) SweepLocked();
      if (max > 0 && static_cast<int64_t>(open_.size()) >= max) {
        Refuse(fd);
        Note(StrCat("refusing connections on ", socket->address, ": ", max,
                    " are open (--max-connections)"));
        return;
      }
      open_[fd] = st.st_ino;
    }
    if (!socket->is_unix) {
      // gRPC sets this on the sockets it accepts itself.
      const int one = 1;
      (void)::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    // A placeholder takes two descriptors for a moment, and gRPC closes
    // its end later, from another thread: near the limit the descriptors
    // are the connections', and a slower connection beats a refused one.
    if (placeholders_ != nullptr &&
        handed_ % owner_->options_.queue_turns == 0 &&
        fd < fd_limit_ - reserved - kPlaceholderMargin) {
      HandPlaceholder(listener);
    }
    accepted_.fetch_add(1, std::memory_order_relaxed);
    HandOver(listener, fd);
  }

  // gRPC owns the descriptor from here on, and closes it.
  void HandOver(int listener, int fd) {
    grpc::experimental::ExternalConnectionAcceptor::NewConnectionParameters p;
    p.listener_fd = listener;
    p.fd = fd;
    ++handed_;
    acceptor_->HandleNewConnection(&p);
  }

  // Takes the callback queue's turn (Options::queue_turns).
  void HandPlaceholder(int listener) {
    const PlaceholderConnections::Ends ends = placeholders_->Make();
    if (ends.server < 0) return;  // this connection takes the turn
    HandOver(listener, ends.server);
    PlaceholderConnections::Reset(ends.client);
    placeholders_handed_.fetch_add(1, std::memory_order_relaxed);
  }

  // Closes a connection we will not serve: with a reset, so the client
  // learns at once.
  void Refuse(int fd) {
    struct linger lg = {1, 0};
    (void)::setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    ::close(fd);
    refused_.fetch_add(1, std::memory_order_relaxed);
  }

  // Forgets connections gRPC has closed: a descriptor that no longer names
  // the socket it named when accepted (closed, or reused for another file).
  void SweepLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    for (auto it = open_.begin(); it != open_.end();) {
      struct stat st;
      if (::fstat(it->first, &st) != 0 || !S_ISSOCK(st.st_mode) ||
          st.st_ino != it->second) {
        open_.erase(it++);
      } else {
        ++it;
      }
    }
  }

  // Logs a refusal or an accept failure, at most once per kLogEvery.
  void Note(const std::string& what) {
    const auto now = std::chrono::steady_clock::now();
    if (now - last_note_ < kLogEvery) {
      ++notes_skipped_;
      return;
    }
    last_note_ = now;
    if (notes_skipped_ > 0) {
      spdlog::warn("{} (and {} more since the last such line)", what,
                   notes_skipped_);
    } else {
      spdlog::warn("{}", what);
    }
    notes_skipped_ = 0;
  }

  GrpcListener* owner_;
  grpc::experimental::ExternalConnectionAcceptor* acceptor_;
  asio::io_context& context_;
  std::thread thread_;
  int64_t fd_limit_ = 0;
  int reserve_ = -1;  // the loop thread's
  std::chrono::steady_clock::time_point last_note_{};
  int64_t notes_skipped_ = 0;
  std::unique_ptr<PlaceholderConnections> placeholders_;
  int64_t handed_ = 0;  // connections handed to gRPC, placeholders too
  std::atomic<int64_t> placeholders_handed_{0};
  std::atomic<int64_t> accepted_{0};
  std::atomic<int64_t> refused_{0};
  absl::Mutex mu_;
  absl::flat_hash_map<int, ino_t> open_ ABSL_GUARDED_BY(mu_);  // fd -> inode
};

absl::StatusOr<std::unique_ptr<GrpcListener>> GrpcListener::Bind(
    const Options& options) {
  std::unique_ptr<GrpcListener> listener(new GrpcListener());
  listener->options_ = options;
  listener->context_ = std::make_unique<asio::io_context>();
  asio::io_context* bind_context = listener->context_.get();
  for (const std::string& address : options.addresses) {
    boost::system::error_code ec;
    if (address.starts_with("unix:")) {
      std::string path = address.substr(5);
      if (path.starts_with("//")) path = path.substr(2);
      if (path.empty()) {
        return absl::InvalidArgumentError(
            StrCat("--listen: \"", address, "\" names no socket path"));
      }
      // A socket left by a previous run would make the bind fail.
      struct stat st;
      if (::stat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) {
        ::unlink(path.c_str());
      }
      local::acceptor a(*bind_context);
      a.open(local(), ec);
      if (!ec) a.bind(local::endpoint(path), ec);
      if (!ec) a.listen(asio::socket_base::max_listen_connections, ec);
      // AcceptAll takes connections until accept4 says EAGAIN.
      if (!ec) a.non_blocking(true, ec);
      if (ec) {
        return absl::UnavailableError(
            StrCat("cannot listen on ", address, ": ", Reason(ec)));
      }
      auto socket =
          std::make_unique<Socket>(Socket{address, true, std::move(a)});
      listener->sockets_.push_back(std::move(socket));
      continue;
    }
    auto hp = SplitHostPort(address);
    if (!hp.ok()) return hp.status();
    std::vector<tcp::endpoint> endpoints;
    const unsigned short port = static_cast<unsigned short>(
        std::stoi(hp->port) == 0 && listener->port_ != 0 ? listener->port_
                                                         : std::stoi(hp->port));
    if (hp->host.empty() || hp->host == "0.0.0.0" || hp->host == "::" ||
        hp->host == "*") {
      // A wildcard, as gRPC reads it: every address of the host, IPv6 and
      // IPv4 through one dual-stack socket when the host has IPv6.
      endpoints.emplace_back(asio::ip::address_v6::any(), port);
      endpoints.emplace_back(asio::ip::address_v4::any(), port);
    } else {
      tcp::resolver resolver(*bind_context);
      auto results = resolver.resolve(
          hp->host, hp->port,
          tcp::resolver::passive | tcp::resolver::numeric_service, ec);
      if (ec) {
        return absl::InvalidArgumentError(StrCat(
            "--listen: cannot resolve \"", hp->host, "\": ", ec.message()));
      }
      for (const auto& r : results) endpoints.push_back(r.endpoint());
    }
    bool bound = false;
    bool wildcard_v6 = false;
    boost::system::error_code first_error;
    for (tcp::endpoint endpoint : endpoints) {
      if (wildcard_v6 && endpoint.address().is_v4() &&
          endpoint.address().to_v4().is_unspecified()) {
        break;  // the dual-stack socket took IPv4 too
      }
      if (endpoint.port() == 0 && listener->port_ != 0 && bound) {
        endpoint.port(static_cast<unsigned short>(listener->port_));
      }
      tcp::acceptor a(*bind_context);
      ec.clear();
      a.open(endpoint.protocol(), ec);
      // SO_REUSEADDR (rebinding over TIME_WAIT) but never SO_REUSEPORT,
      // which gRPC sets by default: a second mentatd on the same port
      // would silently take half the connections; it must fail instead.
      if (!ec) a.set_option(asio::socket_base::reuse_address(true), ec);
      if (!ec && endpoint.address().is_v6()) {
        a.set_option(asio::ip::v6_only(!endpoint.address().is_unspecified()),
                     ec);
      }
      if (!ec) a.bind(endpoint, ec);
      if (!ec) a.listen(asio::socket_base::max_listen_connections, ec);
      if (!ec) a.non_blocking(true, ec);
      if (ec) {
        if (!first_error) first_error = ec;
        // Taken by another process: that is the answer, whatever the
        // other addresses of the name would do.
        if (ec == asio::error::address_in_use) break;
        continue;
      }
      const int bound_port = a.local_endpoint().port();
      if (listener->port_ == 0) listener->port_ = bound_port;
      wildcard_v6 = wildcard_v6 || (endpoint.address().is_v6() &&
                                    endpoint.address().is_unspecified());
      bound = true;
      listener->sockets_.push_back(
          std::make_unique<Socket>(Socket{address, false, std::move(a)}));
      if (port == 0) {
        // The other addresses of this name take the same port.
        for (tcp::endpoint& e : endpoints) {
          e.port(static_cast<unsigned short>(bound_port));
        }
      }
    }
    if (!bound || first_error == asio::error::address_in_use) {
      return absl::UnavailableError(
          StrCat("cannot listen on ", address, ": ", Reason(first_error)));
    }
  }
  return listener;
}

GrpcListener::GrpcListener() = default;

GrpcListener::~GrpcListener() {
  Stop();
  loop_.reset();
  sockets_.clear();
}

void GrpcListener::Start(
    grpc::experimental::ExternalConnectionAcceptor* acceptor) {
  loop_ = std::make_unique<Loop>(this, acceptor);
  loop_->Run();
}

void GrpcListener::Stop() {
  if (loop_ != nullptr) {
    loop_->Stop();
  } else {
    for (auto& socket : sockets_) {
      boost::system::error_code ignored;
      std::visit([&](auto& a) { a.close(ignored); }, socket->acceptor);
    }
  }
}

GrpcListener::Counters GrpcListener::counters() const {
  if (loop_ == nullptr) return Counters{};
  return loop_->counters();
}

std::string GrpcListener::Problem() const {
  if (loop_ == nullptr) return "the gRPC listener is not running";
  const Counters c = loop_->counters();
  const int max = options_.max_connections;
  if (max > 0 && c.open >= max) {
    return StrCat(c.open, " gRPC connections are open (--max-connections ", max,
                  "), refusing new connections");
  }
  // The descriptor a connection accepted now would get: the lowest free
  // one, which is what open() returns too.
  const int probe = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (probe >= 0) ::close(probe);
  if (probe < 0 || probe >= c.fd_limit - options_.reserved_fds) {
    return StrCat(OpenDescriptors(), " of ", c.fd_limit,
                  " descriptors are open (RLIMIT_NOFILE; the last ",
                  options_.reserved_fds,
                  " are kept for the databases), refusing new connections");
  }
  return std::string();
}

}  // namespace mentat::server
