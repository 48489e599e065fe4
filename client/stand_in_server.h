#ifndef MENTAT_CLIENT_STAND_IN_SERVER_H_
#define MENTAT_CLIENT_STAND_IN_SERVER_H_

// For the client's tests: a gRPC server on a free loopback port serving a
// stand-in service (one that answers what a test needs, such as bytes an
// older mentatd sent), and a client connected to it.

#include <doctest/doctest.h>
#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "mentat/client/client.h"

namespace mentat::client::testing {

struct StandInServer {
  // `service` outlives this object.
  explicit StandInServer(grpc::Service* service) {
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                             &port);
    builder.RegisterService(service);
    server = builder.BuildAndStart();
    REQUIRE(server != nullptr);
    ClientOptions options;
    options.address = "127.0.0.1:" + std::to_string(port);
    auto connected = Client::Connect(options);
    REQUIRE(connected.ok());
    client = *std::move(connected);
  }

  std::unique_ptr<grpc::Server> server;
  std::unique_ptr<Client> client;
};

}  // namespace mentat::client::testing

#endif  // MENTAT_CLIENT_STAND_IN_SERVER_H_
