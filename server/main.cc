// mentatd: parse the configuration, start the server, stop it gracefully
// on SIGTERM or SIGINT.

#include <spdlog/spdlog.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "mentat/server/config.h"
#include "mentat/server/server.h"

int main(int argc, char** argv) {
  using mentat::server::CommandLine;
  std::vector<std::string> args(argv + 1, argv + argc);
  absl::StatusOr<CommandLine> cl = mentat::server::ParseCommandLine(
      args, mentat::server::ProcessEnvironment());
  if (!cl.ok()) {
    std::cerr << "mentatd: " << cl.status().message() << "\n";
    return 2;
  }
  if (cl->help) {
    std::cout << mentat::server::UsageText();
    return 0;
  }
  if (cl->version) {
    std::cout << mentat::server::VersionString() << "\n";
    return 0;
  }
  absl::Status s = mentat::server::SetUpLogging(cl->config);
  if (!s.ok()) {
    std::cerr << "mentatd: " << s.message() << "\n";
    return 2;
  }
  // gRPC reads its poller from the environment when it starts, which is
  // below (config.h says why poll is the default).
  setenv("GRPC_POLL_STRATEGY", cl->config.grpc_poll_strategy.c_str(), 1);
  // Signals are handled by the asio signal set below; block them before
  // any thread starts so that only it receives them.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);

  boost::asio::io_context signals_context;
  boost::asio::signal_set signals(signals_context, SIGTERM, SIGINT);

  auto server = mentat::server::MentatServer::Start(cl->config);
  if (!server.ok()) {
    spdlog::critical("cannot start: {}",
                     std::string(server.status().message()));
    return 1;
  }
  signals.async_wait([&](const boost::system::error_code& ec, int signal) {
    if (ec) return;
    spdlog::info("signal {}: shutting down", signal);
    (*server)->Shutdown();
  });
  signals_context.run();
  server->reset();
  return 0;
}
