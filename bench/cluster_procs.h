#ifndef MENTAT_BENCH_CLUSTER_PROCS_H_
#define MENTAT_BENCH_CLUSTER_PROCS_H_

// The processes of the cluster benchmarks (failover, chaos): an etcd of
// one member and mentatd cluster nodes on loopback ports, each writing its
// log under the benchmark's directory. Not thread-safe (the benchmark's
// main thread starts and kills them); a Node's stub is.

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "grpcpp/grpcpp.h"
#include "mentat/v1/mentat.grpc.pb.h"

namespace mentat::bench {

int FreePort();
std::string ReadAll(const std::string& path);
// posix_spawn of args[0] with stdout and stderr into `log`; -1 on failure.
pid_t Spawn(const std::vector<std::string>& args, const std::string& log);
// SIGKILL and waitpid. Nothing for pid <= 0.
void KillAndReap(pid_t pid);

struct Etcd {
  pid_t pid = -1;
  std::string endpoint;  // HOST:PORT of its client API
};
// Starts an etcd of one member with its data in dir/etcd; pid -1 if the
// binary does not start.
Etcd StartEtcd(const std::string& etcd_binary, const std::string& dir);

struct ClusterNodeOptions {
  std::string mentatd;
  std::string dir;
  std::string etcd_endpoint;
  int lease_ttl = 3;
  bool sync_commits = true;
  // More mentatd flags (--durability semi-sync ...).
  std::vector<std::string> extra;
};

struct Node {
  std::string id;
  std::string data_dir;
  std::string log;
  pid_t pid = -1;
  std::string address;
  std::unique_ptr<v1::Mentat::Stub> stub;
};

// Starts n as node n->id of cluster "bench" (log dir/<id>.<incarnation>.log)
// and waits up to 30 s for its gRPC port; false (its log on stderr) if it
// does not serve.
bool StartNode(const ClusterNodeOptions& o, int incarnation, Node* n);

// A Transact of `edn` at n with a deadline; its tx in *tx when OK.
grpc::Status Write(Node& n, const std::string& edn, int timeout_ms, int64_t* tx,
                   const std::string& request_id = "");

// True once n has published tx (a read with min_basis_tx, retried for up
// to 60 s while its copy of the database is still bootstrapping).
bool WaitForBasis(Node& n, int64_t tx);

}  // namespace mentat::bench

#endif  // MENTAT_BENCH_CLUSTER_PROCS_H_
