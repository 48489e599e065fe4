#ifndef MENTAT_SERVER_CLUSTER_ETCD_CLIENT_H_
#define MENTAT_SERVER_CLUSTER_ETCD_CLIENT_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace mentat::server::cluster {

// One key of etcd as a range read returns it.
struct EtcdKeyValue {
  std::string key;
  std::string value;
  // The revision that created the key (0: it does not exist). Unique and
  // increasing across every key of the cluster, so a key created again
  // after it was deleted (a new leader) has a higher one: the term.
  int64_t create_revision = 0;
  int64_t mod_revision = 0;
  int64_t lease = 0;
};

// What CreateIfAbsent found.
struct EtcdCreateResult {
  // True if this call created the key.
  bool created = false;
  // The key as it stands after the call (ours when created, else the
  // holder's; create_revision 0 if the key vanished in between).
  EtcdKeyValue kv;
};

// A small client of etcd's v3 API through its JSON gateway (HTTP/1.1 POST
// of JSON to /v3/..., keys and values base64; docs/replication.md says why
// not its gRPC API). Each call opens a connection to an endpoint, sends one
// request and reads one answer, bounded by the call timeout; a call that
// cannot reach an endpoint (refused, timed out, not an answer from etcd)
// tries the next one, and the endpoint that answered is tried first next
// time. An error etcd itself gives (a lease not found, a bad request) is
// not retried elsewhere.
//
// Errors: Unavailable naming every endpoint tried and why each failed;
// NotFound for a lease etcd does not know (expired or revoked);
// InvalidArgument or FailedPrecondition for other errors etcd answers,
// with etcd's message and the endpoint's path.
//
// Thread-safe (one mutex around the preferred endpoint; calls run in
// parallel).
class EtcdClient {
 public:
  // `endpoints`: "host:port" each, at least one. `timeout` bounds each
  // attempt (connect, write, read).
  EtcdClient(std::vector<std::string> endpoints,
             std::chrono::milliseconds timeout);

  // Parses "host:port,host:port" (InvalidArgument naming the bad part).
  [[nodiscard]] static absl::StatusOr<std::vector<std::string>> ParseEndpoints(
      const std::string& list);

  // A lease of `ttl_seconds` (etcd may raise it to its minimum): its id
  // and the TTL granted.
  struct Lease {
    int64_t id = 0;
    int64_t ttl_seconds = 0;
  };
  [[nodiscard]] absl::StatusOr<Lease> GrantLease(int64_t ttl_seconds);
  // Renews `lease` for its TTL; the TTL it now has. NotFound once it
  // expired or was revoked.
  [[nodiscard]] absl::StatusOr<int64_t> KeepAlive(int64_t lease);
  // Revokes `lease` and deletes the keys it holds. OK if already gone.
  [[nodiscard]] absl::Status RevokeLease(int64_t lease);

  // The key, or nullopt if it does not exist.
  [[nodiscard]] absl::StatusOr<std::optional<EtcdKeyValue>> Get(
      const std::string& key);
  // Every key that starts with `prefix`, in key order.
  [[nodiscard]] absl::StatusOr<std::vector<EtcdKeyValue>> GetPrefix(
      const std::string& prefix);
  // Puts `key` (attached to `lease` unless 0).
  [[nodiscard]] absl::Status Put(const std::string& key,
                                 const std::string& value, int64_t lease);
  // One transaction: creates `key` = `value` under `lease` only if the key
  // does not exist (create_revision == 0); else reads it.
  [[nodiscard]] absl::StatusOr<EtcdCreateResult> CreateIfAbsent(
      const std::string& key, const std::string& value, int64_t lease);
  // Deletes `key` if it was created at `create_revision` (a leader that
  // resigns deletes its own key, never a successor's). True if deleted.
  [[nodiscard]] absl::StatusOr<bool> DeleteIfCreatedAt(const std::string& key,
                                                       int64_t create_revision);

  const std::vector<std::string>& endpoints() const { return endpoints_; }

 private:
  // POSTs `body` to `path` on the preferred endpoint, then the others;
  // the response body of the first that answers with etcd's JSON.
  [[nodiscard]] absl::StatusOr<std::string> Call(const std::string& path,
                                                 const std::string& body);
  [[nodiscard]] absl::StatusOr<std::string> CallOne(
      const std::string& endpoint, const std::string& path,
      const std::string& body) const;

  const std::vector<std::string> endpoints_;
  const std::chrono::milliseconds timeout_;
  absl::Mutex mu_;
  size_t preferred_ ABSL_GUARDED_BY(mu_) = 0;
};

// Base64 (RFC 4648, with padding), as etcd's gateway spells bytes.
std::string Base64Encode(const std::string& bytes);
// InvalidArgument for text that is not base64.
[[nodiscard]] absl::StatusOr<std::string> Base64Decode(const std::string& text);

}  // namespace mentat::server::cluster

#endif  // MENTAT_SERVER_CLUSTER_ETCD_CLIENT_H_
