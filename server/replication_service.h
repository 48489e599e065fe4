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
    v1::Replication::WithRawCallbackMethod_Snapshot<
        v1::Replication::WithRawCallbackMethod_Ack<v1::Replication::Service>>>;

// follow_call.cc: the log after the follower's basis, then each commit.
Writer* HandleFollow(ServiceContext& sc, Ctx* ctx, const Buf* req);
// snapshot_call.cc: a checkpoint's files.
Writer* HandleSnapshot(ServiceContext& sc, Ctx* ctx, const Buf* req);
// ack_call.cc: a follower's durable basis, for semi-synchronous Transacts.
Unary* HandleAck(ServiceContext& sc, Ctx* ctx, const Buf* req, Buf* resp);

// OK when `term` is 0 (not checked) or this node is the primary of `term`
// (with `exact`) or of a later term, and (with `check_lease`) its lease
// deadline has not passed; else FailedPrecondition naming the role and
// term this node knows (`what`: "Follow", "Ack"). Follow and Ack check
// it, so that a replica never applies, nor a primary counts
// acknowledgements of, a deposed primary's entries (ack_call.cc). A
// stream in progress checks without the lease: past its deadline the
// primary commits nothing (the write gate), and the role changes once
// the lease is known lost.
[[nodiscard]] absl::Status CheckServingTerm(const ServiceContext& sc,
                                            uint64_t term, bool exact,
                                            std::string_view what,
                                            bool check_lease = true);

// OK when `cluster` is empty (not checked: a --replica-of follower) or is
// this node's --cluster; else FailedPrecondition naming both (`what`:
// "Follow", "Ack", "Snapshot"). A node reached through a stale leader key
// or a reused address may belong to another cluster: its history must
// never reach this one's followers.
[[nodiscard]] absl::Status CheckFollowerCluster(const ServiceContext& sc,
                                                std::string_view cluster,
                                                std::string_view what);

class ReplicationService final : public RawReplicationService {
 public:
  explicit ReplicationService(ServiceContext& sc) : sc_(sc) {}

  Writer* Follow(Ctx* ctx, const Buf* req) override {
    return HandedToGrpc(HandleFollow(sc_, ctx, req));
  }
  Writer* Snapshot(Ctx* ctx, const Buf* req) override {
    return HandedToGrpc(HandleSnapshot(sc_, ctx, req));
  }
  Unary* Ack(Ctx* ctx, const Buf* req, Buf* resp) override {
    return HandedToGrpc(HandleAck(sc_, ctx, req, resp));
  }

 private:
  ServiceContext& sc_;
};

}  // namespace mentat::server

#endif  // MENTAT_SERVER_REPLICATION_SERVICE_H_
