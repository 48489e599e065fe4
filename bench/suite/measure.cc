// mentat-bench's measuring loops: a thread per client waiting on each
// call (Measure), or every client's call kept in flight from gRPC's
// threads (MeasureInFlight), and the summary of a scenario's repetitions.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <random>
#include <thread>

#include "absl/functional/function_ref.h"
#include "absl/synchronization/mutex.h"
#include "mentat/base/str_cat.h"
#include "stats_util.h"
#include "suite/runner.h"
#include "suite/suite.h"

namespace mentat::bench {
namespace {

using Clock = std::chrono::steady_clock;

struct MarkedCall {
  bool started = false;
  bool stopped = false;
  Clock::time_point start;
  Clock::time_point stop;
};
thread_local MarkedCall marked_call;

}  // namespace

std::string CallSpan::Time(absl::FunctionRef<std::string()> op, double* ms) {
  marked_call = MarkedCall();
  Clock::time_point t0 = Clock::now();
  std::string failure = op();
  Clock::time_point t1 = Clock::now();
  if (marked_call.stopped) {
    t0 = marked_call.start;
    t1 = marked_call.stop;
  }
  *ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
  return failure;
}

void CallSpan::Start() {
  marked_call.started = true;
  marked_call.start = Clock::now();
}

void CallSpan::Stop() {
  marked_call.stop = Clock::now();
  marked_call.stopped = marked_call.started;
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
      double ms = 0;
      const std::string failure =
          CallSpan::Time([&] { return op(w, rng); }, &ms);
      mine.push_back(ms);
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

Sample Runner::MeasureInFlight(const std::string& what, int clients,
                               double seconds, const AsyncOp& op) {
  // Each client's calls follow one another (the next starts in the last
  // one's answer), so its slot is touched by one call at a time, on
  // whichever gRPC thread answered: no lock per call.
  struct Slot {
    std::vector<double> ms;
    Clock::time_point t0;
    int warm = 3;
    int64_t right = 0;
    std::mt19937_64 rng;
  };
  std::vector<Slot> slots(static_cast<size_t>(clients));
  for (size_t i = 0; i < slots.size(); ++i) slots[i].rng.seed(i * 7919 + 17);
  std::atomic<int64_t> errors{0};
  absl::Mutex mu;
  int running = clients;
  const auto start = Clock::now();
  const auto end = start + std::chrono::duration<double>(seconds);
  const size_t min_each =
      static_cast<size_t>(std::max(1, options_.min_samples / clients));
  std::function<void(size_t)> next = [&](size_t i) {
    slots[i].t0 = Clock::now();
    op(slots[i].rng, [&, i](std::string failure) {
      Slot& slot = slots[i];
      const auto now = Clock::now();
      if (slot.warm > 0) {
        --slot.warm;
      } else {
        slot.ms.push_back(
            std::chrono::duration<double, std::milli>(now - slot.t0).count());
        if (!failure.empty()) {
          errors++;
          Check(what, failure);
        } else {
          ++slot.right;
        }
      }
      if (slot.warm > 0 || now < end || slot.ms.size() < min_each) {
        next(i);
        return;
      }
      CountRight(what, slot.right);
      absl::MutexLock lock(&mu);
      --running;
    });
  };
  for (size_t i = 0; i < slots.size(); ++i) next(i);
  {
    absl::MutexLock lock(&mu);
    mu.Await(absl::Condition(
        +[](int* n) { return *n == 0; }, &running));
  }
  Sample sample;
  sample.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  for (Slot& s : slots)
    sample.ms.insert(sample.ms.end(), s.ms.begin(), s.ms.end());
  sample.errors = errors;
  return sample;
}

void Runner::MeasurePointInFlight(const std::string& scenario,
                                  const std::string& op_name, int clients,
                                  const AsyncOp& op) {
  MeasureReps(scenario, op_name, clients, [&](double seconds) {
    return MeasureInFlight(scenario, clients, seconds, op);
  });
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
  MeasureReps(scenario, op_name, clients, [&](double seconds) {
    return Measure(scenario, clients, seconds, op);
  });
}

void Runner::MeasureReps(const std::string& scenario,
                         const std::string& op_name, int clients,
                         absl::FunctionRef<Sample(double seconds)> measure) {
  // Once per operation, its first point runs unmeasured for --warmup-s: a
  // scenario over random keys (pull: 130K issues at s) otherwise measures
  // mostly first touches of records the server caches after.
  if (options_.warmup_s > 0 &&
      warmed_.insert(StrCat(scenario, "/", op_name)).second) {
    (void)measure(options_.warmup_s);
  }
  std::vector<Sample> reps;
  for (int r = 0; r < options_.reps; ++r) {
    reps.push_back(measure(options_.min_s));
  }
  points_.push_back(Summarize(scenario, op_name, clients, reps));
}

}  // namespace mentat::bench
