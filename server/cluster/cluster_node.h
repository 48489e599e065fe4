#ifndef MENTAT_SERVER_CLUSTER_CLUSTER_NODE_H_
#define MENTAT_SERVER_CLUSTER_CLUSTER_NODE_H_

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "cluster/etcd_client.h"
#include "cluster/node_role.h"

namespace mentat::server::cluster {

// What a cluster node asks of its server as its role changes
// (ClusterMember implements it). Called on the election thread, one call
// at a time.
class RoleActions {
 public:
  virtual ~RoleActions() = default;
  // This node won `term`: stop following, and make every database's store
  // write in `term` (Store::Promote). An error leaves the node a candidate
  // and it resigns the leader key.
  [[nodiscard]] virtual absl::Status BecomePrimary(int64_t term) = 0;
  // Follow the primary at `address` (start following, or switch to it).
  virtual void Follow(const std::string& address, int64_t term) = 0;
  // Stop writing at once: every store back to the replica role.
  virtual void StopWriting(const std::string& why) = 0;
  // How far this node has applied (the sum of each database's basis t):
  // the most caught-up node is the one that campaigns.
  virtual int64_t AppliedScore() = 0;
};

// A node of a mentatd cluster (docs/replication.md, phase 2): holds an
// etcd lease, publishes itself under it (/mentat/<cluster>/nodes/<id>:
// address, role, applied score), and campaigns for the leader key
// /mentat/<cluster>/leader (value: id and address) with a create-if-absent
// transaction under its lease when there is no leader and it is the most
// caught-up live node (ties: the smaller id). The winner's term is the
// key's create revision. A primary renews its lease every TTL/4 and takes
// writes only until TTL/2 after the last renewal it sent (NodeRole's
// deadline), so it stops before etcd can let the lease lapse. Everyone
// else follows whoever holds the key, polling it every `poll`.
//
// Two threads: the lease (renewals, the node key) and the election
// (leader key, campaigns, role changes). Thread-safe; Stop once (the
// destructor stops).
class ClusterNode {
 public:
  struct Options {
    std::string cluster;
    std::string node_id;
    // The gRPC address the other nodes reach this one at.
    std::string advertise;
    std::vector<std::string> etcd;
    int64_t lease_ttl_s = 3;
    std::chrono::milliseconds poll{100};
  };

  // Grants the lease (retrying for 5 s while etcd does not answer, then
  // Unavailable naming the endpoints: the node does not start without
  // it) and starts the threads.
  // `role` and `actions` outlive the node.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<ClusterNode>> Start(
      Options options, NodeRole* role, RoleActions* actions);
  ~ClusterNode();
  ClusterNode(const ClusterNode&) = delete;
  ClusterNode& operator=(const ClusterNode&) = delete;

  // Stops the threads; a primary resigns (deletes its leader key, so the
  // next election need not wait for the lease) and the lease is revoked.
  // Writes stop first. Idempotent.
  void Stop();

  // Prometheus text: role, term, elections won, lease losses, leader
  // changes seen, etcd errors.
  std::string RenderPrometheus() const;

 private:
  ClusterNode(Options options, NodeRole* role, RoleActions* actions);
  void LeaseLoop();
  void ElectionLoop();
  // One poll of the leader key and what follows from it.
  void ElectionStep();
  // True if no live node is more caught up than this one.
  [[nodiscard]] bool IsBestCandidate(int64_t my_score);
  void Campaign();
  void PublishSelf(int64_t lease);
  // Sleeps up to `d` unless stopping; false if stopping.
  bool Pause(std::chrono::milliseconds d);
  std::string NodeKey() const;
  std::string LeaderKey() const;
  std::chrono::milliseconds Ttl() const;

  const Options options_;
  NodeRole* const role_;
  RoleActions* const actions_;
  EtcdClient etcd_;

  mutable absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  int64_t lease_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t lease_ttl_s_ ABSL_GUARDED_BY(mu_) = 0;
  // When the last successful renewal (or the grant) was sent.
  std::chrono::steady_clock::time_point renewed_ ABSL_GUARDED_BY(mu_);
  // Election thread only.
  bool primary_ = false;
  int64_t term_ = 0;
  std::string following_;
  int64_t following_term_ = 0;
  int absent_polls_ = 0;
  std::string last_error_;

  std::atomic<uint64_t> elections_won_{0};
  std::atomic<uint64_t> lease_losses_{0};
  std::atomic<uint64_t> leader_changes_{0};
  std::atomic<uint64_t> etcd_errors_{0};
  std::thread lease_thread_;
  std::thread election_thread_;
};

}  // namespace mentat::server::cluster

#endif  // MENTAT_SERVER_CLUSTER_CLUSTER_NODE_H_
