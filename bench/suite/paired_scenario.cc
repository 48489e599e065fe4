// mentat-bench run's paired scenario: each single-client read alternated
// call by call with a ping on the same connection, so that a read's cost
// above the RPC floor is measured in the same seconds as the floor. On a
// shared VM whose speed drifts (the same binary's ping p50 0.06 and 0.11
// ms in consecutive runs), a read and a ping measured one after the other
// can differ by more than the gap the issue's goals are about.
// With --engine-data, each block of reads also runs in this process
// (EngineBeside) right after it is served, so the served call is set
// against ping + engine from the same seconds, and the engine's rows are
// checked against the served answer's.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <vector>

#include "mentat/base/str_cat.h"
#include "suite/engine_beside.h"
#include "suite/runner.h"

namespace mentat::bench {
namespace {

using Clock = std::chrono::steady_clock;

// A block of reads (see Paired): 128 of them or, for slow reads (q4), as
// many as 100 ms of serving takes: long enough for a side to warm up,
// short enough that the machine's speed has not moved between the sides.
constexpr size_t kBlockReads = 128;
constexpr std::chrono::milliseconds kBlockTime(100);

// The basis a served read asked for, for the engine beside it (the
// benchmark's reads name a tx, never an instant).
storage::Basis EngineBasis(const std::optional<v1::Basis>& basis) {
  if (!basis.has_value()) return storage::Basis::Current();
  switch (basis->kind()) {
    case v1::Basis::AS_OF:
      return storage::Basis::AsOf(basis->tx());
    case v1::Basis::SINCE:
      return storage::Basis::Since(basis->tx());
    case v1::Basis::HISTORY:
      return storage::Basis::History();
    default:
      return storage::Basis::Current();
  }
}

double MsSince(Clock::time_point t0, Clock::time_point t1) {
  return std::chrono::duration<double, std::milli>(t1 - t0).count();
}

}  // namespace

absl::Status Runner::Paired() {
  struct Read {
    const char* op;
    std::function<std::shared_ptr<ReadCheck>(std::mt19937_64&)> check;
  };
  const Read reads[] = {
      {"q1", [&](std::mt19937_64& r) { return Q1Check(r); }},
      {"pull", [&](std::mt19937_64& r) { return PullCheck(r); }},
      {"q2", [&](std::mt19937_64& r) { return Q2Check(r, false); }},
      {"q2_as_of", [&](std::mt19937_64& r) { return Q2Check(r, true); }},
      {"inputs_100", [&](std::mt19937_64& r) { return InputsCheck(r); }},
      {"q3", [&](std::mt19937_64&) { return Q3Check(); }},
      {"q4", [&](std::mt19937_64&) { return Q4Check(); }},
      {"since", [&](std::mt19937_64&) { return SinceCountCheck(); }},
  };
  if (!options_.engine_data.empty() && engine_ == nullptr) {
    absl::StatusOr<std::unique_ptr<EngineBeside>> opened =
        EngineBeside::Open(options_.engine_data);
    // Not a wrong answer: the run cannot measure what it was asked to.
    if (!opened.ok()) return opened.status();
    engine_ = *std::move(opened);
  }
  for (const Read& read : reads) {
    const std::string ping_op = StrCat("ping@", read.op);
    const std::string engine_op = StrCat("engine@", read.op);
    // One run of `seconds` (and at least --min-samples rounds): a ping, the
    // read, and with --engine-data the same read in this process, each
    // timed alone, in turn.
    auto rounds = [&](double seconds, Sample* ping, Sample* op,
                      Sample* engine) {
      std::mt19937_64 rng(7919);
      const auto start = Clock::now();
      const auto end = start + std::chrono::duration<double>(seconds);
      const size_t min_rounds = static_cast<size_t>(options_.min_samples);
      int64_t right = 0;
      auto tally = [&](const std::string& failure, Sample* sample) {
        if (failure.empty()) {
          ++right;
        } else {
          Check("paired", failure);
          sample->errors++;
        }
      };
      while (Clock::now() < end || op->ms.size() < min_rounds) {
        // A block of served reads, each after a ping, then with
        // --engine-data the same reads in this process: each side runs
        // warm, as it would back to back, and the two blocks are a few
        // milliseconds apart. Read by read the engine's run evicted the
        // server's caches and let its threads sleep, slowing the next
        // served call by more than the margins measured.
        struct Served {
          std::shared_ptr<ReadCheck> check;
          int64_t rows = 0;  // the served answer's, which the engine's match
        };
        // Reserved whole: the row counters' addresses must not move.
        std::vector<Served> block;
        block.reserve(kBlockReads);
        // The block's first ping wakes the server after the engine's turn
        // (mentatd --unary-spin-us), untimed.
        if (engine_ != nullptr) Ping();
        const auto block_end = Clock::now() + kBlockTime;
        while (block.size() < kBlockReads &&
               (block.empty() || Clock::now() < block_end)) {
          Served& b = block.emplace_back();
          b.check = read.check(rng);
          b.check->on_row = [rows = &b.rows, see = std::move(b.check->on_row)](
                                const client::WireRow& r) {
            ++*rows;
            see(r);
          };
          double ping_ms = 0, op_ms = 0;
          tally(CallSpan::Time([&] { return Ping(); }, &ping_ms), ping);
          tally(CallSpan::Time([&] { return RunCheck(*b.check); }, &op_ms), op);
          ping->ms.push_back(ping_ms);
          op->ms.push_back(op_ms);
        }
        if (engine_ == nullptr) continue;
        for (const Served& b : block) {
          // Read as the server reads them, before the clock starts (as
          // query-bench's inputs are made before it times a query).
          absl::StatusOr<std::vector<edn::EdnValue>> inputs =
              EngineBeside::Inputs(b.check->inputs);
          const storage::Basis basis = EngineBasis(b.check->basis);
          double engine_ms = 0;
          const std::string failure = CallSpan::Time(
              [&]() -> std::string {
                if (!inputs.ok()) return inputs.status().ToString();
                absl::StatusOr<int64_t> rows =
                    engine_->Rows(b.check->query, *inputs, basis);
                if (!rows.ok()) return rows.status().ToString();
                if (*rows == b.rows) return "";
                return StrCat(read.op, ": ", *rows, " rows in process, ",
                              b.rows, " served");
              },
              &engine_ms);
          tally(failure, engine);
          engine->ms.push_back(engine_ms);
        }
      }
      ping->seconds = op->seconds = engine->seconds =
          MsSince(start, Clock::now()) / 1000;
      CountRight("paired", right);
    };
    if (options_.warmup_s > 0) {
      Sample ping, op, engine;
      rounds(options_.warmup_s, &ping, &op, &engine);
    }
    std::vector<Sample> ping_reps, op_reps, engine_reps;
    for (int r = 0; r < options_.reps; ++r) {
      ping_reps.emplace_back();
      op_reps.emplace_back();
      engine_reps.emplace_back();
      rounds(options_.min_s, &ping_reps.back(), &op_reps.back(),
             &engine_reps.back());
    }
    const Point ping = Summarize("paired", ping_op, 1, ping_reps);
    const Point op = Summarize("paired", read.op, 1, op_reps);
    // The rates count rounds: each point's own calls took part of the time.
    points_.push_back(ping);
    points_.push_back(op);
    if (engine_ == nullptr) {
      std::printf("%-18s %-12s p50 %.1f us above its pings'\n", "paired",
                  read.op, (op.p50 - ping.p50) * 1000);
    } else {
      const Point engine = Summarize("paired", engine_op, 1, engine_reps);
      points_.push_back(engine);
      // Issue 18's yardstick: the served call against ping + engine.
      const double floor = ping.p50 + engine.p50;
      std::printf(
          "%-18s %-12s p50 %.1f us above its pings'; %.1f us (%+.1f%%) above "
          "ping + engine in process\n",
          "paired", read.op, (op.p50 - ping.p50) * 1000,
          (op.p50 - floor) * 1000, (op.p50 / floor - 1) * 100);
    }
    std::fflush(stdout);
  }
  return absl::OkStatus();
}

}  // namespace mentat::bench
