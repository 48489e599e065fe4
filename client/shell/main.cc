// mentat-cli: the interactive shell for mentatd, and its scripting mode.

#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "mentat/client/client.h"
#include "shell/interrupts.h"
#include "shell/result_writer.h"
#include "shell/shell.h"
#include "shell/statement.h"

namespace {

constexpr char kUsage[] =
    "Usage: mentat-cli [OPTIONS]\n"
    "       mentat-cli [--addr ...] [--tls | --tls-ca FILE] health\n"
    "\n"
    "The shell for mentatd. Interactive on a terminal; otherwise it runs the\n"
    "commands given with -c or -f, or read from stdin, and prints only their\n"
    "results. `health` asks the server's grpc.health.v1 service and exits 0\n"
    "when it is serving, 1 otherwise (a container HEALTHCHECK).\n"
    "\n"
    "  --addr HOST:PORT    server address, or unix:/path (default\n"
    "                      127.0.0.1:7878; $MENTAT_ADDR); a cluster's nodes\n"
    "                      separated by commas (--address a,b,c): reads go\n"
    "                      to any node, writes to the primary\n"
    "  --db NAME           database (default \"default\"; $MENTAT_DB)\n"
    "  --token T           bearer token ($MENTAT_TOKEN)\n"
    "  --tls               use TLS with the system's root certificates\n"
    "  --tls-ca FILE       use TLS, trusting the CA certificates in FILE\n"
    "  -c COMMAND          run COMMAND (a .command or EDN); repeatable, in\n"
    "                      order\n"
    "  -f FILE             run the statements in FILE ('-' for stdin)\n"
    "  --format FMT        table (default), edn, json or csv\n"
    "  -t, --tuples-only   no header or row count\n"
    "  --keep-going        go on after a failed statement\n"
    "  --no-pager          never page long results\n"
    "  --inflight N        transactions an .import keeps in flight (4)\n"
    "  -h, --help          this help\n"
    "\n"
    "Exit status: 0 when everything succeeded, 1 when a statement failed,\n"
    "2 for bad usage or when the server cannot be reached.\n";

int Usage(const std::string& problem) {
  std::fprintf(stderr, "mentat-cli: %s\n\n%s", problem.c_str(), kUsage);
  return 2;
}

const char* Env(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : fallback;
}

}  // namespace

int main(int argc, char** argv) {
  using mentat::cli::ScriptReader;
  mentat::cli::ShellOptions options;
  options.client.address = Env("MENTAT_ADDR", "127.0.0.1:7878");
  options.database = Env("MENTAT_DB", "default");
  options.client.token = Env("MENTAT_TOKEN", "");
  std::vector<std::string> commands;
  std::string script;
  bool tuples_only = false;
  bool no_pager = false;
  bool health = false;

  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto value = [&](std::string* out) {
      if (i + 1 >= argc) return false;
      *out = argv[++i];
      return true;
    };
    std::string v;
    if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (arg == "--addr" || arg == "--address" || arg == "-a") {
      if (!value(&options.client.address)) return Usage(arg + " needs a value");
    } else if (arg == "--db" || arg == "-d") {
      if (!value(&options.database)) return Usage(arg + " needs a value");
    } else if (arg == "--token") {
      if (!value(&options.client.token)) return Usage(arg + " needs a value");
    } else if (arg == "--tls") {
      options.client.tls = true;
    } else if (arg == "--tls-ca") {
      if (!value(&options.client.tls_ca_file)) {
        return Usage(arg + " needs a file");
      }
    } else if (arg == "-c" || arg == "--command") {
      if (!value(&v)) return Usage(arg + " needs a command");
      commands.push_back(v);
    } else if (arg == "-f" || arg == "--file") {
      if (!value(&script)) return Usage(arg + " needs a file");
    } else if (arg == "--format") {
      if (!value(&v) ||
          !mentat::cli::ParseOutputFormat(v, &options.style.format)) {
        return Usage("--format takes table, edn, json or csv");
      }
    } else if (arg == "-t" || arg == "--tuples-only") {
      tuples_only = true;
    } else if (arg == "--keep-going") {
      options.keep_going = true;
    } else if (arg == "--no-pager") {
      no_pager = true;
    } else if (arg == "--inflight") {
      if (!value(&v) || std::atoi(v.c_str()) < 1) {
        return Usage("--inflight takes a positive count");
      }
      options.import_inflight = std::atoi(v.c_str());
    } else if (arg == "health") {
      health = true;
    } else {
      return Usage("unknown argument " + arg);
    }
  }
  if (!commands.empty() && !script.empty()) {
    return Usage("give -c commands or -f FILE, not both");
  }

  options.interactive =
      commands.empty() && script.empty() && isatty(STDIN_FILENO);
  options.style.color = options.interactive && isatty(STDOUT_FILENO);
  options.style.header = !tuples_only;
  options.style.row_count = !tuples_only;
  options.pager = options.interactive && !no_pager;
  // A closed pipe (a pager quit early, `| head`) is an error on write, not
  // a signal that kills the shell.
  std::signal(SIGPIPE, SIG_IGN);
  mentat::cli::Interrupts::Install(options.interactive);

  absl::StatusOr<std::unique_ptr<mentat::client::Client>> client =
      mentat::client::Client::Connect(options.client);
  if (!client.ok()) {
    std::fprintf(stderr, "mentat-cli: %s\n",
                 std::string(client.status().message()).c_str());
    return 2;
  }
  if (health) {
    mentat::client::CallOptions call;
    call.timeout = std::chrono::milliseconds(3000);
    absl::Status serving = (*client)->Health(call);
    if (!serving.ok()) {
      std::fprintf(stderr, "mentat-cli: health: %s\n",
                   std::string(serving.message()).c_str());
      return 1;
    }
    std::puts("SERVING");
    return 0;
  }
  mentat::cli::Shell shell(options, std::move(*client));
  absl::Status connected = shell.Connect();
  if (!connected.ok()) {
    std::fprintf(stderr, "mentat-cli: %s\n",
                 std::string(connected.message()).c_str());
    return 2;
  }

  if (options.interactive) return shell.RunInteractive();
  bool ok = true;
  if (!commands.empty()) {
    for (const std::string& command : commands) {
      ScriptReader reader(command);
      if (!shell.RunScript(&reader, "")) {
        ok = false;
        if (!options.keep_going) break;
      }
      if (shell.quit_requested()) break;
    }
  } else if (!script.empty() && script != "-") {
    std::FILE* f = std::fopen(script.c_str(), "r");
    if (f == nullptr) {
      std::fprintf(stderr, "mentat-cli: cannot open %s: %s\n", script.c_str(),
                   std::strerror(errno));
      return 2;
    }
    ScriptReader reader(f);
    ok = shell.RunScript(&reader, script);
    std::fclose(f);
  } else {
    ScriptReader reader(stdin);
    ok = shell.RunScript(&reader, script == "-" ? "stdin" : "");
  }
  if (std::fflush(stdout) != 0) {
    std::fprintf(stderr, "mentat-cli: cannot write the results: %s\n",
                 std::strerror(errno));
    return 1;
  }
  return ok ? 0 : 1;
}
