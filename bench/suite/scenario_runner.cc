// mentat-bench run: the workload's scenarios over gRPC, every answer
// checked against the truth.

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
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
#include "suite/runner.h"
#include "suite/server_process.h"
#include "suite/suite.h"
#include "workload_queries.h"

namespace mentat::bench {
namespace {

using Clock = std::chrono::steady_clock;

const char* const kAllScenarios[] = {
    "bulk_load",    "ping",           "point_lookup", "ref_traversal",
    "aggregate",    "predicate_scan", "pull",         "as_of",
    "since",        "input_bindings", "fulltext",     "fulltext_few",
    "mixed",        "write",          "write_mixed",  "concurrency_sweep",
    "cold_vs_warm", "sustained"};

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

absl::Status Runner::Query(const std::string& q,
                           const std::vector<std::string>& inputs,
                           RowVisitor on_row, const v1::Basis* basis,
                           int64_t* basis_tx) {
  v1::QueryRequest req;
  req.set_database(options_.database);
  req.set_query(q);
  for (const std::string& in : inputs) req.add_inputs()->set_edn(in);
  if (basis != nullptr) *req.mutable_basis() = *basis;
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

const Point* Runner::FindPoint(const std::string& scenario,
                               const std::string& op) const {
  for (const Point& p : points_) {
    if (p.scenario == scenario && p.op == op) return &p;
  }
  return nullptr;
}

Sample Runner::Measure(const std::string& what, int clients, double seconds,
                       const Op& op) {
  Sample sample;
  std::vector<std::vector<double>> per(static_cast<size_t>(clients));
  std::atomic<int64_t> errors{0};
  const auto start = Clock::now();
  const auto end = start + std::chrono::duration<double>(seconds);
  const size_t min_each =
      static_cast<size_t>(std::max(1, options_.min_samples / clients));
  auto work = [&](int w) {
    std::mt19937_64 rng(static_cast<uint64_t>(w) * 7919 + 17);
    auto& mine = per[static_cast<size_t>(w)];
    // Right answers are counted here and added once at the end: a lock
    // and a map lookup per call, shared by every client thread, was the
    // loop's own cost inside the measured rate.
    int64_t right = 0;
    for (int i = 0; i < 3; ++i) op(w, rng);
    while (Clock::now() < end || mine.size() < min_each) {
      const auto t0 = Clock::now();
      const std::string failure = op(w, rng);
      mine.push_back(
          std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
      if (!failure.empty()) {
        errors++;
        Check(what, failure);
      } else {
        ++right;
      }
    }
    CountRight(what, right);
  };
  std::vector<std::thread> threads;
  for (int w = 0; w < clients; ++w) threads.emplace_back(work, w);
  for (std::thread& t : threads) t.join();
  sample.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  for (auto& v : per) sample.ms.insert(sample.ms.end(), v.begin(), v.end());
  sample.errors = errors;
  return sample;
}

Point Runner::Summarize(const std::string& scenario, const std::string& op,
                        int clients, const std::vector<Sample>& reps) {
  std::vector<double> p50, p95, p99, mx, tput, count, errs;
  for (const Sample& s : reps) {
    Percentiles p = ComputePercentiles(s.ms);
    p50.push_back(p.p50);
    p95.push_back(p.p95);
    p99.push_back(p.p99);
    mx.push_back(p.max);
    tput.push_back(static_cast<double>(s.ms.size()) /
                   std::max(1e-9, s.seconds));
    count.push_back(static_cast<double>(s.ms.size()));
    errs.push_back(static_cast<double>(s.errors));
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
  };
  Point pt;
  pt.scenario = scenario;
  pt.op = op;
  pt.clients = clients;
  pt.count = static_cast<int64_t>(median(count));
  pt.p50 = median(p50);
  pt.p95 = median(p95);
  pt.p99 = median(p99);
  pt.max = median(mx);
  pt.throughput = median(tput);
  pt.errors = static_cast<int64_t>(*std::max_element(errs.begin(), errs.end()));
  pt.reps = static_cast<int>(reps.size());
  std::printf(
      "%-18s %-12s clients %3d: n %7lld p50 %8.3f ms p99 %8.3f ms "
      "%9.0f ops/s errors %lld\n",
      scenario.c_str(), op.c_str(), clients, static_cast<long long>(pt.count),
      pt.p50, pt.p99, pt.throughput, static_cast<long long>(pt.errors));
  std::fflush(stdout);
  return pt;
}

void Runner::MeasurePoint(const std::string& scenario,
                          const std::string& op_name, int clients,
                          const Op& op) {
  // Once per operation, its first point runs unmeasured for --warmup-s: a
  // scenario over random keys (pull: 130K issues at s) otherwise measures
  // mostly first touches of records the server caches after.
  if (options_.warmup_s > 0 &&
      warmed_.insert(StrCat(scenario, "/", op_name)).second) {
    (void)Measure(scenario, clients, options_.warmup_s, op);
  }
  std::vector<Sample> reps;
  for (int r = 0; r < options_.reps; ++r) {
    reps.push_back(Measure(scenario, clients, options_.min_s, op));
  }
  points_.push_back(Summarize(scenario, op_name, clients, reps));
}

std::string Runner::Ping() {
  auto pong = client_.Ping();
  if (!pong.ok()) return pong.status().ToString();
  if (pong->server_version().rfind("mentatd ", 0) != 0) {
    return StrCat("ping: server version \"", pong->server_version(), "\"");
  }
  return "";
}

std::string Runner::Q1(std::mt19937_64& rng) {
  const int64_t k = static_cast<int64_t>(rng() % meta_.scale.users);
  int64_t rows = 0;
  bool right_name = false;
  absl::Status s =
      Query(kQ1, {Quote(UserEmail(k))}, [&](const client::WireRow& r) {
        ++rows;
        right_name =
            r.size() == 2 && IsNumbered(r[1].string_value(), "User ", k);
      });
  if (!s.ok()) return s.ToString();
  if (rows != 1) return StrCat("q1 user ", k, ": ", rows, " rows");
  if (!right_name) return StrCat("q1 user ", k, ": wrong name");
  return "";
}

std::string Runner::Q2(std::mt19937_64& rng, bool as_of) {
  const int64_t u = probes_[rng() % probes_.size()];
  v1::Basis basis;
  if (as_of) {
    basis.set_kind(v1::Basis::AS_OF);
    basis.set_tx(load_.t_mid);
  }
  // (issue index, state index) per row; a row that is not of that shape
  // gets -1s, which the truth never holds.
  std::vector<std::pair<int64_t, int>> got;
  auto it = truth_.assigned.find(u);
  const size_t want_size = it == truth_.assigned.end() ? 0 : it->second.size();
  got.reserve(want_size);
  absl::Status s = Query(
      kQ2, {Quote(UserEmail(u))},
      [&](const client::WireRow& r) {
        if (r.size() != 3) {
          got.emplace_back(-1, -1);
          return;
        }
        got.emplace_back(IssueIndex(r[1].string_value()),
                         StateIndex(r[2].keyword()));
      },
      as_of ? &basis : nullptr);
  if (!s.ok()) return s.ToString();
  // The truth lists each issue once, in index order; a repeated row is
  // wrong too (a :find answer is a set).
  std::sort(got.begin(), got.end());
  bool same = got.size() == want_size;
  for (size_t i = 0; same && i < want_size; ++i) {
    const auto& t = it->second[i];
    same = got[i].first == t[0] && got[i].second == (as_of ? t[1] : t[2]);
  }
  if (!same) {
    return StrCat(
        as_of ? "as_of " : "", "q2 user ", u, ": ", got.size(),
        " (issue, state) rows, expected ", want_size,
        got.size() == want_size ? " (different issues or states)" : "");
  }
  return "";
}

std::string Runner::Q3() {
  std::array<int64_t, 5> got{};
  absl::Status s = Query(kQ3, {}, [&](const client::WireRow& r) {
    if (r.size() != 2) return;
    const int state = StateIndex(r[0].keyword());
    if (state >= 0) got[state] = r[1].long_value();
  });
  if (!s.ok()) return s.ToString();
  if (got != truth_.states_final) return "q3: per-state counts differ";
  return "";
}

std::string Runner::Q4() {
  int64_t n = 0;
  v1::QueryRequest req;
  req.set_database(options_.database);
  req.set_query(kQ4);
  req.add_inputs()->set_edn("4");
  absl::Status s =
      client_.QueryBatches(req, [&](const client::QueryBatch& batch) {
        n += batch.rows_size();
        return true;
      });
  if (!s.ok()) return s.ToString();
  if (n != truth_.open_at_least[4]) {
    return StrCat("q4: ", n, " rows, expected ", truth_.open_at_least[4]);
  }
  return "";
}

std::string Runner::PullIssue(std::mt19937_64& rng) {
  // Any issue but the mixed writer's, whose state only it knows.
  int64_t idx;
  do {
    idx = static_cast<int64_t>(rng() % meta_.scale.issues);
  } while (pool_.Contains(idx));
  const Issue issue = GenerateIssue(meta_.scale, idx);
  int final_state = issue.state;
  int changed;
  if (HistoryChange(meta_.scale, idx, &changed)) final_state = changed;
  int64_t rows = 0;
  // What the answer held, when it was wrong ("" when right).
  std::string wrong;
  absl::Status s =
      Query(kPull, {std::to_string(load_.issue_ids[static_cast<size_t>(idx)])},
            [&](const client::WireRow& r) {
              if (++rows != 1 || r.size() != 1) return;
              std::string_view title, state;
              int64_t priority = 0;
              for (const client::WireValueMap::Entry& e : r[0].map()) {
                const std::string_view k = e.key.keyword();
                if (k == "issue/title") title = e.value.string_value();
                if (k == "issue/state") state = e.value.keyword();
                if (k == "issue/priority") priority = e.value.long_value();
              }
              if (title != issue.title || state != kStates[final_state] ||
                  priority != issue.priority) {
                wrong = StrCat("(", title, ", ", state, ", ", priority, ")");
              }
            });
  if (!s.ok()) return s.ToString();
  if (rows != 1) return StrCat("pull issue ", idx, ": ", rows, " results");
  if (!wrong.empty()) return StrCat("pull issue ", idx, ": got ", wrong);
  return "";
}

std::string Runner::SinceRows(int64_t* rows, int64_t* basis_tx) {
  v1::Basis basis;
  basis.set_kind(v1::Basis::SINCE);
  basis.set_tx(load_.t_since);
  *rows = 0;
  absl::Status s = Query(
      kSince, {}, [&](const client::WireRow&) { ++*rows; }, &basis, basis_tx);
  if (!s.ok()) return s.ToString();
  return "";
}

const std::vector<int64_t>& Runner::SinceHistoryIds() {
  std::call_once(since_history_once_, [&] {
    // The history's changes in issue order (as the generator writes them);
    // those from position `before` on come after t_since.
    const int64_t before =
        HistoryChangesBeforeSince(CountHistoryChanges(meta_.scale));
    int64_t position = 0;
    for (int64_t idx = 0; idx < meta_.scale.issues; ++idx) {
      int state;
      if (!HistoryChange(meta_.scale, idx, &state)) continue;
      if (position++ >= before) {
        since_history_ids_.push_back(load_.issue_ids[static_cast<size_t>(idx)]);
      }
    }
    std::sort(since_history_ids_.begin(), since_history_ids_.end());
  });
  return since_history_ids_;
}

std::string Runner::Since() {
  v1::Basis basis;
  basis.set_kind(v1::Basis::SINCE);
  basis.set_tx(load_.t_since);
  const std::vector<int64_t>& history = SinceHistoryIds();
  std::vector<int64_t> got;
  got.reserve(history.size());
  absl::Status s = Query(
      kSince, {},
      [&](const client::WireRow& r) {
        if (r.size() != 1) {
          got.push_back(-1);
          return;
        }
        const client::WireValue& v = r[0];
        got.push_back(v.kind_case() == v1::Value::kRef ? v.ref()
                                                       : v.long_value());
      },
      &basis);
  if (!s.ok()) return s.ToString();
  const int64_t want = truth_.changed_after_since + pool_.ChangedAfterSince();
  if (static_cast<int64_t>(got.size()) != want) {
    return StrCat("since: ", got.size(), " issues, expected ", want);
  }
  // The issues themselves: the history's, and the pool members the mixed
  // writer changed (never one of the history's), each once.
  std::vector<int64_t> pool_ids;
  for (const MixedPool::Member& m : pool_.members()) {
    if (m.changed_after_since) pool_ids.push_back(m.id);
  }
  std::sort(pool_ids.begin(), pool_ids.end());
  if (!std::is_sorted(got.begin(), got.end())) {
    std::sort(got.begin(), got.end());
  }
  size_t h = 0, p = 0;
  for (const int64_t id : got) {
    const bool from_history = h < history.size() && (p == pool_ids.size() ||
                                                     history[h] < pool_ids[p]);
    const int64_t expected = from_history          ? history[h++]
                             : p < pool_ids.size() ? pool_ids[p++]
                                                   : -1;
    if (id != expected) {
      return StrCat("since: issue ", id, " where ", expected,
                    " was expected (sorted by entity id)");
    }
  }
  return "";
}

std::string Runner::Fulltext() {
  int64_t rows = 0;
  std::string wrong;  // the first title that should not have been found
  absl::Status s =
      Query(kFulltext, {Quote(kFulltextSearch)}, [&](const client::WireRow& r) {
        ++rows;
        const std::string_view title =
            r.size() == 2 ? r[1].string_value() : std::string_view();
        const int64_t idx = IssueIndex(title);
        if (wrong.empty() && (!std::to_string(idx).starts_with("12") ||
                              !title.ends_with(": crash"))) {
          wrong = title;
        }
      });
  if (!s.ok()) return s.ToString();
  if (rows != fulltext_truth_) {
    return StrCat("fulltext: ", rows, " issues, expected ", fulltext_truth_);
  }
  if (!wrong.empty()) return StrCat("fulltext: found ", wrong);
  return "";
}

std::string Runner::FulltextFew(std::mt19937_64& rng) {
  const int64_t idx = static_cast<int64_t>(rng() % meta_.scale.issues);
  const std::string want = GenerateIssue(meta_.scale, idx).title;
  int64_t rows = 0;
  bool found = false;
  absl::Status s = Query(
      kFulltext, {Quote(std::to_string(idx))}, [&](const client::WireRow& r) {
        ++rows;
        found = found || (r.size() == 2 && r[1].string_value() == want);
      });
  if (!s.ok()) return s.ToString();
  if (rows != 1 || !found) {
    return StrCat("fulltext_few ", idx, ": ", rows, " rows");
  }
  return "";
}

std::string Runner::Inputs(std::mt19937_64& rng) {
  std::string edn = "[";
  std::set<int64_t> users;
  while (users.size() < std::min<size_t>(100, meta_.scale.users)) {
    users.insert(static_cast<int64_t>(rng() % meta_.scale.users));
  }
  for (int64_t u : users) edn += Quote(UserEmail(u)) + " ";
  // The user each name is UserName of (-1 for a name of no user); a
  // repeated row is wrong too (a :find answer is a set).
  std::vector<int64_t> got;
  got.reserve(users.size());
  absl::Status s = Query(kInputs, {edn + "]"}, [&](const client::WireRow& r) {
    const std::string_view name = r.size() == 2
                                      ? std::string_view(r[1].string_value())
                                      : std::string_view();
    int64_t u = -1;
    constexpr std::string_view kPrefix = "User ";
    if (name.starts_with(kPrefix)) {
      const char* end = name.data() + name.size();
      const auto [at, ec] =
          std::from_chars(name.data() + kPrefix.size(), end, u);
      if (ec != std::errc() || at != end || !IsNumbered(name, kPrefix, u)) {
        u = -1;
      }
    }
    got.push_back(u);
  });
  if (!s.ok()) return s.ToString();
  std::sort(got.begin(), got.end());
  if (!std::equal(got.begin(), got.end(), users.begin(), users.end())) {
    return StrCat("input bindings: ", got.size(), " names");
  }
  return "";
}

std::string Runner::ReadMix(std::mt19937_64& rng) {
  switch (rng() % 3) {
    case 0:
      return Q1(rng);
    case 1:
      return Q2(rng, false);
    default:
      return PullIssue(rng);
  }
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

std::string Runner::Write() {
  const int64_t c = write_counter_.fetch_add(1);
  const int64_t n = meta_.scale.issues;
  const size_t label = static_cast<size_t>(c / n);
  if (label >= bench_labels_.size()) return "out of bench labels";
  v1::TransactRequest req;
  req.set_database(options_.database);
  req.set_tx_data(StrCat("[[:db/add ",
                         load_.issue_ids[static_cast<size_t>(c % n)],
                         " :issue/label ", bench_labels_[label], "]]"));
  auto resp = client_.Transact(req);
  if (!resp.ok()) return resp.status().ToString();
  writes_acked_++;
  if (resp->datom_count() != 2) {
    return StrCat("write: ", resp->datom_count(), " datoms, expected 2");
  }
  return "";
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
  if (Wanted("mixed")) {
    absl::Status s = Mixed();
    if (!s.ok()) return s;
  }
  if (Wanted("concurrency_sweep")) {
    for (int c : options_.clients) {
      MeasurePoint("concurrency_sweep", "read_mix", c,
                   [&](int, std::mt19937_64& r) { return ReadMix(r); });
    }
  }
  if (Wanted("write")) {
    absl::Status s = SetUpWrites();
    if (!s.ok()) return s;
    for (int c : options_.write_clients) {
      // The floor at the writers' concurrency: what a bare RPC reaches
      // with as many callers (on 2 cores, gRPC's own ceiling).
      if (c > 1 && Wanted("ping")) {
        MeasurePoint("ping", "ping", c,
                     [&](int, std::mt19937_64&) { return Ping(); });
      }
      MeasurePoint("write", "write", c,
                   [&](int, std::mt19937_64&) { return Write(); });
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
