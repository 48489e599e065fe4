#ifndef MENTAT_SERVER_CLUSTER_CLUSTER_MEMBER_H_
#define MENTAT_SERVER_CLUSTER_CLUSTER_MEMBER_H_

#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "cluster/cluster_node.h"
#include "database_registry.h"
#include "mentat/server/config.h"
#include "replica.h"

namespace mentat::server::cluster {

// The server's side of a cluster node's role changes (RoleActions): a
// primary's databases take writes in its term (Store::Promote); a replica
// follows the primary through a Replica that discards a former primary's
// unreplicated tail (Replica's discard_tails). Thread-safe.
class ClusterMember : public RoleActions {
 public:
  ClusterMember(const ServerConfig& config, DatabaseRegistry& registry);
  ~ClusterMember() override;

  // Stops following. Idempotent.
  void Stop();

  [[nodiscard]] absl::Status BecomePrimary(int64_t term) override;
  void Follow(const std::string& address, int64_t term) override;
  void StopWriting(const std::string& why) override;
  int64_t AppliedScore() override;

  // Replica::LagOf of the Replica following now; false when none.
  bool LagOf(const std::string& database, int64_t* primary_tx, int64_t* lag_tx,
             int64_t* lag_ms) const;

  // The Replica's metrics while following, and the tails discarded.
  std::string RenderPrometheus() const;

 private:
  const ServerConfig& config_;
  DatabaseRegistry& registry_;
  mutable absl::Mutex mu_;
  std::unique_ptr<Replica> replica_ ABSL_GUARDED_BY(mu_);
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  // Tails discarded by Replicas that have been replaced since.
  uint64_t tails_discarded_before_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace mentat::server::cluster

#endif  // MENTAT_SERVER_CLUSTER_CLUSTER_MEMBER_H_
