// mentat-bench run's `mixed` scenario: each read scenario measured while a
// writer commits at a fixed rate into :issue/state and :issue/priority
// (MixedWriter), beside the quiet figure of the same run. Every answer is
// checked: the writes keep the aggregate checks exact, the per-issue checks
// read no issue the writer changes, and since's expected count follows the
// writer's record of what it changed, at the basis each answer read.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <thread>
#include <utility>

#include "absl/synchronization/mutex.h"
#include "mentat/base/str_cat.h"
#include "stats_util.h"
#include "suite/mixed_writer.h"
#include "suite/runner.h"

namespace mentat::bench {
namespace {

// The read scenarios, by op, with the scenario that measures each quietly.
struct MixedQuery {
  const char* op;
  const char* quiet_scenario;
};
// ping first: the floor under the others, with the writer as without.
constexpr MixedQuery kMixedQueries[] = {
    {"ping", "ping"},        {"q1", "point_lookup"},
    {"q2", "ref_traversal"}, {"pull", "pull"},
    {"q2_as_of", "as_of"},   {"inputs_100", "input_bindings"},
    {"since", "since"},      {"q3", "aggregate"},
    {"q4", "predicate_scan"}};

// since(t_since) answers kept for checking once the writer has stopped
// (then its record holds every commit an answer can have seen).
struct SinceAnswers {
  absl::Mutex mu;
  std::vector<std::pair<int64_t, int64_t>> basis_and_rows ABSL_GUARDED_BY(mu);
};

double Ratio(double a, double b) { return b > 0 ? a / b : 0; }

}  // namespace

absl::StatusOr<std::string> Runner::PoolMismatch() {
  std::string ids = "[";
  std::map<int64_t, const MixedPool::Member*> by_id;
  for (const MixedPool::Member& m : pool_.members()) {
    ids += StrCat(m.id, " ");
    by_id[m.id] = &m;
  }
  size_t rows = 0;
  std::string first_difference;
  absl::Status s = Query(
      "[:find ?i ?s ?p :in $ [?i ...] :where [?i :issue/state ?s] "
      "[?i :issue/priority ?p]]",
      {ids + "]"}, [&](const client::WireRow& r) {
        ++rows;
        if (r.size() != 3) return;
        auto it = by_id.find(r[0].long_value());
        if (it == by_id.end() || !first_difference.empty()) return;
        const MixedPool::Member& m = *it->second;
        if (r[1].keyword() != kStates[m.state] ||
            r[2].long_value() != m.priority) {
          first_difference = StrCat("issue ", m.idx, ": (", r[1].keyword(),
                                    ", ", r[2].long_value(), "), recorded (",
                                    kStates[m.state], ", ", m.priority, ")");
        }
      });
  if (!s.ok()) return s;
  if (!first_difference.empty()) return first_difference;
  if (rows != by_id.size()) {
    return StrCat(rows, " rows for ", by_id.size(), " members");
  }
  return std::string();
}

absl::Status Runner::CheckPool(const std::string& what) {
  absl::StatusOr<std::string> failure = PoolMismatch();
  if (!failure.ok()) return failure.status();
  Check(what, *failure);
  return absl::OkStatus();
}

absl::Status Runner::Mixed() {
  for (const std::string& name : options_.mixed_queries) {
    if (std::none_of(std::begin(kMixedQueries), std::end(kMixedQueries),
                     [&](const MixedQuery& q) { return name == q.op; })) {
      return absl::InvalidArgumentError(
          StrCat("--mixed-queries: unknown op ", name,
                 " (expected ping, q1, q2, pull, q2_as_of, inputs_100, since, "
                 "q3, q4)"));
    }
  }
  std::vector<MixedQuery> queries;
  for (const MixedQuery& q : kMixedQueries) {
    if (options_.mixed_queries.empty() ||
        std::find(options_.mixed_queries.begin(), options_.mixed_queries.end(),
                  q.op) != options_.mixed_queries.end()) {
      queries.push_back(q);
    }
  }
  absl::Status s = CheckPool("mixed: pool members as recorded, before");
  if (!s.ok()) return s;

  SinceAnswers since;
  auto op_for = [&](const std::string& op) -> Op {
    if (op == "ping") return [&](int, std::mt19937_64&) { return Ping(); };
    if (op == "q1") return [&](int, std::mt19937_64& r) { return Q1(r); };
    if (op == "q2")
      return [&](int, std::mt19937_64& r) { return Q2(r, false); };
    if (op == "pull")
      return [&](int, std::mt19937_64& r) { return PullIssue(r); };
    if (op == "q2_as_of")
      return [&](int, std::mt19937_64& r) { return Q2(r, true); };
    if (op == "inputs_100")
      return [&](int, std::mt19937_64& r) { return Inputs(r); };
    if (op == "q3") return [&](int, std::mt19937_64&) { return Q3(); };
    if (op == "q4") return [&](int, std::mt19937_64&) { return Q4(); };
    return [&](int, std::mt19937_64&) {
      int64_t rows = 0, basis_tx = 0;
      std::string failure = SinceRows(&rows, &basis_tx);
      if (failure.empty()) {
        absl::MutexLock lock(&since.mu);
        since.basis_and_rows.emplace_back(basis_tx, rows);
      }
      return failure;
    };
  };

  // The quiet figures: this run's read scenarios, or measured here.
  std::map<std::string, Point> quiet;
  for (const MixedQuery& q : queries) {
    const Point* p = FindPoint(q.quiet_scenario, q.op);
    if (p == nullptr) {
      const Op op = q.op == std::string("since")
                        ? Op([&](int, std::mt19937_64&) { return Since(); })
                        : op_for(q.op);
      MeasurePoint("mixed", StrCat(q.op, "@0"), 1, op);
      p = &points_.back();
    }
    quiet[q.op] = *p;
  }

  // The writer is another application: its calls go over a connection of
  // their own, not the readers' (see ClientOptions::own_connection).
  client::ClientOptions writer_options = client_.options();
  writer_options.own_connection = true;
  auto writer_client = client::Client::Connect(writer_options);
  if (!writer_client.ok()) return writer_client.status();
  s = (*writer_client)->WaitForConnected(std::chrono::seconds(30));
  if (!s.ok()) return s;
  s = pool_.Save(/*unfinished=*/true);
  if (!s.ok()) return s;
  MixedWriter writer(**writer_client, options_.database, &pool_);

  std::ofstream csv(options_.out + "/mixed.csv", std::ios::trunc);
  csv << "query,rate,writers,achieved_tx_s,write_p50_ms,write_p99_ms,"
         "write_errors,p50_ms,p95_ms,p99_ms,quiet_p50_ms,quiet_p95_ms,"
         "quiet_p99_ms,ratio_p50,ratio_p95,ratio_p99\n";
  // Writes flow for this long before the reads are measured.
  const double ramp_s = std::min(1.0, options_.min_s / 4);
  for (int rate : options_.mixed_rates) {
    const int writers = options_.mixed_writers > 0
                            ? options_.mixed_writers
                            : std::clamp((rate + 99) / 100, 2, 64);
    std::vector<double> write_ms;
    int64_t write_errors = 0, acked = 0;
    double write_seconds = 0;
    for (const MixedQuery& q : queries) {
      const std::string name = StrCat(q.op, "@", rate);
      {
        absl::MutexLock lock(&since.mu);
        since.basis_and_rows.clear();
      }
      writer.Start(rate, writers);
      std::this_thread::sleep_for(std::chrono::duration<double>(ramp_s));
      std::vector<Sample> reps;
      const Op op = op_for(q.op);
      for (int r = 0; r < options_.reps; ++r) {
        reps.push_back(Measure("mixed " + name, 1, options_.min_s, op));
      }
      const WriterFigures w = writer.Stop();
      int64_t since_wrong = 0;
      std::vector<std::pair<int64_t, int64_t>> since_answers;
      {
        absl::MutexLock lock(&since.mu);
        since_answers.swap(since.basis_and_rows);
      }
      for (const auto& [basis_tx, rows] : since_answers) {
        const int64_t want =
            truth_.changed_after_since + writer.ChangedAfterSinceAt(basis_tx);
        const bool right = rows == want;
        Check("mixed " + name, right
                                   ? ""
                                   : StrCat("since at basis ", basis_tx, ": ",
                                            rows, " issues, expected ", want));
        if (!right) since_wrong++;
      }
      for (const std::string& f : w.failures) Check("mixed: writes", f);
      if (w.errors == 0) Check("mixed: writes", "");
      Point p = Summarize("mixed", name, 1, reps);
      p.errors += since_wrong;
      points_.push_back(p);
      const Point& qp = quiet[q.op];
      const Percentiles wp = ComputePercentiles(w.ms);
      const double achieved = w.acked / std::max(1e-9, w.seconds);
      std::printf(
          "mixed %-14s p50 %.3f p95 %.3f p99 %.3f ms; quiet p50 %.3f p95 "
          "%.3f p99 %.3f ms; ratio p50 %.2fx p99 %.2fx; writes %.0f tx/s "
          "(%d writers), p50 %.3f p99 %.3f ms, errors %lld\n",
          name.c_str(), p.p50, p.p95, p.p99, qp.p50, qp.p95, qp.p99,
          Ratio(p.p50, qp.p50), Ratio(p.p99, qp.p99), achieved, writers, wp.p50,
          wp.p99, static_cast<long long>(w.errors));
      std::fflush(stdout);
      csv << q.op << "," << rate << "," << writers << "," << achieved << ","
          << wp.p50 << "," << wp.p99 << "," << w.errors << "," << p.p50 << ","
          << p.p95 << "," << p.p99 << "," << qp.p50 << "," << qp.p95 << ","
          << qp.p99 << "," << Ratio(p.p50, qp.p50) << ","
          << Ratio(p.p95, qp.p95) << "," << Ratio(p.p99, qp.p99) << "\n";
      write_ms.insert(write_ms.end(), w.ms.begin(), w.ms.end());
      write_errors += w.errors;
      acked += w.acked;
      write_seconds += w.seconds;
    }
    // The writer over all of this rate's points.
    Point wp;
    const Percentiles pc = ComputePercentiles(write_ms);
    wp.scenario = "mixed";
    wp.op = StrCat("write@", rate);
    wp.clients = writers;
    wp.count = acked;
    wp.p50 = pc.p50;
    wp.p95 = pc.p95;
    wp.p99 = pc.p99;
    wp.max = pc.max;
    wp.throughput = acked / std::max(1e-9, write_seconds);
    wp.errors = write_errors;
    points_.push_back(wp);
  }
  s = pool_.Save(/*unfinished=*/writer.uncertain());
  if (!s.ok()) return s;
  if (writer.uncertain()) {
    notes_.push_back(
        "mixed: a write failed, so the pool's state is unknown; load the "
        "dataset again before the next run");
  }
  s = CheckPool("mixed: pool members as recorded, after");
  if (!s.ok()) return s;
  Check("mixed: q3 after the writes", Q3());
  Check("mixed: since after the writes", Since());
  return absl::OkStatus();
}

}  // namespace mentat::bench
