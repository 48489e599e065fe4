#ifndef MENTAT_BENCH_SUITE_RUNNER_H_
#define MENTAT_BENCH_SUITE_RUNNER_H_

// mentat-bench run's scenario runner, shared by the files that implement
// its scenarios: scenario_runner.cc (measurement, the read and write
// operations, timings.csv and checks.txt), sustained_scenario.cc
// (sustained, cold_vs_warm) and mixed_scenario.cc (reads under a paced
// writer). Private to mentat-bench.

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "mentat/client/client.h"
#include "suite/dataset.h"
#include "suite/mixed_pool.h"
#include "suite/suite.h"

namespace mentat::bench {

class EngineBeside;

// One measured point (median over reps).
struct Point {
  std::string scenario, op;
  int clients = 1;
  int64_t count = 0;
  double p50 = 0, p95 = 0, p99 = 0, max = 0, throughput = 0;
  int64_t errors = 0;
  int reps = 1;
};

// The span the measuring loops time of one operation: the whole
// operation, unless it marks its call (RunCheck does), so that making the
// request's inputs and the verdict on its answer (sorting, comparing with
// the truth), the benchmark's own work, stay out of the figures, as they
// do in query-bench. The rows are still read inside the call, as a caller
// that looks at every row would. Per thread: an operation runs on its
// caller's thread.
class CallSpan {
 public:
  // Runs one operation and returns its failure ("" when right); `*ms`
  // gets its span in milliseconds.
  static std::string Time(absl::FunctionRef<std::string()> op, double* ms);
  // Inside an operation: its call starts, and ends.
  static void Start();
  static void Stop();
};

// An operation: runs one call, checks it; returns "" when right, else why
// not. `worker` and `rng` belong to the calling thread.
using Op = std::function<std::string(int worker, std::mt19937_64& rng)>;
// Starts one call and returns; `answered` runs once with its failure (""
// for a right answer) when the answer is in, on any thread.
using Answered = std::function<void(std::string failure)>;
// `rng` belongs to the client whose call it starts (its calls follow one
// another, so one at a time).
using AsyncOp = std::function<void(std::mt19937_64& rng, Answered answered)>;
// Sees one row of a query's answer. The row is a view into the bytes the
// client received (see client::Client::QueryBatches): it is valid only
// during the call.
using RowVisitor = absl::FunctionRef<void(const client::WireRow&)>;

// One read of the workload as a request and the check of its answer, so
// that a call that waits (RunCheck) and one that does not (RunCheckAsync)
// share them: `on_row` sees every row, then `finish` says "" when the
// answer was right, else what was wrong.
struct ReadCheck {
  std::string query;
  std::vector<std::string> inputs;
  std::optional<v1::Basis> basis;
  std::function<void(const client::WireRow&)> on_row;
  std::function<std::string()> finish;
};

struct Sample {
  std::vector<double> ms;
  int64_t errors = 0;
  double seconds = 0;
};

// Runs the selected scenarios against one database, checking every answer.
// One thread calls Run; operations run on the threads Measure starts.
class Runner {
 public:
  // `pool` is the mixed scenario's writer pool, in its recorded state.
  Runner(client::Client& client, const RunOptions& options, DatasetMeta meta,
         DatasetTruth truth, LoadRecord load, MixedPool pool);
  ~Runner();

  // Runs the scenarios and writes timings.csv, checks.txt, env.txt (and
  // sustained.csv, mixed.csv). FailedPrecondition if any answer was wrong.
  [[nodiscard]] absl::Status Run();

 private:
  // Runs `op` on `clients` threads for `seconds` (and at least 30
  // samples), 3 warm-up calls each discarded. Wrong answers are recorded
  // as check failures of `what`.
  Sample Measure(const std::string& what, int clients, double seconds,
                 const Op& op);
  // Measure's figures for `clients` calls kept in flight without a thread
  // each: a client starts its next call from the last one's answer.
  Sample MeasureInFlight(const std::string& what, int clients, double seconds,
                         const AsyncOp& op);
  // MeasureInFlight, --reps times, into points_.
  void MeasurePointInFlight(const std::string& scenario,
                            const std::string& op_name, int clients,
                            const AsyncOp& op);
  // Medians over the reps; printed and returned.
  Point Summarize(const std::string& scenario, const std::string& op,
                  int clients, const std::vector<Sample>& reps);
  // Measure, --reps times, into points_.
  void MeasurePoint(const std::string& scenario, const std::string& op_name,
                    int clients, const Op& op);
  // What MeasurePoint and MeasurePointInFlight share: `measure` for
  // --warmup-s the first time (scenario, op) is measured, then --reps
  // times for --min-s, summarized into points_.
  void MeasureReps(const std::string& scenario, const std::string& op_name,
                   int clients,
                   absl::FunctionRef<Sample(double seconds)> measure);
  // The point of (scenario, op) measured earlier in this run, or null.
  const Point* FindPoint(const std::string& scenario,
                         const std::string& op) const;

  // Counts a right answer ("" failure) or a wrong one. Any thread.
  void Check(const std::string& what, const std::string& failure);
  // Counts `right` right answers of `what` at once. Any thread.
  void CountRight(const std::string& what, int64_t right);

  // The request of query `q` with `inputs` (EDN) against the run's
  // database, at `basis` if set.
  v1::QueryRequest QueryRequest(const std::string& q,
                                const std::vector<std::string>& inputs,
                                const v1::Basis* basis) const;
  // Runs a query and shows `on_row` every row of the answer, in the order
  // they come; the basis it read into *basis_tx if set. No row is copied
  // or kept: checks compare as the rows go by.
  [[nodiscard]] absl::Status Query(const std::string& q,
                                   const std::vector<std::string>& inputs,
                                   RowVisitor on_row,
                                   const v1::Basis* basis = nullptr,
                                   int64_t* basis_tx = nullptr);

  static std::string Quote(const std::string& s) { return "\"" + s + "\""; }
  // The index in an issue's title ("Issue 42: crash" -> 42), or -1 for a
  // title not of that form.
  static int64_t IssueIndex(std::string_view title);
  // Whether `text` is exactly `prefix` followed by `n` in decimal
  // (UserName(n) is "User " and n), without building the string.
  static bool IsNumbered(std::string_view text, std::string_view prefix,
                         int64_t n);
  // The index of `keyword` in kStates, or -1.
  static int StateIndex(std::string_view keyword);

  // The operations; each returns "" when the answer is right.
  std::string Ping();
  std::string Q1(std::mt19937_64& rng);
  std::string Q2(std::mt19937_64& rng, bool as_of);
  std::string Q3();
  std::string Q4();
  std::string PullIssue(std::mt19937_64& rng);
  // since(t_since): the distinct issues, and the basis read. An error
  // message for a failed call, else "".
  std::string SinceRows(int64_t* rows, int64_t* basis_tx);
  // since(t_since) checked against the truth plus the pool members the
  // mixed writer changed (no writer running): exactly the entity ids of
  // the issues whose state changed after t_since.
  std::string Since();
  // The entity ids of the issues the dataset's history changes after
  // t_since (the final quarter), sorted; computed once. Any thread.
  const std::vector<int64_t>& SinceHistoryIds();
  std::string Inputs(std::mt19937_64& rng);
  // fulltext: kFulltextSearch, checked against the titles' count;
  // fulltext_few: a search for one issue's index, which finds that issue.
  std::string Fulltext();
  std::string FulltextFew(std::mt19937_64& rng);
  std::string ReadMix(std::mt19937_64& rng);
  // The reads above as checks (q1, q2 or its as_of, pull, input
  // bindings; the read mix picks one of q1, q2 and pull).
  std::shared_ptr<ReadCheck> Q1Check(std::mt19937_64& rng);
  std::shared_ptr<ReadCheck> Q2Check(std::mt19937_64& rng, bool as_of);
  std::shared_ptr<ReadCheck> PullCheck(std::mt19937_64& rng);
  std::shared_ptr<ReadCheck> InputsCheck(std::mt19937_64& rng);
  std::shared_ptr<ReadCheck> ReadMixCheck(std::mt19937_64& rng);
  // q3 and q4 as checks, and since's count (Since() checks its issues).
  std::shared_ptr<ReadCheck> Q3Check();
  std::shared_ptr<ReadCheck> Q4Check();
  std::shared_ptr<ReadCheck> SinceCountCheck();
  // Runs a check's query and waits; "" when right. The query is the
  // operation's CallSpan.
  std::string RunCheck(ReadCheck& check);
  // Starts a check's query as one QueryFirst call and returns; `answered`
  // gets the check's verdict (an answer QueryFirst did not give whole is
  // a failure: these reads are small).
  void RunCheckAsync(std::shared_ptr<ReadCheck> check, Answered answered);
  std::string Write();
  void WriteAsync(Answered answered);
  // A write's request (false: out of bench labels) and its answer's check.
  bool WriteRequest(v1::TransactRequest* request);
  std::string WriteAnswered(
      const absl::StatusOr<v1::TransactResponse>& response);
  std::string Pong(const absl::StatusOr<v1::PingResponse>& pong);

  [[nodiscard]] absl::Status SetUpWrites();
  [[nodiscard]] absl::Status CheckWrites();
  [[nodiscard]] absl::Status ColdVsWarm();  // sustained_scenario.cc
  [[nodiscard]] absl::Status Sustained();   // sustained_scenario.cc
  [[nodiscard]] absl::Status Mixed();       // mixed_scenario.cc
  [[nodiscard]] absl::Status Paired();      // paired_scenario.cc
  // The pool members' state and priority in the database equal the
  // recorded ones (check `what`).
  [[nodiscard]] absl::Status CheckPool(const std::string& what);
  // "" when the server's pool issues hold the states and priorities the
  // pool file records; otherwise the first difference.
  [[nodiscard]] absl::StatusOr<std::string> PoolMismatch();
  [[nodiscard]] absl::Status WriteEnv();
  int64_t ServerRss();

  bool Wanted(const std::string& s) const;

  client::Client& client_;
  const RunOptions& options_;
  const DatasetMeta meta_;
  const DatasetTruth truth_;
  const LoadRecord load_;
  MixedPool pool_;  // changed only by Mixed, with no other scenario running
  std::vector<int64_t> probes_;
  std::once_flag since_history_once_;
  std::vector<int64_t> since_history_ids_;
  int64_t fulltext_truth_ = -1;  // issues kFulltextSearch finds
  std::vector<Point> points_;
  // Operations MeasureReps has warmed up (--warmup-s), by scenario/op.
  std::set<std::string> warmed_;
  std::vector<std::string> notes_;
  // paired's in-process engine (--engine-data), opened by its first use.
  std::unique_ptr<EngineBeside> engine_;

  absl::Mutex mu_;  // Check is called from the scenarios' threads
  std::map<std::string, int64_t> checks_ok_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int64_t> checks_failed_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> failures_ ABSL_GUARDED_BY(mu_);

  // Writes: distinct (issue, bench label) pairs.
  std::vector<int64_t> bench_labels_;
  std::atomic<int64_t> write_counter_{0};
  std::atomic<int64_t> writes_acked_{0};
};

}  // namespace mentat::bench

#endif  // MENTAT_BENCH_SUITE_RUNNER_H_
