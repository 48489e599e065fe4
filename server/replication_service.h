#ifndef MENTAT_SERVER_REPLICATION_SERVICE_H_
#define MENTAT_SERVER_REPLICATION_SERVICE_H_

#include <grpcpp/grpcpp.h>

#include "mentat/v1/replication.grpc.pb.h"
#include "service.h"
#include "service_context.h"
#include "tsan_handoff.h"

namespace mentat::server {

// mentat.v1.Replication (docs/replication.md) with raw-bytes methods, as
// MentatService. Every node serves it: a replica's followers read the
// replica's log as they would the primary's.
using RawReplicationService = v1::Replication::WithRawCallbackMethod_Follow<
    v1::Replication::WithRawCallbackMethod_Snapshot<v1::Replication::Service>>;

// follow_call.cc: the log after the follower's basis, then each commit.
Writer* HandleFollow(ServiceContext& sc, Ctx* ctx, const Buf* req);
// snapshot_call.cc: a checkpoint's files.
Writer* HandleSnapshot(ServiceContext& sc, Ctx* ctx, const Buf* req);

class ReplicationService final : public RawReplicationService {
 public:
  explicit ReplicationService(ServiceContext& sc) : sc_(sc) {}

  Writer* Follow(Ctx* ctx, const Buf* req) override {
    return HandedToGrpc(HandleFollow(sc_, ctx, req));
  }
  Writer* Snapshot(Ctx* ctx, const Buf* req) override {
    return HandedToGrpc(HandleSnapshot(sc_, ctx, req));
  }

 private:
  ServiceContext& sc_;
};

}  // namespace mentat::server

#endif  // MENTAT_SERVER_REPLICATION_SERVICE_H_
