// mentat-bench: the workload suite of ../shared/workload over gRPC.
//
//   mentat-bench gen --scale xs|s|m|l|xl --out DIR [--jobs N]
//   mentat-bench load --data DIR [--address A | --mentatd BIN --server-data D]
//                     [--method import|transact] [--inflight N] [--db NAME]
//   mentat-bench run --data DIR --out OUT [--address A | --mentatd BIN
//                    --server-data D] [--scenarios a,b] [--clients 1,8,32]
//                    [--write-clients 1,16,64] [--write-drive calls|threads]
//                    [--read-drive calls|threads]
//                    [--reps 3] [--min-s 10]
//                    [--duration-s 60] [--sustained-clients 128]
//                    [--mixed-rates 1000,5000] [--mixed-queries q3,since]
//                    [--mixed-writers N]
//                    [--server-cpus L] [--client-cpus L] [--server-arg X]...
//                    [--engine-data DIR]
//   mentat-bench report DIR
//   mentat-bench compare OLD NEW [--threshold 10]
//
// Exit codes: 0 fine, 1 a wrong answer or a regression, 2 usage or I/O.

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "suite/dataset.h"
#include "suite/server_process.h"
#include "suite/suite.h"

namespace mentat::bench {
namespace {

constexpr char kHelp[] =
    "mentat-bench: the benchmark workload (../shared/workload/WORKLOAD.md)\n"
    "end to end through mentatd, every answer checked against the truth.\n"
    "\n"
    "  mentat-bench gen --scale xs|s|m|l|xl --out DIR [--jobs N]\n"
    "      write a dataset (transactions, truth.json, meta.json) to DIR\n"
    "  mentat-bench load --data DIR (--address A | --mentatd BIN\n"
    "                    --server-data D) [--method import|transact]\n"
    "                    [--inflight N] [--db NAME]\n"
    "      load DIR into a running mentatd (A: host:port or unix:/path) or\n"
    "      one the benchmark starts on data directory D\n"
    "  mentat-bench run --data DIR --out OUT (--address A | --mentatd BIN\n"
    "                   --server-data D) [--scenarios a,b,...]\n"
    "                   [--clients 1,8,32] [--write-clients 1,16,64]\n"
    "                   [--write-drive calls|threads]\n"
    "                   [--read-drive calls|threads]\n"
    "                   [--reps 3] [--min-s 10] [--min-samples 30]\n"
    "                   [--warmup-s 0]\n"
    "                   [--duration-s 60]\n"
    "                   [--sustained-clients 128] [--mixed-rates 1000,5000]\n"
    "                   [--mixed-queries q3,since] [--mixed-writers N]\n"
    "                   [--server-cpus L] [--client-cpus L]\n"
    "                   [--query-rpc first|stream] [--client-poll-us 0]\n"
    "                   [--server-arg --flag=value]... [--engine-data DIR]\n"
    "      measure scenarios (default: all of them) and write timings.csv,\n"
    "      checks.txt and env.txt to OUT. Scenarios: bulk_load, ping,\n"
    "      point_lookup, ref_traversal, aggregate, predicate_scan, pull,\n"
    "      as_of, since, input_bindings, fulltext, fulltext_few, paired,\n"
    "      mixed, write, write_mixed, concurrency_sweep, cold_vs_warm,\n"
    "      sustained. --query-rpc: queries through QueryFirst then a\n"
    "      stream for the rest (the clients' way, default) or every query a\n"
    "      Query stream. --write-drive: the write scenario's clients as\n"
    "      calls in flight on gRPC's threads (default) or a thread each\n"
    "      blocked on its call; --read-drive: the same for the read mix\n"
    "      (concurrency_sweep). --client-poll-us: the client's unary calls\n"
    "      poll this long for their answers before sleeping\n"
    "      (ClientOptions::poll_us). --engine-data: paired also runs each\n"
    "      read in this process on DIR, a copy of the server's database\n"
    "      directory (<data-dir>/<db>), and sets the served call against\n"
    "      ping + engine from the same seconds\n"
    "  mentat-bench report OUT\n"
    "      summarise a run in OUT/summary.md, with gnuplot plots\n"
    "  mentat-bench compare OLD NEW [--threshold 10]\n"
    "      compare two runs' p50s; exit 1 if one got worse by more than\n"
    "      the threshold (percent)\n"
    "\n"
    "Exit status: 0 fine, 1 a wrong answer or a regression, 2 usage or I/O.\n"
    "bench/README.md explains each scenario and its figures.\n";

int Usage(const char* why) {
  std::fprintf(stderr,
               "mentat-bench: %s\nusage: mentat-bench gen|load|run|report|"
               "compare ... (mentat-bench --help for more)\n",
               why);
  return 2;
}

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t c = s.find(',', pos);
    if (c == std::string::npos) c = s.size();
    if (c > pos) out.push_back(s.substr(pos, c - pos));
    pos = c + 1;
  }
  return out;
}

std::vector<int> SplitInts(const std::string& s) {
  std::vector<int> out;
  for (const std::string& p : Split(s)) out.push_back(std::stoi(p));
  return out;
}

struct Flags {
  std::map<std::string, std::string> values;
  std::vector<std::string> server_args;
  std::vector<std::string> positional;
  std::string Get(const std::string& k, const std::string& def = "") const {
    auto it = values.find(k);
    return it == values.end() ? def : it->second;
  }
};

Flags ParseFlags(int argc, char** argv, int from) {
  Flags f;
  for (int i = from; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--", 0) == 0) {
      std::string k = a.substr(2), v;
      const size_t eq = k.find('=');
      if (eq != std::string::npos) {
        v = k.substr(eq + 1);
        k = k.substr(0, eq);
      } else if (i + 1 < argc) {
        v = argv[++i];
      }
      if (k == "server-arg") {
        f.server_args.push_back(v);
      } else {
        f.values[k] = v;
      }
    } else {
      f.positional.push_back(a);
    }
  }
  return f;
}

// The first line `command` prints, or "".
std::string FirstLineOf(const std::string& command) {
  std::string out;
  if (std::FILE* p = ::popen(command.c_str(), "r")) {
    char buf[256];
    if (std::fgets(buf, sizeof(buf), p) != nullptr) out = buf;
    ::pclose(p);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) {
    out.pop_back();
  }
  return out;
}

// The server to talk to: one the benchmark starts (--mentatd) or a running
// one (--address).
struct Target {
  std::unique_ptr<ServerProcess> server;
  std::unique_ptr<client::Client> client;
  std::string description;
};

[[nodiscard]] absl::StatusOr<Target> Connect(const Flags& f) {
  Target t;
  client::ClientOptions options;
  options.address = f.Get("address", "127.0.0.1:7878");
  const std::string query_rpc = f.Get("query-rpc", "first");
  if (query_rpc != "first" && query_rpc != "stream") {
    return absl::InvalidArgumentError(
        "--query-rpc: expected first (QueryFirst, then a stream for the "
        "rest) or stream (every query a Query stream), got " +
        query_rpc);
  }
  options.query_first = query_rpc == "first";
  options.poll_us = std::stoi(f.Get("client-poll-us", "0"));
  if (options.poll_us < 0 || options.poll_us > 100000) {
    return absl::InvalidArgumentError(
        "--client-poll-us: expected 0 to 100000 microseconds");
  }
  if (!f.Get("mentatd").empty()) {
    std::string cpus = f.Get("server-cpus");
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (!f.values.count("server-cpus") && n >= 4) {
      cpus = "0-" + std::to_string(n / 2 - 1);
    }
    t.server = std::make_unique<ServerProcess>(
        f.Get("mentatd"), f.Get("server-data", "bench-data"), cpus,
        f.server_args);
    absl::Status s = t.server->Start();
    if (!s.ok()) return s;
    options.address = t.server->address();
    t.description = "started by mentat-bench (" +
                    FirstLineOf("'" + f.Get("mentatd") + "' --version") +
                    ", source " +
                    FirstLineOf("git rev-parse --short HEAD 2>/dev/null") +
                    "): " + t.server->command_line() +
                    (cpus.empty() ? "(unpinned: fewer than 4 CPUs, pinning "
                                    "would halve the server)"
                                  : "");
  } else {
    t.description = "running at " + options.address + " (started elsewhere)";
  }
  auto client = client::Client::Connect(options);
  if (!client.ok()) return client.status();
  t.client = *std::move(client);
  absl::Status s = t.client->WaitForConnected(std::chrono::seconds(30));
  if (!s.ok()) return s;
  return t;
}

int Main(int argc, char** argv) {
  if (argc < 2) return Usage("no subcommand");
  const std::string cmd = argv[1];
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    std::fputs(kHelp, stdout);
    return 0;
  }
  const Flags f = ParseFlags(argc, argv, 2);
  if (cmd == "gen") {
    WorkloadScale scale;
    if (!ScaleByName(f.Get("scale", "xs"), &scale))
      return Usage("unknown --scale");
    if (f.Get("out").empty()) return Usage("gen needs --out DIR");
    absl::Status s =
        GenerateDataset(scale, f.Get("out"), std::stoi(f.Get("jobs", "2")));
    if (!s.ok()) return Usage(s.ToString().c_str());
    auto meta = ReadDatasetMeta(f.Get("out"));
    if (meta.ok()) {
      std::printf(
          "generated scale %s: %lld transactions, %lld datoms, %lld "
          "history changes in %s\n",
          scale.name.c_str(),
          static_cast<long long>(meta->initial_transactions),
          static_cast<long long>(meta->initial_datoms),
          static_cast<long long>(meta->history_changes), f.Get("out").c_str());
    }
    return 0;
  }
  if (cmd == "load") {
    auto target = Connect(f);
    if (!target.ok()) return Usage(target.status().ToString().c_str());
    LoadOptions o;
    o.data = f.Get("data");
    o.database = f.Get("db", "default");
    o.method = f.Get("method", "import");
    o.inflight = std::stoi(f.Get("inflight", "8"));
    absl::Status s = RunLoad(*target->client, o);
    if (!s.ok()) {
      std::fprintf(stderr, "mentat-bench load: %s\n", s.ToString().c_str());
      return s.code() == absl::StatusCode::kDataLoss ? 1 : 2;
    }
    return 0;
  }
  if (cmd == "run") {
    RunOptions o;
    o.client_cpus = f.Get("client-cpus");
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (!f.values.count("client-cpus") && !f.Get("mentatd").empty() && n >= 4) {
      o.client_cpus = std::to_string(n / 2) + "-" + std::to_string(n - 1);
    }
    auto target = Connect(f);
    if (!target.ok()) return Usage(target.status().ToString().c_str());
    absl::Status pin = PinProcess(o.client_cpus);
    if (!pin.ok()) return Usage(pin.ToString().c_str());
    o.data = f.Get("data");
    o.database = f.Get("db", "default");
    o.out = f.Get("out", "bench-results");
    o.scenarios = Split(f.Get("scenarios"));
    if (f.values.count("clients")) o.clients = SplitInts(f.Get("clients"));
    if (f.values.count("write-clients")) {
      o.write_clients = SplitInts(f.Get("write-clients"));
    }
    o.write_drive = f.Get("write-drive", "calls");
    if (o.write_drive != "calls" && o.write_drive != "threads") {
      return Usage("--write-drive: expected calls or threads");
    }
    o.read_drive = f.Get("read-drive", "calls");
    if (o.read_drive != "calls" && o.read_drive != "threads") {
      return Usage("--read-drive: expected calls or threads");
    }
    o.sustained_clients = std::stoi(f.Get("sustained-clients", "128"));
    o.duration_s = std::stod(f.Get("duration-s", "60"));
    if (f.values.count("mixed-rates")) {
      o.mixed_rates = SplitInts(f.Get("mixed-rates"));
    }
    o.mixed_queries = Split(f.Get("mixed-queries"));
    o.mixed_writers = std::stoi(f.Get("mixed-writers", "0"));
    o.reps = std::stoi(f.Get("reps", "3"));
    o.min_s = std::stod(f.Get("min-s", "10"));
    o.min_samples = std::max(1, std::stoi(f.Get("min-samples", "30")));
    o.warmup_s = std::stod(f.Get("warmup-s", "0"));
    o.engine_data = f.Get("engine-data");
    o.server = target->server.get();
    o.server_description = target->description;
    absl::Status s = RunScenarios(*target->client, o);
    if (!s.ok()) {
      std::fprintf(stderr, "mentat-bench run: %s\n", s.ToString().c_str());
      return s.code() == absl::StatusCode::kFailedPrecondition ? 1 : 2;
    }
    return 0;
  }
  if (cmd == "report") {
    if (f.positional.empty()) return Usage("report needs DIR");
    absl::Status s = WriteReport(f.positional[0]);
    if (!s.ok()) return Usage(s.ToString().c_str());
    return 0;
  }
  if (cmd == "compare") {
    if (f.positional.size() != 2) return Usage("compare needs OLD NEW");
    auto n = CompareRuns(f.positional[0], f.positional[1],
                         std::stod(f.Get("threshold", "10")));
    if (!n.ok()) return Usage(n.status().ToString().c_str());
    return *n > 0 ? 1 : 0;
  }
  return Usage(("unknown subcommand " + cmd).c_str());
}

}  // namespace
}  // namespace mentat::bench

int main(int argc, char** argv) {
  // Debian's abseil is built without NDEBUG, so absl::Mutex (gRPC's locks
  // among them) keeps a global lock graph for deadlock detection: about 1%
  // of the client's time at 32 clients. mentatd turns it off the same way.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  return mentat::bench::Main(argc, argv);
}
