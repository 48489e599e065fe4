// mentat-bench report and compare.

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "mentat/base/str_cat.h"
#include "suite/suite.h"

namespace mentat::bench {
namespace {

struct Row {
  std::string scenario, scale, op;
  int clients = 0;
  int64_t count = 0, errors = 0;
  double p50 = 0, p95 = 0, p99 = 0, max = 0, throughput = 0;
};

[[nodiscard]] absl::StatusOr<std::vector<Row>> ReadTimings(
    const std::string& dir) {
  std::ifstream in(dir + "/timings.csv");
  if (!in)
    return absl::NotFoundError(StrCat("cannot read ", dir, "/timings.csv"));
  std::vector<Row> rows;
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) f.push_back(cell);
    if (f.size() < 14) continue;
    Row r;
    r.scenario = f[0];
    r.scale = f[2];
    r.clients = std::stoi(f[4]);
    r.op = f[5];
    r.count = std::stoll(f[6]);
    r.p50 = std::stod(f[7]);
    r.p95 = std::stod(f[8]);
    r.p99 = std::stod(f[9]);
    r.max = std::stod(f[10]);
    r.throughput = std::stod(f[11]);
    r.errors = std::stoll(f[12]);
    rows.push_back(r);
  }
  return rows;
}

// The anchors of WORKLOAD.md (pg v1.10 s / m; emb v1.10 s / m) and the
// goal of DESIGN.md, per scenario.
const std::map<std::string, std::pair<std::string, std::string>>& Anchors() {
  static const auto* anchors =
      new std::map<std::string, std::pair<std::string, std::string>>{
          {"ping",
           {"bare gRPC unary call 0.063-0.077 ms p50 (DESIGN.md, 2 cores)",
            "the floor under every RPC"}},
          {"point_lookup",
           {"pg 0.19 / 0.19 ms; emb 0.019 / 0.019 ms",
            "<10 us in server; within 15 us of a bare gRPC call"}},
          {"ref_traversal",
           {"pg 0.92 / 1.13 ms; emb 22.6 / 290 ms", "p50 < 0.15 ms"}},
          {"aggregate",
           {"pg 9.2 / 58 ms; emb 31 / 372 ms", "< 1 ms (statistics)"}},
          {"predicate_scan",
           {"pg 49 / 613 ms; emb 24 / 275 ms", "< 60 ms (m)"}},
          {"pull", {"pg 0.85 / 0.88 ms; emb 0.036 / 0.044 ms", "as q1"}},
          {"as_of", {"pg 1.6 / 2.0 ms; emb 88 / 1040 ms", "p50 < 0.25 ms"}},
          {"since", {"pg 1.9 / 3.0 ms; emb 4.2 / 52 ms", "p50 < 1 ms"}},
          {"input_bindings",
           {"pg 0.81 / 0.92 ms; emb 0.38 / 2.1 ms", "p50 < 0.15 ms"}},
          {"fulltext", {"-", "about 1% of the issues (+crash +12*)"}},
          {"fulltext_few", {"-", "p50 < 5 ms at m (issue 21)"}},
          {"bulk_load",
           {"pg 131-206K datoms/s (128 vCPU); emb 42-55K datoms/s (v1.9)",
            "500K datoms/s import; 100K via Transact"}},
          {"write",
           {"pg 0.5-1.3K tx/s, p99 1-11 ms",
            "20K tx/s at 64 writers; p99 < 5 ms"}},
          {"write_mixed", {"-", "readers keep their throughput"}},
          {"concurrency_sweep",
           {"pg 32.6K / 30.7K ops/s at 32 clients (32 vCPU); emb 2.1K / 157",
            "15K ops/s; 128 clients >= 90% of peak"}},
          {"cold_vs_warm",
           {"emb store open 45 / 50 ms", "open < 100 ms; first query < 10 ms"}},
          {"sustained", {"-", "no drift; errors 0"}},
      };
  return *anchors;
}

// The mixed scenario's table (mixed.csv), if the run has one: one line per
// (query, rate) beside the quiet figure, and the writer's figures.
void WriteMixedSection(const std::string& dir, std::ofstream& md) {
  std::ifstream in(dir + "/mixed.csv");
  std::string line;
  if (!in || !std::getline(in, line)) return;  // header
  md << "\n## Reads under a writer (mixed)\n\n"
     << "Each read at 1 client while a writer commits at the rate into "
        ":issue/state and :issue/priority; quiet: the same read in this run "
        "without the writer. Goal (issue 18), at 1K tx/s: q3 and q4 p50 "
        "within 1.5x of quiet; since p50 under 1 ms, p99 under 5 ms.\n\n"
     << "| query | rate tx/s | achieved | writers | write p50 / p99 | p50 | "
        "p95 | p99 | quiet p50 / p95 / p99 | p50 ratio | p99 ratio |\n"
     << "|---|---:|---:|---:|---|---:|---:|---:|---|---:|---:|\n";
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) f.push_back(cell);
    if (f.size() < 16) continue;
    auto d = [&](size_t i) { return std::stod(f[i]); };
    char out[512];
    std::snprintf(out, sizeof(out),
                  "| %s | %s | %.0f | %s | %.3f / %.3f | %.3f | %.3f | %.3f | "
                  "%.3f / %.3f / %.3f | %.2fx | %.2fx |\n",
                  f[0].c_str(), f[1].c_str(), d(3), f[2].c_str(), d(4), d(5),
                  d(7), d(8), d(9), d(10), d(11), d(12), d(13), d(15));
    md << out;
  }
}

bool HaveGnuplot() {
  return std::system("command -v gnuplot >/dev/null 2>&1") == 0;
}

}  // namespace

absl::Status WriteReport(const std::string& dir) {
  auto rows = ReadTimings(dir);
  if (!rows.ok()) return rows.status();
  std::ofstream md(dir + "/summary.md", std::ios::trunc);
  const std::string scale = rows->empty() ? "?" : (*rows)[0].scale;
  const Row* ping = nullptr;
  for (const Row& r : *rows) {
    if (r.scenario == "ping" && ping == nullptr) ping = &r;
  }
  md << "# mentat-bench results, scale " << scale << "\n\n"
     << "Medians over the reps; latencies in ms. Anchors from "
        "`WORKLOAD.md` (pg_mentat and embedded Mentat v1.10, scale s / m); "
        "goals from `DESIGN.md` (scale m). Environment in `env.txt`, checks "
        "in `checks.txt`.\n\n";
  if (ping != nullptr) {
    char line[512];
    std::snprintf(line, sizeof(line),
                  "**Floor:** `ping`, the cheapest RPC through the same "
                  "client path (checks the token, touches no database): p50 "
                  "%.3f, p95 %.3f, p99 %.3f ms, %.0f calls/s at 1 client. "
                  "Every latency below includes one such call; `- ping` is "
                  "a 1-client p50 less the floor's.\n\n",
                  ping->p50, ping->p95, ping->p99, ping->throughput);
    md << line;
  } else {
    md << "(No floor: the run did not measure `ping`.)\n\n";
  }
  md << "| scenario | op | clients | count | p50 | - ping | p95 | p99 | max | "
        "ops/s | errors | anchors (s / m) | goal |\n"
     << "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|\n";
  for (const Row& r : *rows) {
    auto it = Anchors().find(r.scenario);
    std::string above;
    if (ping != nullptr && &r != ping && r.clients == 1 &&
        r.scenario != "bulk_load" && r.op.rfind("write", 0) != 0) {
      char buf[32];
      std::snprintf(buf, sizeof(buf), "%.3f", r.p50 - ping->p50);
      above = buf;
    }
    char line[640];
    std::snprintf(line, sizeof(line),
                  "| %s | %s | %d | %lld | %.3f | %s | %.3f | %.3f | %.3f | "
                  "%.0f | %lld | %s | %s |\n",
                  r.scenario.c_str(), r.op.c_str(), r.clients,
                  static_cast<long long>(r.count), r.p50, above.c_str(), r.p95,
                  r.p99, r.max, r.throughput, static_cast<long long>(r.errors),
                  it == Anchors().end() ? "" : it->second.first.c_str(),
                  it == Anchors().end() ? "" : it->second.second.c_str());
    md << line;
  }
  WriteMixedSection(dir, md);
  {
    std::ifstream checks(dir + "/checks.txt");
    md << "\n## Checks\n\n```\n" << checks.rdbuf() << "```\n";
  }
  if (!HaveGnuplot()) {
    md << "\n(No plots: gnuplot is not installed.)\n";
    std::printf(
        "report: gnuplot not found; plots skipped (apt-get install "
        "gnuplot-nox)\n");
    return absl::OkStatus();
  }
  // Data files and a script, run in the directory (relative paths only).
  int latency_points = 0, sweep_points = 0;
  {
    std::ofstream lat(dir + "/latency.dat", std::ios::trunc);
    for (const Row& r : *rows) {
      if (r.clients == 1 && r.p50 > 0 && r.scenario != "bulk_load" &&
          r.scenario != "cold_vs_warm" && r.scenario != "mixed") {
        lat << r.scenario << "/" << r.op << " " << r.p50 << " " << r.p95 << " "
            << r.p99 << "\n";
        latency_points++;
      }
    }
    std::ofstream sweep(dir + "/sweep.dat", std::ios::trunc);
    for (const Row& r : *rows) {
      if (r.scenario == "concurrency_sweep") {
        sweep << r.clients << " " << r.throughput << " " << r.p99 << "\n";
        sweep_points++;
      }
    }
  }
  std::ofstream gp(dir + "/plots.gp", std::ios::trunc);
  // Plain text labels: gnuplot's enhanced mode would set the _ of
  // point_lookup and read_mix as subscripts.
  gp << "set terminal svg size 900,500 dynamic font 'sans,11'\n"
     << "set termoption noenhanced\n";
  if (latency_points > 0) {
    gp << "set output 'latency.svg'\n"
       << "set title 'Latency by scenario, 1 client, scale " << scale << "'\n"
       << "set style data histograms\nset style histogram clustered\n"
       << "set style fill solid 0.8 border -1\nset logscale y\n"
       << "set ylabel 'ms (log)'\nset xtics rotate by -30\nset grid ytics\n"
       << "plot 'latency.dat' using 2:xtic(1) title 'p50', '' using 3 "
       << "title 'p95', '' using 4 title 'p99'\n"
       << "unset logscale y\nset style data lines\nset xtics norotate\n";
    md << "\n![latency](latency.svg)\n";
  }
  if (sweep_points > 0) {
    gp << "set output 'sweep.svg'\n"
       << "set title 'Read mix (q1, q2, pull): throughput and p99 by "
          "clients, scale "
       << scale << "'\n"
       << "set logscale x 2\nset xlabel 'clients'\nset ylabel 'ops/s'\n"
       << "set y2label 'p99 ms'\nset ytics nomirror\nset y2tics\n"
       << "plot 'sweep.dat' using 1:2 with linespoints title 'ops/s' axes "
          "x1y1, '' using 1:3 with linespoints title 'p99 ms' axes x1y2\n";
    md << "\n![sweep](sweep.svg)\n";
  }
  // The soak (sustained scenario): read throughput and p99, and the
  // server's memory, per window over the run.
  if (std::ifstream(dir + "/sustained.csv").good()) {
    gp << "set output 'sustained.svg'\n"
       << "set datafile separator ','\nset key noautotitle\n"
       << "unset logscale\nset xlabel 'seconds'\nset ylabel 'reads/window'\n"
       << "set y2label 'read p99 ms'\nset ytics nomirror\nset y2tics\n"
       << "set title 'Sustained run, scale " << scale
       << ": reads and read p99 per window'\n"
       << "plot 'sustained.csv' using 2:(column('read_ops')) with linespoints "
          "title 'reads' axes x1y1, '' using 2:(column('read_p99_ms')) with "
          "linespoints title 'read p99 ms' axes x1y2\n"
       << "set output 'sustained-memory.svg'\n"
       << "set title 'Sustained run, scale " << scale
       << ": server memory per window'\n"
       << "unset y2label\nunset y2tics\nset ytics mirror\n"
       << "set ylabel 'MB'\n"
       << "plot for [c in 'server_rss_mb block_cache_mb memtable_mb "
          "entity_cache_mb column_cache_mb other_mb'] 'sustained.csv' using "
          "2:(column(c)) with lines title c\n"
       << "set datafile separator whitespace\n";
    md << "\n![sustained](sustained.svg)\n\n![sustained "
          "memory](sustained-memory.svg)\n";
  }
  gp.close();
  if (std::system(("cd '" + dir + "' && gnuplot plots.gp").c_str()) != 0) {
    return absl::UnavailableError("gnuplot failed on " + dir + "/plots.gp");
  }

  return absl::OkStatus();
}

absl::StatusOr<int> CompareRuns(const std::string& old_dir,
                                const std::string& new_dir,
                                double threshold_percent) {
  auto old_rows = ReadTimings(old_dir);
  if (!old_rows.ok()) return old_rows.status();
  auto new_rows = ReadTimings(new_dir);
  if (!new_rows.ok()) return new_rows.status();
  std::map<std::string, Row> old_by_key;
  auto key = [](const Row& r) {
    return StrCat(r.scenario, "/", r.op, "/", r.clients, "/", r.scale);
  };
  for (const Row& r : *old_rows) old_by_key[key(r)] = r;
  const double f = threshold_percent / 100;
  int regressions = 0;
  for (const Row& n : *new_rows) {
    auto it = old_by_key.find(key(n));
    if (it == old_by_key.end()) continue;
    const Row& o = it->second;
    std::string why;
    if (o.p50 > 0 && n.p50 > o.p50 * (1 + f)) {
      why += StrCat(" p50 ", o.p50, " -> ", n.p50, " ms");
    }
    if (o.throughput > 0 && n.throughput < o.throughput * (1 - f)) {
      why += StrCat(" throughput ", o.throughput, " -> ", n.throughput);
    }
    if (n.errors > o.errors)
      why += StrCat(" errors ", o.errors, " -> ", n.errors);
    if (!why.empty()) {
      regressions++;
      std::printf("REGRESSION %s:%s\n", key(n).c_str(), why.c_str());
    }
  }
  std::printf("%d regression(s) beyond %.0f%%\n", regressions,
              threshold_percent);
  return regressions;
}

}  // namespace mentat::bench
