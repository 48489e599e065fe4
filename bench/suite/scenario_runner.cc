// mentat-bench run: the workload's scenarios over gRPC, every answer
// checked against the truth.

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "mentat/base/str_cat.h"
#include "stats_util.h"
#include "suite/dataset.h"
#include "suite/engine_beside.h"
#include "suite/runner.h"
#include "suite/server_process.h"
#include "suite/suite.h"
#include "workload_queries.h"

namespace mentat::bench {
namespace {

const char* const kAllScenarios[] = {"bulk_load",
                                     "ping",
                                     "point_lookup",
                                     "ref_traversal",
                                     "aggregate",
                                     "predicate_scan",
                                     "pull",
                                     "as_of",
                                     "since",
                                     "input_bindings",
                                     "fulltext",
                                     "fulltext_few",
                                     "paired",
                                     "mixed",
                                     "write",
                                     "write_mixed",
                                     "concurrency_sweep",
                                     "cold_vs_warm",
                                     "sustained"};

}  // namespace

Runner::Runner(client::Client& client, const RunOptions& options,
               DatasetMeta meta, DatasetTruth truth, LoadRecord load,
               MixedPool pool)
    : client_(client),
      options_(options),
      meta_(std::move(meta)),
      truth_(std::move(truth)),
      load_(std::move(load)),
      pool_(std::move(pool)) {
  for (const auto& [user, issues] : truth_.assigned) probes_.push_back(user);
}

Runner::~Runner() = default;

bool Runner::Wanted(const std::string& s) const {
  return options_.scenarios.empty() ||
         std::find(options_.scenarios.begin(), options_.scenarios.end(), s) !=
             options_.scenarios.end();
}

void Runner::Check(const std::string& what, const std::string& failure) {
  absl::MutexLock lock(&mu_);
  if (failure.empty()) {
    checks_ok_[what]++;
  } else if (checks_failed_[what]++ < 5) {
    failures_.push_back(what + ": " + failure);
  }
}

void Runner::CountRight(const std::string& what, int64_t right) {
  absl::MutexLock lock(&mu_);
  checks_ok_[what] += right;
}

v1::QueryRequest Runner::QueryRequest(const std::string& q,
                                      const std::vector<std::string>& inputs,
                                      const v1::Basis* basis) const {
  v1::QueryRequest req;
  req.set_database(options_.database);
  req.set_query(q);
  for (const std::string& in : inputs) req.add_inputs()->set_edn(in);
  if (basis != nullptr) *req.mutable_basis() = *basis;
  return req;
}

absl::Status Runner::Query(const std::string& q,
                           const std::vector<std::string>& inputs,
                           RowVisitor on_row, const v1::Basis* basis,
                           int64_t* basis_tx) {
  const v1::QueryRequest req = QueryRequest(q, inputs, basis);
  // The rows are read where they arrived (the bytes gRPC received), not
  // parsed into messages or kept.
  return client_.QueryBatches(req, [&](const client::QueryBatch& batch) {
    if (basis_tx != nullptr) *basis_tx = batch.basis_tx();
    for (const client::WireRow r : batch.rows()) on_row(r);
    return true;
  });
}

int64_t Runner::IssueIndex(std::string_view title) {
  // By hand, not from_chars: q2 reads 80 titles an answer, and this was a
  // tenth of the client's cost of one beyond the RPC.
  constexpr std::string_view kPrefix = "Issue ";
  if (!title.starts_with(kPrefix)) return -1;
  size_t i = kPrefix.size();
  int64_t idx = 0;
  const size_t digits_end = std::min(title.size(), i + 18);  // no overflow
  for (; i < digits_end && title[i] >= '0' && title[i] <= '9'; ++i) {
    idx = idx * 10 + (title[i] - '0');
  }
  if (i == kPrefix.size() || (i < title.size() && title[i] != ':')) return -1;
  return idx;
}

bool Runner::IsNumbered(std::string_view text, std::string_view prefix,
                        int64_t n) {
  if (!text.starts_with(prefix)) return false;
  char digits[24];
  const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, n);
  return text.substr(prefix.size()) ==
         std::string_view(digits, static_cast<size_t>(end - digits));
}

int Runner::StateIndex(std::string_view keyword) {
  for (int s = 0; s < 5; ++s) {
    if (keyword == kStates[s]) return s;
  }
  return -1;
}

absl::Status Runner::SetUpWrites() {
  if (!bench_labels_.empty()) return absl::OkStatus();
  const int64_t run = std::chrono::duration_cast<std::chrono::seconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  std::string tx = "[";
  for (int i = 0; i < 256; ++i) {
    tx +=
        StrCat("{:db/id \"b", i, "\" :label/name \"bench-", run, "-", i, "\"}");
  }
  v1::TransactRequest req;
  req.set_database(options_.database);
  req.set_tx_data(tx + "]");
  auto resp = client_.Transact(req);
  if (!resp.ok()) return resp.status();
  for (int i = 0; i < 256; ++i) {
    bench_labels_.push_back(resp->tempids().at(StrCat("b", i)));
  }
  return absl::OkStatus();
}

bool Runner::WriteRequest(v1::TransactRequest* request) {
  const int64_t c = write_counter_.fetch_add(1);
  const int64_t n = meta_.scale.issues;
  const size_t label = static_cast<size_t>(c / n);
  if (label >= bench_labels_.size()) return false;
  request->set_database(options_.database);
  request->set_tx_data(StrCat("[[:db/add ",
                              load_.issue_ids[static_cast<size_t>(c % n)],
                              " :issue/label ", bench_labels_[label], "]]"));
  return true;
}

std::string Runner::WriteAnswered(
    const absl::StatusOr<v1::TransactResponse>& resp) {
  if (!resp.ok()) return resp.status().ToString();
  writes_acked_++;
  if (resp->datom_count() != 2) {
    return StrCat("write: ", resp->datom_count(), " datoms, expected 2");
  }
  return "";
}

std::string Runner::Write() {
  v1::TransactRequest req;
  if (!WriteRequest(&req)) return "out of bench labels";
  return WriteAnswered(client_.Transact(req));
}

void Runner::WriteAsync(Answered answered) {
  v1::TransactRequest req;
  if (!WriteRequest(&req)) {
    answered("out of bench labels");
    return;
  }
  client_.TransactAsync(req, [this, answered = std::move(answered)](
                                 absl::StatusOr<v1::TransactResponse> resp) {
    answered(WriteAnswered(resp));
  });
}

absl::Status Runner::CheckWrites() {
  std::string labels = "[";
  for (int64_t l : bench_labels_) labels += std::to_string(l) + " ";
  int64_t n = 0;
  absl::Status s =
      Query("[:find ?l (count ?i) :in $ [?l ...] :where [?i :issue/label ?l]]",
            {labels + "]"}, [&](const client::WireRow& r) {
              if (r.size() == 2) n += r[1].long_value();
            });
  if (!s.ok()) return s;
  Check("post-write: every acknowledged write is visible",
        n == writes_acked_.load()
            ? ""
            : StrCat(n, " bench label datoms, ", writes_acked_.load(),
                     " writes acknowledged"));
  // The read checks still hold after the writes.
  std::mt19937_64 rng(99);
  Check("post-write: q1", Q1(rng));
  Check("post-write: q2", Q2(rng, false));
  Check("post-write: q3", Q3());
  Check("post-write: pull", PullIssue(rng));
  Check("post-write: since", Since());
  return absl::OkStatus();
}

int64_t Runner::ServerRss() {
  return options_.server != nullptr ? options_.server->RssBytes() : 0;
}

absl::Status Runner::WriteEnv() {
  std::ofstream env(options_.out + "/env.txt", std::ios::trunc);
  struct utsname u;
  uname(&u);
  std::string cpu_model;
  {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("model name", 0) == 0) {
        cpu_model = line.substr(line.find(':') + 2);
        break;
      }
    }
  }
  const auto now =
      std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char date[64];
  std::strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  env << "date: " << date << "\n"
      << "host: " << u.nodename << " (" << u.sysname << " " << u.release << " "
      << u.machine << ")\n"
      << "cpus online: " << sysconf(_SC_NPROCESSORS_ONLN) << " (" << cpu_model
      << ")\n"
      << "scale: " << meta_.scale.name << " (" << meta_.scale.users
      << " users, " << meta_.scale.issues << " issues, " << meta_.scale.labels
      << " labels, " << meta_.initial_datoms << " datoms loaded)\n"
      << "database: " << options_.database << "\n"
      << "load: " << load_.method << ", " << load_.datoms << " datoms in "
      << load_.load_seconds << " s; t_mid " << load_.t_mid << ", t_since "
      << load_.t_since << "\n"
      << "server: " << options_.server_description << "\n"
      << "client: mentat-bench over gRPC (" << client_.options().address
      << "), "
      << (options_.client_cpus.empty()
              ? std::string("unpinned")
              : "pinned to CPUs " + options_.client_cpus)
      << ", "
      << (client_.options().poll_us > 0
              ? StrCat("unary calls polled for ", client_.options().poll_us,
                       " us")
              : std::string("unary calls not polled"))
      << ", queries "
      << (client_.options().query_first ? "QueryFirst first" : "as streams")
      << "\n"
      << "reps: " << options_.reps
      << ", min seconds per point: " << options_.min_s
      << ", min samples per point: " << options_.min_samples << "\n";
  for (const std::string& n : notes_) env << "note: " << n << "\n";
  return env ? absl::OkStatus()
             : absl::UnavailableError("cannot write env.txt");
}

absl::Status Runner::Run() {
  std::error_code ec;
  std::filesystem::create_directories(options_.out, ec);
  const int64_t n_datoms = meta_.initial_datoms;
  if (Wanted("bulk_load")) {
    Point p;
    p.scenario = "bulk_load";
    p.op = "load_" + load_.method;
    p.count = load_.datoms;
    p.p50 = p.p95 = p.p99 = p.max = load_.load_seconds * 1000;
    p.throughput = load_.datoms / std::max(1e-9, load_.load_seconds);
    points_.push_back(p);
    Check(
        "bulk_load: datom count",
        load_.datoms == meta_.initial_datoms
            ? ""
            : StrCat(load_.datoms, " datoms, expected ", meta_.initial_datoms));
    notes_.push_back(StrCat("bulk_load: ", load_.disk_bytes / 1e6,
                            " MB on disk after the load and history (",
                            load_.disk_bytes / 1e9 / (n_datoms / 1e6),
                            " GB per million datoms)"));
  }
  // since's truth counts the writes that earlier mixed runs recorded in
  // DATA/mixed-<db>.state; a server that lacks them (a copy of the store
  // taken before them) would fail every since check with no hint why.
  if ((Wanted("since") || Wanted("mixed")) && pool_.ChangedAfterSince() > 0) {
    absl::StatusOr<std::string> mismatch = PoolMismatch();
    if (!mismatch.ok()) return mismatch.status();
    if (!mismatch->empty()) {
      return absl::FailedPreconditionError(StrCat(
          "the database does not hold the writes that earlier mixed runs "
          "recorded in ",
          options_.data, "/mixed-", options_.database, ".state (", *mismatch,
          "): a copy of the store from before them? Load the dataset "
          "again, or keep that file with the store it describes"));
    }
  }
  auto single = [&](const char* scenario, const char* op, Op fn) {
    if (Wanted(scenario)) MeasurePoint(scenario, op, 1, fn);
  };
  // The floor first: every figure below includes one RPC's cost.
  single("ping", "ping", [&](int, std::mt19937_64&) { return Ping(); });
  single("point_lookup", "q1", [&](int, std::mt19937_64& r) { return Q1(r); });
  single("ref_traversal", "q2",
         [&](int, std::mt19937_64& r) { return Q2(r, false); });
  single("aggregate", "q3", [&](int, std::mt19937_64&) { return Q3(); });
  single("predicate_scan", "q4", [&](int, std::mt19937_64&) { return Q4(); });
  single("pull", "pull", [&](int, std::mt19937_64& r) { return PullIssue(r); });
  single("as_of", "q2_as_of",
         [&](int, std::mt19937_64& r) { return Q2(r, true); });
  single("since", "since", [&](int, std::mt19937_64&) { return Since(); });
  single("input_bindings", "inputs_100",
         [&](int, std::mt19937_64& r) { return Inputs(r); });
  if (Wanted("fulltext")) {
    // Titles never change: the truth is the generated titles'.
    fulltext_truth_ = 0;
    for (int64_t idx = 0; idx < meta_.scale.issues; ++idx) {
      if (std::to_string(idx).starts_with("12") &&
          GenerateIssue(meta_.scale, idx).title.ends_with(": crash")) {
        fulltext_truth_++;
      }
    }
  }
  single("fulltext", "fulltext_1pct",
         [&](int, std::mt19937_64&) { return Fulltext(); });
  single("fulltext_few", "fulltext_one",
         [&](int, std::mt19937_64& r) { return FulltextFew(r); });
  if (Wanted("paired")) {
    absl::Status s = Paired();
    if (!s.ok()) return s;
  }
  if (Wanted("mixed")) {
    absl::Status s = Mixed();
    if (!s.ok()) return s;
  }
  if (Wanted("concurrency_sweep")) {
    for (int c : options_.clients) {
      // As the writes: more than one client's calls in flight from gRPC's
      // threads (--read-drive calls), each read one QueryFirst call.
      if (options_.read_drive == "calls" && c > 1 &&
          client_.options().query_first) {
        MeasurePointInFlight("concurrency_sweep", "read_mix", c,
                             [&](std::mt19937_64& r, Answered answered) {
                               RunCheckAsync(ReadMixCheck(r),
                                             std::move(answered));
                             });
      } else {
        MeasurePoint("concurrency_sweep", "read_mix", c,
                     [&](int, std::mt19937_64& r) { return ReadMix(r); });
      }
    }
  }
  if (Wanted("write")) {
    absl::Status s = SetUpWrites();
    if (!s.ok()) return s;
    for (int c : options_.write_clients) {
      // The floor at the writers' concurrency: what a bare RPC reaches
      // with as many callers (on 2 cores, gRPC's own ceiling).
      const bool in_flight = options_.write_drive == "calls" && c > 1;
      if (c > 1 && Wanted("ping") && in_flight) {
        MeasurePointInFlight(
            "ping", "ping", c, [&](std::mt19937_64&, Answered answered) {
              client_.PingAsync([this, answered = std::move(answered)](
                                    absl::StatusOr<v1::PingResponse> pong) {
                answered(Pong(pong));
              });
            });
      } else if (c > 1 && Wanted("ping")) {
        MeasurePoint("ping", "ping", c,
                     [&](int, std::mt19937_64&) { return Ping(); });
      }
      if (in_flight) {
        MeasurePointInFlight("write", "write", c,
                             [&](std::mt19937_64&, Answered answered) {
                               WriteAsync(std::move(answered));
                             });
      } else {
        MeasurePoint("write", "write", c,
                     [&](int, std::mt19937_64&) { return Write(); });
      }
    }
  }
  if (Wanted("write_mixed")) {
    absl::Status s = SetUpWrites();
    if (!s.ok()) return s;
    std::vector<Sample> w_reps, r_reps;
    for (int rep = 0; rep < options_.reps; ++rep) {
      Sample ws;
      std::thread writer([&] {
        ws = Measure("write_mixed", 1, options_.min_s,
                     [&](int, std::mt19937_64&) { return Write(); });
      });
      r_reps.push_back(Measure("write_mixed", 8, options_.min_s,
                               [&](int, std::mt19937_64& r) {
                                 return r() % 2 ? Q1(r) : Q2(r, false);
                               }));
      writer.join();
      w_reps.push_back(ws);
    }
    points_.push_back(Summarize("write_mixed", "write", 1, w_reps));
    points_.push_back(Summarize("write_mixed", "read_q1_q2", 8, r_reps));
  }
  if (Wanted("sustained")) {
    absl::Status s = Sustained();
    if (!s.ok()) return s;
  }
  if (!bench_labels_.empty()) {
    absl::Status s = CheckWrites();
    if (!s.ok()) return s;
  }
  if (Wanted("cold_vs_warm")) {
    absl::Status s = ColdVsWarm();
    if (!s.ok()) return s;
  }

  std::ofstream csv(options_.out + "/timings.csv", std::ios::trunc);
  csv << "scenario,system,scale,n_datoms,clients,op,count,p50_ms,p95_ms,"
         "p99_ms,max_ms,throughput_ops_s,errors,reps\n";
  for (const Point& p : points_) {
    char line[512];
    std::snprintf(
        line, sizeof(line),
        "%s,mentatd,%s,%lld,%d,%s,%lld,%.4f,%.4f,%.4f,%.4f,%.1f,%lld,%d\n",
        p.scenario.c_str(), meta_.scale.name.c_str(),
        static_cast<long long>(n_datoms), p.clients, p.op.c_str(),
        static_cast<long long>(p.count), p.p50, p.p95, p.p99, p.max,
        p.throughput, static_cast<long long>(p.errors), p.reps);
    csv << line;
  }
  std::ofstream checks(options_.out + "/checks.txt", std::ios::trunc);
  int64_t failed = 0;
  {
    // Uncontended (the scenarios' threads have ended).
    absl::MutexLock lock(&mu_);
    std::set<std::string> names;
    for (const auto& [k, v] : checks_ok_) names.insert(k);
    for (const auto& [k, v] : checks_failed_) names.insert(k);
    for (const std::string& k : names) {
      const int64_t bad = checks_failed_.count(k) ? checks_failed_[k] : 0;
      const int64_t good = checks_ok_.count(k) ? checks_ok_[k] : 0;
      failed += bad;
      checks << (bad == 0 ? "PASS " : "FAIL ") << k << ": " << good
             << " answers right, " << bad << " wrong\n";
    }
    for (const std::string& f : failures_) checks << "  " << f << "\n";
  }
  for (const std::string& n : notes_) checks << "note: " << n << "\n";
  absl::Status s = WriteEnv();
  if (!s.ok()) return s;
  if (failed > 0) {
    return absl::FailedPreconditionError(
        StrCat(failed, " wrong answers (see ", options_.out, "/checks.txt)"));
  }
  return absl::OkStatus();
}

absl::Status RunScenarios(client::Client& client, const RunOptions& options) {
  for (const std::string& s : options.scenarios) {
    if (std::find(std::begin(kAllScenarios), std::end(kAllScenarios), s) ==
        std::end(kAllScenarios)) {
      return absl::InvalidArgumentError(StrCat("unknown scenario ", s));
    }
  }
  auto meta = ReadDatasetMeta(options.data);
  if (!meta.ok()) return meta.status();
  auto truth = ReadDatasetTruth(options.data);
  if (!truth.ok()) return truth.status();
  auto load = ReadLoadRecord(options.data, options.database,
                             static_cast<size_t>(meta->scale.issues));
  if (!load.ok()) return load.status();
  auto pool = MixedPool::Open(options.data, options.database, meta->scale,
                              ProbeUsers(meta->scale), load->issue_ids);
  if (!pool.ok()) return pool.status();
  Runner runner(client, options, *std::move(meta), *std::move(truth),
                *std::move(load), *std::move(pool));
  return runner.Run();
}

}  // namespace mentat::bench
