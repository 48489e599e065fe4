// Replication.Ack: a replica says up to which transaction it holds a
// database durably; a semi-synchronous primary answers the Transacts
// waiting for it (semi_sync.h, docs/replication.md).

#include "call.h"
#include "mentat/base/str_cat.h"
#include "mentat/storage/entity_ids.h"
#include "replication_service.h"
#include "semi_sync.h"

namespace mentat::server {

absl::Status CheckServingTerm(const ServiceContext& sc, uint64_t term,
                              bool exact, std::string_view what,
                              bool check_lease) {
  if (term == 0) return absl::OkStatus();
  if (sc.role == nullptr) {
    return absl::FailedPreconditionError(
        StrCat(what, " asks for term ", term,
               " but this node is not a cluster node (it has no terms): it "
               "is not the primary the follower knows"));
  }
  const cluster::NodeRole::View view = sc.role->Get();
  const uint64_t mine = static_cast<uint64_t>(view.term);
  if (view.kind != cluster::NodeRole::Kind::kPrimary) {
    return absl::FailedPreconditionError(StrCat(
        what, " refused: the follower has seen term ", term,
        " but this node is not its primary: it is a ",
        cluster::KindName(view.kind), " in term ", mine,
        view.primary.empty() ? std::string()
                             : StrCat(" (the primary is ", view.primary, ")")));
  }
  if (mine < term || (exact && mine != term)) {
    return absl::FailedPreconditionError(
        StrCat(what, " refused: this node is the primary of term ", mine,
               ", the follower has seen term ", term,
               mine < term ? ": this node was deposed" : ""));
  }
  absl::Status writable =
      check_lease ? sc.role->CheckWritable(what) : absl::OkStatus();
  if (!writable.ok()) {
    return absl::FailedPreconditionError(
        StrCat(writable.message(), " (the follower has seen term ", term, ")"));
  }
  return absl::OkStatus();
}

absl::Status CheckFollowerCluster(const ServiceContext& sc,
                                  std::string_view cluster,
                                  std::string_view what) {
  if (cluster.empty() || cluster == sc.config.cluster) {
    return absl::OkStatus();
  }
  return absl::FailedPreconditionError(StrCat(
      what, " refused: the follower belongs to cluster \"", cluster, "\", ",
      sc.config.cluster.empty()
          ? std::string("this node to no cluster")
          : StrCat("this node to cluster \"", sc.config.cluster, "\""),
      ": a node never follows another cluster's history"));
}

Unary* HandleAck(ServiceContext& sc, Ctx* ctx, const Buf* req, Buf* resp) {
  UnaryCall call(sc, Method::kAck, ctx, resp);
  v1::AckRequest request;
  absl::Status s = call.Begin(req, &request);
  if (s.ok()) s = CheckFollowerCluster(sc, request.cluster(), "Ack");
  if (s.ok()) s = CheckServingTerm(sc, request.term(), /*exact=*/true, "Ack");
  if (!s.ok()) return FinishNow(call, s);
  auto database = sc.registry.Get(request.database());
  if (!database.ok()) return FinishNow(call, database.status());
  // Written, not only published: a replica may acknowledge a group
  // before this node's fsync of it ends (stream_before_sync).
  const int64_t basis = (*database)->LatestWritten()->basis_tx();
  if (request.applied_tx() > basis) {
    return FinishNow(
        call, absl::FailedPreconditionError(StrCat(
                  "Ack: follower ", request.follower(), " has applied tx ",
                  request.applied_tx(), " of database ", request.database(),
                  " but this node's basis is ", basis,
                  ": it follows another history")));
  }
  if (sc.semi_sync != nullptr) {
    sc.semi_sync->Ack(request.database(), request.applied_tx());
  }
  v1::AckResponse response;
  response.set_primary_basis_tx(basis);
  call.Finish(absl::OkStatus(), &response);
  return call.reactor();
}

}  // namespace mentat::server
