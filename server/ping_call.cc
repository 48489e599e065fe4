// Ping: the cheapest RPC, the floor under every other one.

#include "call.h"
#include "mentat/server/server.h"
#include "service.h"

namespace mentat::server {

void ServePing(const UnaryCall& call, const Buf* req) {
  v1::PingRequest request;
  absl::Status s = call.Begin(req, &request);
  if (!s.ok()) return call.Finish(s);
  // Answered here, on the thread that read the call: nothing to wait for,
  // so a hand-off to a reader would only add its cost to the floor this
  // call measures.
  static const std::string* const kVersion = new std::string(VersionString());
  v1::PingResponse response;
  response.set_server_version(*kVersion);
  call.Finish(absl::OkStatus(), &response);
}

}  // namespace mentat::server
