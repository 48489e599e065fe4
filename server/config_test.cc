#include "mentat/server/config.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "test_support.h"

namespace mentat::server {
namespace {

TEST_CASE("config: defaults, flags, environment, file") {
  auto cl = ParseCommandLine({}, {});
  REQUIRE(cl.ok());
  CHECK(cl->config.data_dir == "./data");
  CHECK(cl->config.listen == "127.0.0.1:7878");
  CHECK(cl->config.http == "127.0.0.1:7879");
  CHECK(cl->config.grpc_poll_strategy == "poll");
  CHECK(cl->config.unary_threads == 0);
  CHECK(cl->config.unary_spin_us == 100);

  cl = ParseCommandLine(
      {"--data-dir", "/d", "--listen=unix:/s", "--block-cache", "64M",
       "--no-sync-commits", "--max-concurrent-queries", "8"},
      {});
  REQUIRE_MESSAGE(cl.ok(), cl.status().ToString());
  CHECK(cl->config.data_dir == "/d");
  CHECK(cl->config.listen == "unix:/s");
  CHECK(cl->config.block_cache_bytes == size_t{64} << 20);
  CHECK_FALSE(cl->config.sync_commits);
  CHECK(cl->config.max_concurrent_queries == 8);

  testing::TempDir dir;
  std::filesystem::create_directories(dir.path());
  const std::string file = dir.path() + "/mentatd.conf";
  {
    std::ofstream out(file);
    out << "# comment\n\ndata-dir = /from/file\nhttp = \"\"\n"
           "slow-query-ms = 50\nlisten = 127.0.0.1:1\n";
  }
  // The file, then the environment, then flags.
  cl = ParseCommandLine(
      {"--config", file, "--listen", "127.0.0.1:2"},
      {{"MENTATD_SLOW_QUERY_MS", "75"}, {"MENTATD_DATA_DIR", "/from/env"}});
  REQUIRE_MESSAGE(cl.ok(), cl.status().ToString());
  CHECK(cl->config.data_dir == "/from/env");
  CHECK(cl->config.http.empty());
  CHECK(cl->config.slow_query_ms == 75);
  CHECK(cl->config.listen == "127.0.0.1:2");
  cl = ParseCommandLine({}, {{"MENTATD_CONFIG", file}});
  REQUIRE(cl.ok());
  CHECK(cl->config.data_dir == "/from/file");

  CHECK(ParseCommandLine({"--help"}, {})->help);
  CHECK(ParseCommandLine({"--version"}, {})->version);
  CHECK(UsageText().find("--readers-per-node") != std::string::npos);
  ServerConfig secret;
  secret.auth_token = "hush";
  CHECK(DescribeConfig(secret).find("hush") == std::string::npos);
}

TEST_CASE("config: a cluster node needs etcd and an id, not --replica-of") {
  auto cl = ParseCommandLine({"--cluster", "c", "--etcd", "127.0.0.1:2379",
                              "--node-id", "a", "--lease-ttl", "2"},
                             {});
  REQUIRE_MESSAGE(cl.ok(), cl.status().ToString());
  CHECK(cl->config.cluster == "c");
  CHECK(cl->config.lease_ttl_s == 2);
  CHECK(ParseCommandLine({}, {})->config.lease_ttl_s == 3);
  auto no_etcd = ParseCommandLine({"--cluster", "c", "--node-id", "a"}, {});
  REQUIRE(!no_etcd.ok());
  CHECK(std::string(no_etcd.status().message()).find("--etcd") !=
        std::string::npos);
  auto both = ParseCommandLine({"--cluster", "c", "--etcd", "h:1", "--node-id",
                                "a", "--replica-of", "h:2"},
                               {});
  REQUIRE(!both.ok());
  CHECK(std::string(both.status().message()).find("exclude each other") !=
        std::string::npos);
  auto bad_id = ParseCommandLine(
      {"--cluster", "c", "--etcd", "h:1", "--node-id", "a/b"}, {});
  REQUIRE(!bad_id.ok());
  CHECK(std::string(bad_id.status().message()).find("'/'") !=
        std::string::npos);
  auto alone = ParseCommandLine({"--etcd", "h:1"}, {});
  REQUIRE(!alone.ok());
  CHECK(std::string(alone.status().message()).find("need --cluster") !=
        std::string::npos);
  CHECK(!ParseCommandLine({"--cluster", "c", "--etcd", "h:1", "--node-id", "a",
                           "--lease-ttl", "1"},
                          {})
             .ok());
}

TEST_CASE("config: beyond loopback only with TLS, a token, or on purpose") {
  for (const char* local : {"127.0.0.1:7878", "localhost:1", "[::1]:7878",
                            "unix:/tmp/m.sock", "127.0.0.1:1,unix:/x"}) {
    CAPTURE(local);
    CHECK(ParseCommandLine({"--listen", local}, {}).ok());
  }
  for (const char* open : {"0.0.0.0:7878", "[::]:7878", "10.0.0.5:7878",
                           "127.0.0.1:1,0.0.0.0:2", ":7878"}) {
    CAPTURE(open);
    auto refused = ParseCommandLine({"--listen", open}, {});
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.status().code() == absl::StatusCode::kInvalidArgument);
    const std::string message(refused.status().message());
    CHECK(message.find("--auth-token-file") != std::string::npos);
    CHECK(message.find("--insecure-listen") != std::string::npos);
    CHECK(ParseCommandLine({"--listen", open, "--auth-token", "t"}, {}).ok());
    CHECK(ParseCommandLine({"--listen", open, "--insecure-listen"}, {}).ok());
    CHECK(ParseCommandLine({"--listen", open},
                           {{"MENTATD_AUTH_TOKEN_FILE", "/etc/token"}})
              .ok());
    CHECK(
        ParseCommandLine(
            {"--listen", open, "--tls-cert", "c.pem", "--tls-key", "k.pem"}, {})
            .ok());
  }
  ServerConfig spaced;
  spaced.listen = " a:1 , unix:/b ,";
  CHECK(ListenAddresses(spaced) == std::vector<std::string>{"a:1", "unix:/b"});
}

TEST_CASE("config: errors name the flag") {
  auto bad = ParseCommandLine({"--bogus"}, {});
  CHECK(bad.status().message().find("--bogus") != std::string::npos);
  bad = ParseCommandLine({"--batch-rows", "0"}, {});
  CHECK(bad.status().message().find("--batch-rows") != std::string::npos);
  bad = ParseCommandLine({"--block-cache", "lots"}, {});
  CHECK_FALSE(bad.ok());
  bad = ParseCommandLine({"--data-dir"}, {});
  CHECK(bad.status().message().find("needs a value") != std::string::npos);
  bad = ParseCommandLine({}, {{"MENTATD_SYNC_COMMITS", "maybe"}});
  CHECK(bad.status().message().find("MENTATD_SYNC_COMMITS") !=
        std::string::npos);
  bad = ParseCommandLine({"--tls-cert", "/c"}, {});
  CHECK_FALSE(bad.ok());
  bad = ParseCommandLine({"--log-format", "xml"}, {});
  CHECK_FALSE(bad.ok());
  bad = ParseCommandLine({"--grpc-poll-strategy", "epollex"}, {});
  CHECK(bad.status().message().find(
            "--grpc-poll-strategy takes poll or epoll1, not \"epollex\"") !=
        std::string::npos);
  bad = ParseCommandLine({"--config", "/no/such/file"}, {});
  CHECK_FALSE(bad.ok());

  testing::TempDir dir;
  std::filesystem::create_directories(dir.path());
  const std::string file = dir.path() + "/bad.conf";
  {
    std::ofstream out(file);
    out << "data-dir = /x\nnonsense\n";
  }
  bad = ParseCommandLine({"--config", file}, {});
  CHECK(bad.status().message().find(":2:") != std::string::npos);

  ServerConfig c;
  c.auth_token_file = dir.path() + "/token";
  CHECK_FALSE(LoadAuthToken(&c).ok());
  {
    std::ofstream out(c.auth_token_file);
    out << "  t0ken  \n";
  }
  REQUIRE(LoadAuthToken(&c).ok());
  CHECK(c.auth_token == "t0ken");
}

}  // namespace
}  // namespace mentat::server
