#include "placeholder_connection.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "mentat/base/str_cat.h"

namespace mentat::server {

namespace {

// A listening socket on `family`'s loopback address, or -1.
int ListenOnLoopback(int family, sockaddr_storage* address, socklen_t* length) {
  const int fd = ::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  std::memset(address, 0, sizeof *address);
  if (family == AF_INET) {
    auto* in = reinterpret_cast<sockaddr_in*>(address);
    in->sin_family = AF_INET;
    in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    *length = sizeof(sockaddr_in);
  } else {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(address);
    in6->sin6_family = AF_INET6;
    in6->sin6_addr = in6addr_loopback;
    *length = sizeof(sockaddr_in6);
  }
  if (::bind(fd, reinterpret_cast<sockaddr*>(address), *length) != 0 ||
      ::listen(fd, 4) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(address), length) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

absl::StatusOr<std::unique_ptr<PlaceholderConnections>>
PlaceholderConnections::Open() {
  sockaddr_storage address;
  socklen_t length = 0;
  int fd = ListenOnLoopback(AF_INET, &address, &length);
  if (fd < 0) fd = ListenOnLoopback(AF_INET6, &address, &length);
  if (fd < 0) {
    return absl::UnavailableError(
        StrCat("cannot listen on a loopback address: ", std::strerror(errno)));
  }
  return std::unique_ptr<PlaceholderConnections>(
      new PlaceholderConnections(fd, address, length));
}

PlaceholderConnections::PlaceholderConnections(int listener,
                                               const sockaddr_storage& address,
                                               socklen_t length)
    : listener_(listener), address_(address), length_(length) {}

PlaceholderConnections::~PlaceholderConnections() { ::close(listener_); }

PlaceholderConnections::Ends PlaceholderConnections::Make() {
  const int client =
      ::socket(address_.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (client < 0) return {};
  // A blocking connect on loopback returns once the connection waits in
  // the listener's backlog.
  if (::connect(client, reinterpret_cast<const sockaddr*>(&address_),
                length_) != 0) {
    ::close(client);
    return {};
  }
  const int server =
      ::accept4(listener_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (server < 0) {
    Reset(client);
    return {};
  }
  return Ends{server, client};
}

void PlaceholderConnections::Reset(int client) {
  struct linger lg = {1, 0};
  (void)::setsockopt(client, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
  ::close(client);
}

}  // namespace mentat::server
