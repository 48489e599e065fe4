// Ping: the cheapest RPC, the floor under every other one.

#include "call.h"
#include "mentat/server/server.h"
#include "service.h"

namespace mentat::server {

Unary* HandlePing(ServiceContext& sc, Ctx* ctx, const Buf* req, Buf* resp) {
  UnaryCall call(sc, Method::kPing, ctx, resp);
  v1::PingRequest request;
  absl::Status s = call.Begin(req, &request);
  if (!s.ok()) return FinishNow(call, s);
  // Answered here, on the gRPC thread: nothing to wait for, so a hand-off
  // to a reader would only add its cost to the floor this call measures.
  static const std::string* const kVersion = new std::string(VersionString());
  v1::PingResponse response;
  response.set_server_version(*kVersion);
  call.Finish(absl::OkStatus(), &response);
  return call.reactor();
}

}  // namespace mentat::server
