// mentat-bench run's paired scenario: each single-client read alternated
// call by call with a ping on the same connection, so that a read's cost
// above the RPC floor is measured in the same seconds as the floor. On a
// shared VM whose speed drifts (the same binary's ping p50 0.06 and 0.11
// ms in consecutive runs), a read and a ping measured one after the other
// can differ by more than the gap the issue's goals are about.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>

#include "mentat/base/str_cat.h"
#include "suite/runner.h"

namespace mentat::bench {
namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point t0, Clock::time_point t1) {
  return std::chrono::duration<double, std::milli>(t1 - t0).count();
}

}  // namespace

void Runner::Paired() {
  struct Read {
    const char* op;
    Op run;
  };
  const Read reads[] = {
      {"q1", [&](int, std::mt19937_64& r) { return Q1(r); }},
      {"pull", [&](int, std::mt19937_64& r) { return PullIssue(r); }},
      {"q2", [&](int, std::mt19937_64& r) { return Q2(r, false); }},
      {"q2_as_of", [&](int, std::mt19937_64& r) { return Q2(r, true); }},
      {"inputs_100", [&](int, std::mt19937_64& r) { return Inputs(r); }},
  };
  for (const Read& read : reads) {
    const std::string ping_op = StrCat("ping@", read.op);
    // One run of `seconds` (and at least --min-samples pairs): a ping, then
    // the read, each timed alone, in turn.
    auto pairs = [&](double seconds, Sample* ping, Sample* op) {
      std::mt19937_64 rng(7919);
      const auto start = Clock::now();
      const auto end = start + std::chrono::duration<double>(seconds);
      const size_t min_pairs = static_cast<size_t>(options_.min_samples);
      int64_t right = 0;
      auto tally = [&](const std::string& failure, Sample* sample) {
        if (failure.empty()) {
          ++right;
        } else {
          Check("paired", failure);
          sample->errors++;
        }
      };
      while (Clock::now() < end || op->ms.size() < min_pairs) {
        double ping_ms = 0, op_ms = 0;
        const std::string ping_failure =
            CallSpan::Time([&] { return Ping(); }, &ping_ms);
        const std::string failure =
            CallSpan::Time([&] { return read.run(0, rng); }, &op_ms);
        ping->ms.push_back(ping_ms);
        op->ms.push_back(op_ms);
        tally(ping_failure, ping);
        tally(failure, op);
      }
      ping->seconds = op->seconds = MsSince(start, Clock::now()) / 1000;
      CountRight("paired", right);
    };
    if (options_.warmup_s > 0) {
      Sample ping, op;
      pairs(options_.warmup_s, &ping, &op);
    }
    std::vector<Sample> ping_reps, op_reps;
    for (int r = 0; r < options_.reps; ++r) {
      ping_reps.emplace_back();
      op_reps.emplace_back();
      pairs(options_.min_s, &ping_reps.back(), &op_reps.back());
    }
    const Point ping = Summarize("paired", ping_op, 1, ping_reps);
    const Point op = Summarize("paired", read.op, 1, op_reps);
    // The rates count pairs: each point's own calls took part of the time.
    std::printf("%-18s %-12s p50 %.1f us above its pings'\n", "paired", read.op,
                (op.p50 - ping.p50) * 1000);
    std::fflush(stdout);
    points_.push_back(ping);
    points_.push_back(op);
  }
}

}  // namespace mentat::bench
