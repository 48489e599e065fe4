// The etcd client (server/cluster/etcd_client.h) against a real etcd:
// leases, keys, the leader's create-if-absent transaction, errors that
// name the endpoint, and failover between endpoints.

#include "cluster/etcd_client.h"

#include <doctest/doctest.h>

#include <filesystem>

#include "test_support.h"
#include "testing/etcd_process.h"

namespace mentat::server::testing {
namespace {

using cluster::EtcdClient;

TEST_CASE("etcd client: base64 round-trips every byte") {
  for (std::string s : {std::string(), std::string("a"), std::string("ab"),
                        std::string("abc"), std::string("/mentat/c/leader")}) {
    auto back = cluster::Base64Decode(cluster::Base64Encode(s));
    REQUIRE(back.ok());
    CHECK(*back == s);
  }
  std::string all;
  for (int i = 0; i < 256; ++i) all += static_cast<char>(i);
  CHECK(*cluster::Base64Decode(cluster::Base64Encode(all)) == all);
  CHECK(cluster::Base64Encode("ab") == "YWI=");
  CHECK(!cluster::Base64Decode("a*b").ok());
}

TEST_CASE("etcd client: endpoints parse, and a bad one is named") {
  auto e = EtcdClient::ParseEndpoints("127.0.0.1:2379,http://h:1");
  REQUIRE(e.ok());
  CHECK(e->size() == 2);
  CHECK((*e)[1] == "h:1");
  auto bad = EtcdClient::ParseEndpoints("127.0.0.1:2379,nohost");
  REQUIRE(!bad.ok());
  CHECK(std::string(bad.status().message()).find("'nohost'") !=
        std::string::npos);
}

TEST_CASE("etcd client: an unreachable etcd is Unavailable naming it") {
  const int port = FreeLoopbackPort();
  const std::string endpoint = "127.0.0.1:" + std::to_string(port);
  EtcdClient client({endpoint}, std::chrono::milliseconds(2000));
  auto lease = client.GrantLease(2);
  REQUIRE(!lease.ok());
  CHECK(lease.status().code() == absl::StatusCode::kUnavailable);
  CHECK(std::string(lease.status().message()).find(endpoint) !=
        std::string::npos);
}

TEST_CASE("etcd client: leases, keys, the leader transaction, failover") {
  TempDir dir;
  EtcdProcess etcd(dir.path());
  if (!etcd.available()) {
    MESSAGE(
        "etcd is not installed (deploy/install-deps.sh test installs "
        "etcd-server): skipped");
    return;
  }
  REQUIRE_MESSAGE(etcd.WaitReady(), etcd.log());
  // The first endpoint is dead: every call fails over to the second.
  const std::string dead = "127.0.0.1:" + std::to_string(FreeLoopbackPort());
  EtcdClient client({dead, etcd.endpoint()}, std::chrono::milliseconds(3000));

  auto lease = client.GrantLease(2);
  REQUIRE_MESSAGE(lease.ok(), lease.status().ToString());
  CHECK(lease->ttl_seconds >= 2);
  auto ttl = client.KeepAlive(lease->id);
  REQUIRE_MESSAGE(ttl.ok(), ttl.status().ToString());
  CHECK(*ttl >= 2);

  REQUIRE(client.Put("/t/nodes/a", "addr-a", lease->id).ok());
  REQUIRE(client.Put("/t/nodes/b", "addr-b", 0).ok());
  REQUIRE(client.Put("/t0", "outside", 0).ok());
  auto nodes = client.GetPrefix("/t/nodes/");
  REQUIRE(nodes.ok());
  REQUIRE(nodes->size() == 2);
  CHECK((*nodes)[0].key == "/t/nodes/a");
  CHECK((*nodes)[0].value == "addr-a");
  CHECK((*nodes)[0].lease == lease->id);
  CHECK((*nodes)[1].value == "addr-b");

  auto missing = client.Get("/t/leader");
  REQUIRE(missing.ok());
  CHECK(!missing->has_value());

  // The first campaign creates the key; its create revision is the term.
  auto won = client.CreateIfAbsent("/t/leader", "a", lease->id);
  REQUIRE_MESSAGE(won.ok(), won.status().ToString());
  CHECK(won->created);
  CHECK(won->kv.value == "a");
  CHECK(won->kv.create_revision > 0);
  // A second one finds the holder.
  auto lost = client.CreateIfAbsent("/t/leader", "b", 0);
  REQUIRE(lost.ok());
  CHECK(!lost->created);
  CHECK(lost->kv.value == "a");
  CHECK(lost->kv.create_revision == won->kv.create_revision);

  // Only the holder's revision deletes it.
  auto wrong =
      client.DeleteIfCreatedAt("/t/leader", won->kv.create_revision + 100);
  REQUIRE(wrong.ok());
  CHECK(!*wrong);

  // Revoking the lease removes the keys it holds; keepalive says NotFound.
  REQUIRE(client.RevokeLease(lease->id).ok());
  auto gone = client.KeepAlive(lease->id);
  REQUIRE(!gone.ok());
  CHECK(gone.status().code() == absl::StatusCode::kNotFound);
  auto leader = client.Get("/t/leader");
  REQUIRE(leader.ok());
  CHECK(!leader->has_value());
  nodes = client.GetPrefix("/t/nodes/");
  REQUIRE(nodes.ok());
  CHECK(nodes->size() == 1);

  // The next leader's key has a higher create revision: a higher term.
  auto next = client.CreateIfAbsent("/t/leader", "b", 0);
  REQUIRE(next.ok());
  CHECK(next->created);
  CHECK(next->kv.create_revision > won->kv.create_revision);
  auto deleted =
      client.DeleteIfCreatedAt("/t/leader", next->kv.create_revision);
  REQUIRE(deleted.ok());
  CHECK(*deleted);

  // etcd's own errors are not retried elsewhere and say what etcd said.
  auto bad = client.KeepAlive(12345);
  REQUIRE(!bad.ok());
  CHECK(bad.status().code() == absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace mentat::server::testing
