// The consumer of the installed C++ client (find_package_test.py): pings
// the mentatd at argv[1], transacts, queries, and prints what it got.
#include <cstdio>
#include <memory>

#include "mentat/client/client.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: consumer HOST:PORT\n");
    return 2;
  }
  mentat::client::ClientOptions options;
  options.address = argv[1];
  auto client = mentat::client::Client::Connect(options);
  if (!client.ok()) {
    std::fprintf(stderr, "connect: %s\n", client.status().ToString().c_str());
    return 1;
  }
  auto ping = (*client)->Ping();
  if (!ping.ok()) {
    std::fprintf(stderr, "ping: %s\n", ping.status().ToString().c_str());
    return 1;
  }
  mentat::v1::TransactRequest tx;
  tx.set_tx_data(
      "[{:db/ident :app/name :db/valueType :db.type/string "
      ":db/cardinality :db.cardinality/one}]");
  auto committed = (*client)->Transact(tx);
  if (!committed.ok()) {
    std::fprintf(stderr, "transact: %s\n",
                 committed.status().ToString().c_str());
    return 1;
  }
  mentat::v1::QueryRequest query;
  query.set_query("[:find ?e . :where [?e :db/ident :app/name]]");
  long long found = 0;
  absl::Status status =
      (*client)->Query(query, [&](const mentat::v1::QueryResponse& batch) {
        for (const auto& row : batch.rows()) found = row.values(0).long_value();
        return true;
      });
  if (!status.ok()) {
    std::fprintf(stderr, "query: %s\n", status.ToString().c_str());
    return 1;
  }
  std::printf("%s; :app/name is entity %lld\n", ping->server_version().c_str(),
              found);
  return found > 0 ? 0 : 1;
}
