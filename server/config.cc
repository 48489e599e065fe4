#include "mentat/server/config.h"

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>

#include "mentat/base/str_cat.h"

extern char** environ;

namespace mentat::server {

namespace {

// Whether only this machine can reach `address`: a unix socket, or a
// loopback host (127.0.0.0/8, ::1, localhost).
bool IsLocalAddress(std::string_view address) {
  if (address.starts_with("unix:")) return true;
  const size_t colon = address.rfind(':');
  std::string_view host =
      colon == std::string_view::npos ? address : address.substr(0, colon);
  if (host.starts_with('[') && host.ends_with(']')) {
    host = host.substr(1, host.size() - 2);
  }
  return host == "localhost" || host == "::1" || host.starts_with("127.");
}

// One flag: its name (also the config file key, and MENTATD_<NAME> in the
// environment with '-' as '_'), a help line, and how it sets the config.
struct Flag {
  const char* name;
  const char* arg;  // placeholder in --help; nullptr for a boolean
  const char* help;
  std::function<absl::Status(std::string_view, ServerConfig*)> set;
  std::function<std::string(const ServerConfig&)> get;
};

[[nodiscard]] absl::Status ParseInt(std::string_view name,
                                    std::string_view text, int64_t min,
                                    int64_t max, int64_t* out) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size() || v < min ||
      v > max) {
    return absl::InvalidArgumentError(
        StrCat("--", name, ": expected an integer in [", min, ", ", max,
               "], got \"", text, "\""));
  }
  *out = v;
  return absl::OkStatus();
}

// "512M", "1G", "4096" (bytes) -> bytes.
[[nodiscard]] absl::Status ParseSize(std::string_view name,
                                     std::string_view text, size_t* out) {
  uint64_t mult = 1;
  std::string_view digits = text;
  if (!digits.empty()) {
    switch (digits.back()) {
      case 'k':
      case 'K':
        mult = uint64_t{1} << 10;
        break;
      case 'm':
      case 'M':
        mult = uint64_t{1} << 20;
        break;
      case 'g':
      case 'G':
        mult = uint64_t{1} << 30;
        break;
      default:
        break;
    }
    if (mult != 1) digits.remove_suffix(1);
  }
  int64_t v = 0;
  absl::Status s = ParseInt(name, digits, 0, int64_t{1} << 50, &v);
  if (!s.ok()) {
    return absl::InvalidArgumentError(StrCat(
        "--", name, ": expected a size like 4096, 64K, 512M or 2G, got \"",
        text, "\""));
  }
  *out = static_cast<size_t>(v) * mult;
  return absl::OkStatus();
}

[[nodiscard]] absl::Status ParseBool(std::string_view name,
                                     std::string_view text, bool* out) {
  if (text == "true" || text == "1" || text == "yes" || text == "on") {
    *out = true;
  } else if (text == "false" || text == "0" || text == "no" || text == "off") {
    *out = false;
  } else {
    return absl::InvalidArgumentError(
        StrCat("--", name, ": expected true or false, got \"", text, "\""));
  }
  return absl::OkStatus();
}

Flag StringFlag(const char* name, const char* arg, const char* help,
                std::string ServerConfig::*field) {
  return Flag{name, arg, help,
              [field](std::string_view v, ServerConfig* c) {
                c->*field = std::string(v);
                return absl::OkStatus();
              },
              [field](const ServerConfig& c) { return c.*field; }};
}

template <typename T>
Flag IntFlag(const char* name, const char* help, T ServerConfig::*field,
             int64_t min, int64_t max) {
  return Flag{
      name, "N", help,
      [=](std::string_view v, ServerConfig* c) {
        int64_t x = 0;
        absl::Status s = ParseInt(name, v, min, max, &x);
        if (s.ok()) c->*field = static_cast<T>(x);
        return s;
      },
      [field](const ServerConfig& c) { return std::to_string(c.*field); }};
}

Flag SizeFlag(const char* name, const char* help, size_t ServerConfig::*field) {
  return Flag{
      name, "SIZE", help,
      [=](std::string_view v, ServerConfig* c) {
        return ParseSize(name, v, &(c->*field));
      },
      [field](const ServerConfig& c) { return std::to_string(c.*field); }};
}

Flag BoolFlag(const char* name, const char* help, bool ServerConfig::*field) {
  return Flag{name, nullptr, help,
              [=](std::string_view v, ServerConfig* c) {
                return ParseBool(name, v, &(c->*field));
              },
              [field](const ServerConfig& c) {
                return std::string(c.*field ? "true" : "false");
              }};
}

const std::vector<Flag>& Flags() {
  static const std::vector<Flag>* flags = new std::vector<Flag>{
      StringFlag("data-dir", "DIR",
                 "directory holding one subdirectory per database",
                 &ServerConfig::data_dir),
      StringFlag("listen", "ADDR",
                 "gRPC address: HOST:PORT or unix:/path (comma-separated "
                 "for several)",
                 &ServerConfig::listen),
      StringFlag("http", "HOST:PORT",
                 "HTTP address for /metrics and /healthz (empty: off)",
                 &ServerConfig::http),
      IntFlag("readers-per-node",
              "reader threads per NUMA node (0: one per CPU, at least 2)",
              &ServerConfig::readers_per_node, 0, 1024),
      BoolFlag("pin-readers", "pin reader threads to their node's CPUs",
               &ServerConfig::pin_readers),
      IntFlag("unary-threads",
              "threads serving the unary calls (every call but the "
              "streams; 0: one per CPU, at least 2)",
              &ServerConfig::unary_threads, 0, 1024),
      IntFlag("unary-spin-us",
              "microseconds a unary thread polls after its last call before "
              "it sleeps, so that a vCPU is awake for the next (0: it "
              "sleeps at once)",
              &ServerConfig::unary_spin_us, 0, 100000),
      StringFlag("grpc-poll-strategy", "NAME",
                 "gRPC's poller: poll (a point read is read and answered on "
                 "one thread) or epoll1 (for many thousands of connections)",
                 &ServerConfig::grpc_poll_strategy),
      BoolFlag("inline-point-reads",
               "run single-entity Pulls on the gRPC thread",
               &ServerConfig::inline_point_reads),
      IntFlag("max-concurrent-queries",
              "queries running at once before RESOURCE_EXHAUSTED",
              &ServerConfig::max_concurrent_queries, 1, 1 << 20),
      SizeFlag("query-memory", "memory budget of one query",
               &ServerConfig::query_memory_bytes),
      IntFlag("query-timeout-ms",
              "time limit of a query or pull that sets no deadline (0: none)",
              &ServerConfig::query_timeout_ms, 0, int64_t{1} << 40),
      IntFlag("query-timeout-max-ms",
              "longest time limit a call may ask for (0: no ceiling)",
              &ServerConfig::query_timeout_max_ms, 0, int64_t{1} << 40),
      IntFlag("query-scan-limit",
              "datoms and rows one query or pull may step through (0: none)",
              &ServerConfig::query_scan_limit, 0, int64_t{1} << 62),
      SizeFlag("pull-max-bytes",
               "largest pull result as the server builds it (0: no cap)",
               &ServerConfig::pull_max_bytes),
      IntFlag("batch-rows", "rows per Query stream message",
              &ServerConfig::batch_rows, 1, 100000),
      IntFlag("slow-query-ms", "log queries slower than this",
              &ServerConfig::slow_query_ms, 0, int64_t{1} << 40),
      IntFlag("max-message-bytes", "largest gRPC message",
              &ServerConfig::max_message_bytes, 1024, 1 << 30),
      SizeFlag("block-cache", "RocksDB block cache per database",
               &ServerConfig::block_cache_bytes),
      SizeFlag("entity-cache",
               "cache of decoded entities per database (0: off)",
               &ServerConfig::entity_cache_bytes),
      BoolFlag("warm-entity-cache",
               "fill the entity cache in the background when a database "
               "opens",
               &ServerConfig::warm_entity_cache),
      SizeFlag("value-cache",
               "cache of attribute-and-value lookups per database (0: off)",
               &ServerConfig::value_cache_bytes),
      SizeFlag("column-cache",
               "columns of attributes read in bulk per database (0: off)",
               &ServerConfig::column_cache_bytes),
      SizeFlag("memtable-budget",
               "memory of all memtables together per database",
               &ServerConfig::memtable_budget_bytes),
      SizeFlag("import-memory",
               "working memory of one bulk import into an empty database "
               "(its chunks of keys, filter and summary)",
               &ServerConfig::import_memory_bytes),
      BoolFlag("sync-commits", "fsync every group commit before answering",
               &ServerConfig::sync_commits),
      SizeFlag("transactor-queue",
               "transactions queued per database before RESOURCE_EXHAUSTED",
               &ServerConfig::transactor_queue),
      IntFlag("idempotency-window",
              "seconds a Transact request_id keeps its result",
              &ServerConfig::idempotency_window_s, 0, int64_t{1} << 40),
      SizeFlag("idempotency-cache",
               "recent Transact results kept in memory with tempids",
               &ServerConfig::idempotency_cache_entries),
      IntFlag("resume-window",
              "seconds a stream's database value stays resumable",
              &ServerConfig::resume_window_s, 0, int64_t{1} << 40),
      StringFlag("tls-cert", "FILE", "TLS certificate chain (PEM)",
                 &ServerConfig::tls_cert),
      StringFlag("tls-key", "FILE", "TLS private key (PEM)",
                 &ServerConfig::tls_key),
      StringFlag("auth-token", "TOKEN",
                 "bearer token every RPC but health must carry",
                 &ServerConfig::auth_token),
      StringFlag("auth-token-file", "FILE", "read the bearer token from FILE",
                 &ServerConfig::auth_token_file),
      BoolFlag("insecure-listen",
               "serve gRPC beyond loopback with neither TLS nor a token "
               "(otherwise such a --listen is refused)",
               &ServerConfig::insecure_listen),
      StringFlag("log-format", "text|json", "log line format",
                 &ServerConfig::log_format),
      StringFlag("log-level", "LEVEL", "trace, debug, info, warn or error",
                 &ServerConfig::log_level),
      IntFlag("shutdown-grace-ms", "how long shutdown waits for running calls",
              &ServerConfig::shutdown_grace_ms, 0, int64_t{1} << 40),
      StringFlag("backup-dir", "DIR",
                 "Backup RPC destinations must lie under DIR (empty: any)",
                 &ServerConfig::backup_dir),
      BoolFlag("create-default", "create the database \"default\" if missing",
               &ServerConfig::create_default_database),
      IntFlag("max-connections",
              "gRPC connections open at once before new ones are refused "
              "(0: as many as descriptors allow)",
              &ServerConfig::max_connections, 0, 1 << 30),
      IntFlag("reserved-fds",
              "descriptors kept free for the databases: connections that "
              "would take them are refused",
              &ServerConfig::reserved_fds, 0, 1 << 20),
      SizeFlag("max-value-bytes",
               "largest value in tx-data (0: a quarter of "
               "--max-message-bytes; at most half of it)",
               &ServerConfig::max_value_bytes),
      StringFlag("replica-of", "HOST:PORT",
                 "run as a read replica of the primary at HOST:PORT (empty: "
                 "primary)",
                 &ServerConfig::replica_of),
      StringFlag("primary-token", "TOKEN",
                 "bearer token a replica sends to its primary",
                 &ServerConfig::primary_token),
      StringFlag("primary-token-file", "FILE",
                 "read the primary's bearer token from FILE",
                 &ServerConfig::primary_token_file),
      BoolFlag("primary-tls",
               "a replica reaches its primary over TLS (system roots)",
               &ServerConfig::primary_tls),
      StringFlag("primary-tls-ca", "FILE",
                 "a replica reaches its primary over TLS, trusting the CA "
                 "certificates in FILE",
                 &ServerConfig::primary_tls_ca),
      StringFlag("cluster", "NAME",
                 "join cluster NAME: elect a primary through etcd, fail "
                 "over when it dies (needs --etcd and --node-id)",
                 &ServerConfig::cluster),
      StringFlag("etcd", "HOST:PORT,...",
                 "etcd's client endpoints (the cluster's leader key)",
                 &ServerConfig::etcd),
      StringFlag("node-id", "ID", "this node's name in its cluster",
                 &ServerConfig::node_id),
      StringFlag("advertise", "HOST:PORT",
                 "the gRPC address the cluster's other nodes reach this one "
                 "at (default: the first --listen address, bound port)",
                 &ServerConfig::advertise),
      IntFlag("lease-ttl", "the etcd lease of a cluster node, in seconds",
              &ServerConfig::lease_ttl_s, 2, 3600),
      StringFlag("durability", "MODE",
                 "async: Transact answers after the primary's commit; "
                 "semi-sync: after a replica also has it durably",
                 &ServerConfig::durability),
      IntFlag("semi-sync-timeout-ms",
              "with --durability semi-sync, how long a Transact waits for a "
              "replica before it answers DEADLINE_EXCEEDED (committed on the "
              "primary only)",
              &ServerConfig::semi_sync_timeout_ms, 1, int64_t{1} << 40),
      IntFlag("max-basis-wait-ms",
              "longest a read with min_basis_tx waits for its basis",
              &ServerConfig::max_basis_wait_ms, 0, int64_t{1} << 40),
      IntFlag("reader-idle-ms",
              "a spare reader thread exits after this long without work",
              &ServerConfig::reader_idle_ms, 1, int64_t{1} << 40),
  };
  return *flags;
}

const Flag* FindFlag(std::string_view name) {
  for (const Flag& f : Flags()) {
    if (name == f.name) return &f;
  }
  return nullptr;
}

std::string EnvName(std::string_view flag) {
  std::string env = "MENTATD_";
  for (char c : flag) {
    env.push_back(c == '-' ? '_' : static_cast<char>(std::toupper(c)));
  }
  return env;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

[[nodiscard]] absl::Status ApplyConfigFile(const std::string& path,
                                           ServerConfig* config) {
  std::ifstream in(path);
  if (!in) {
    return absl::InvalidArgumentError(StrCat("--config: cannot read ", path));
  }
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    std::string_view l = Trim(line);
    if (l.empty() || l[0] == '#') continue;
    const size_t eq = l.find('=');
    if (eq == std::string_view::npos) {
      return absl::InvalidArgumentError(StrCat(
          path, ":", line_no, ": expected \"name = value\", got \"", l, "\""));
    }
    std::string_view key = Trim(l.substr(0, eq));
    std::string_view value = Trim(l.substr(eq + 1));
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
      value = value.substr(1, value.size() - 2);
    }
    const Flag* flag = FindFlag(key);
    if (flag == nullptr) {
      return absl::InvalidArgumentError(
          StrCat(path, ":", line_no, ": unknown setting \"", key, "\""));
    }
    absl::Status s = flag->set(value, config);
    if (!s.ok()) {
      return absl::InvalidArgumentError(
          StrCat(path, ":", line_no, ": ", s.message()));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<CommandLine> ParseCommandLine(
    const std::vector<std::string>& args,
    const std::map<std::string, std::string>& env) {
  CommandLine cl;
  // The config file comes first so that the environment and flags override
  // it; find it before applying anything else.
  std::string config_path;
  if (auto it = env.find("MENTATD_CONFIG"); it != env.end()) {
    config_path = it->second;
  }
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--config" && i + 1 < args.size()) {
      config_path = args[i + 1];
    } else if (args[i].starts_with("--config=")) {
      config_path = args[i].substr(9);
    }
  }
  if (!config_path.empty()) {
    absl::Status s = ApplyConfigFile(config_path, &cl.config);
    if (!s.ok()) return s;
  }
  for (const Flag& f : Flags()) {
    auto it = env.find(EnvName(f.name));
    if (it == env.end()) continue;
    absl::Status s = f.set(it->second, &cl.config);
    if (!s.ok()) {
      return absl::InvalidArgumentError(
          StrCat(EnvName(f.name), ": ", s.message()));
    }
  }
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (arg == "--help" || arg == "-h") {
      cl.help = true;
      continue;
    }
    if (arg == "--version") {
      cl.version = true;
      continue;
    }
    if (!arg.starts_with("--")) {
      return absl::InvalidArgumentError(
          StrCat("unexpected argument \"", arg, "\" (see --help)"));
    }
    arg.remove_prefix(2);
    std::string_view name = arg;
    std::optional<std::string> value;
    if (size_t eq = arg.find('='); eq != std::string_view::npos) {
      name = arg.substr(0, eq);
      value = std::string(arg.substr(eq + 1));
    }
    if (name == "config") {
      if (!value) ++i;
      continue;
    }
    const Flag* flag = FindFlag(name);
    bool negated = false;
    if (flag == nullptr && name.starts_with("no-")) {
      flag = FindFlag(name.substr(3));
      negated = flag != nullptr && flag->arg == nullptr;
      if (!negated) flag = nullptr;
    }
    if (flag == nullptr) {
      return absl::InvalidArgumentError(
          StrCat("unknown flag --", name, " (see --help)"));
    }
    if (!value) {
      if (flag->arg == nullptr) {
        value = negated ? "false" : "true";
      } else if (i + 1 < args.size()) {
        value = args[++i];
      } else {
        return absl::InvalidArgumentError(StrCat("--", name, " needs a value"));
      }
    }
    absl::Status s = flag->set(*value, &cl.config);
    if (!s.ok()) return s;
  }
  const ServerConfig& c = cl.config;
  if (c.log_format != "text" && c.log_format != "json") {
    return absl::InvalidArgumentError(StrCat(
        "--log-format: expected text or json, got \"", c.log_format, "\""));
  }
  if (c.tls_cert.empty() != c.tls_key.empty()) {
    return absl::InvalidArgumentError("--tls-cert and --tls-key go together");
  }
  if (c.listen.empty()) {
    return absl::InvalidArgumentError("--listen must not be empty");
  }
  if (c.tls_cert.empty() && c.auth_token.empty() && c.auth_token_file.empty() &&
      !c.insecure_listen) {
    for (const std::string& address : ListenAddresses(c)) {
      if (IsLocalAddress(address)) continue;
      return absl::InvalidArgumentError(StrCat(
          "--listen ", address,
          " serves beyond this machine with neither TLS nor a token: anyone "
          "who reaches the port could read and write every database. Give "
          "mentatd a token (--auth-token-file FILE, or MENTATD_AUTH_TOKEN_FILE;"
          " e.g. `head -c 32 /dev/urandom | base64 > FILE`) or TLS "
          "(--tls-cert and --tls-key), listen on 127.0.0.1 or a unix: "
          "socket, or pass --insecure-listen on a network you trust"));
    }
  }
  if (c.grpc_poll_strategy != "poll" && c.grpc_poll_strategy != "epoll1") {
    return absl::InvalidArgumentError(
        StrCat("--grpc-poll-strategy takes poll or epoll1, not \"",
               c.grpc_poll_strategy, "\""));
  }
  if (c.durability != "async" && c.durability != "semi-sync") {
    return absl::InvalidArgumentError(StrCat(
        "--durability takes async or semi-sync, not \"", c.durability, "\""));
  }
  if (!c.cluster.empty()) {
    if (c.etcd.empty() || c.node_id.empty()) {
      return absl::InvalidArgumentError(
          "--cluster needs --etcd HOST:PORT[,...] and --node-id ID");
    }
    if (!c.replica_of.empty()) {
      return absl::InvalidArgumentError(
          "--cluster and --replica-of exclude each other: in a cluster the "
          "node follows whoever etcd says is primary");
    }
    for (char ch : c.cluster + c.node_id) {
      if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-' &&
          ch != '_' && ch != '.') {
        return absl::InvalidArgumentError(StrCat(
            "--cluster and --node-id take letters, digits, '-', '_' and '.' "
            "(they name keys in etcd), not '",
            std::string(1, ch), "'"));
      }
    }
  } else if (!c.etcd.empty() || !c.node_id.empty() || !c.advertise.empty()) {
    return absl::InvalidArgumentError(
        "--etcd, --node-id and --advertise need --cluster NAME");
  }
  if (c.max_value_bytes > static_cast<size_t>(c.max_message_bytes) / 2) {
    return absl::InvalidArgumentError(StrCat(
        "--max-value-bytes (", c.max_value_bytes,
        ") must be at most half of --max-message-bytes (", c.max_message_bytes,
        "), so that every datom fits in a stream message"));
  }
  return cl;
}

std::vector<std::string> ListenAddresses(const ServerConfig& config) {
  std::vector<std::string> out;
  std::stringstream in(config.listen);
  std::string item;
  while (std::getline(in, item, ',')) {
    while (!item.empty() && item.front() == ' ') item.erase(0, 1);
    while (!item.empty() && item.back() == ' ') item.pop_back();
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

size_t MaxValueBytes(const ServerConfig& config) {
  if (config.max_value_bytes > 0) return config.max_value_bytes;
  return static_cast<size_t>(config.max_message_bytes) / 4;
}

std::map<std::string, std::string> ProcessEnvironment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string_view kv(*e);
    const size_t eq = kv.find('=');
    if (eq == std::string_view::npos) continue;
    if (!kv.starts_with("MENTATD_")) continue;
    env.emplace(std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1)));
  }
  return env;
}

std::string UsageText() {
  const ServerConfig defaults;
  std::string out =
      "Usage: mentatd [flags]\n"
      "\n"
      "mentatd serves Datomic-style databases over gRPC (mentat.v1).\n"
      "Every flag can also be set by the environment variable MENTATD_<FLAG>\n"
      "(--data-dir: MENTATD_DATA_DIR) or in a config file (--config FILE or\n"
      "MENTATD_CONFIG: one \"flag-name = value\" per line, '#' comments).\n"
      "Flags override the environment, which overrides the file.\n"
      "\n"
      "  --help                 this text\n"
      "  --version              print the version\n"
      "  --config FILE          read settings from FILE\n";
  for (const Flag& f : Flags()) {
    std::string left = StrCat("  --", f.name);
    if (f.arg != nullptr) StrAppend(&left, " ", f.arg);
    if (left.size() < 25)
      left.resize(25, ' ');
    else
      left += "  ";
    StrAppend(&out, left, f.help, " (default: ", f.get(defaults), ")\n");
  }
  return out;
}

std::string DescribeConfig(const ServerConfig& config) {
  std::string out;
  for (const Flag& f : Flags()) {
    std::string v = f.get(config);
    if ((std::string_view(f.name) == "auth-token" ||
         std::string_view(f.name) == "primary-token") &&
        !v.empty()) {
      v = "<set>";
    }
    if (!out.empty()) out += " ";
    StrAppend(&out, f.name, "=", v);
  }
  return out;
}

namespace {

[[nodiscard]] absl::Status ReadTokenFile(std::string_view flag,
                                         const std::string& file,
                                         std::string* token_out) {
  if (file.empty()) return absl::OkStatus();
  std::ifstream in(file);
  if (!in) {
    return absl::InvalidArgumentError(
        StrCat("--", flag, ": cannot read ", file));
  }
  std::string line;
  std::getline(in, line);
  std::string_view token = Trim(line);
  if (token.empty()) {
    return absl::InvalidArgumentError(
        StrCat("--", flag, ": ", file, " holds no token"));
  }
  *token_out = std::string(token);
  return absl::OkStatus();
}

}  // namespace

absl::Status LoadAuthToken(ServerConfig* config) {
  absl::Status s = ReadTokenFile("auth-token-file", config->auth_token_file,
                                 &config->auth_token);
  if (!s.ok()) return s;
  return ReadTokenFile("primary-token-file", config->primary_token_file,
                       &config->primary_token);
}

}  // namespace mentat::server
