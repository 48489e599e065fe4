// query-bench: the workload's queries through the query engine,
// in-process (no network), with every answer checked against the truth
// computed from the generator.
//
//   query-bench --scale s --dir DIR [--seconds 2] [--only q2,q4]
//               [--explain 1] [--entity-cache-mb N] [--value-cache-mb N]
//               [--column-cache-mb N] [--writer-tps N] [--first-q4 1]
//               [--runs N] [--cold-kb N] [--warm 0|1]
//
// Loads the workload into DIR the first time (then reuses it), runs q1,
// pull, q2, q2 with its clauses reversed, as_of q2, input bindings, since,
// q3 (from the statistics and by scan) and q4, and prints count, p50, p95,
// p99 and max in microseconds per scenario. --only runs the named
// scenarios; --explain prints each query's profiled plan before it runs.
// --writer-tps N then runs since, q3, q3_scan and q4 again (as since+w,
// ...) while a writer commits N transactions a second into :issue/state
// and :issue/priority (SwapWriter: the answers stay checkable).
// --first-q4 1 times one q4 right after the store opens, before anything
// else (the columns the store remembers are still being built), and how
// long the store takes to finish building them.
// --cold-kb N writes to N KiB of other memory before every timed call, as
// a served call's RPC path, kernel and client do between two queries: the
// figures are then of an engine whose caches hold less of its code and
// data (2048, about this machine's L2, brings q2 near the engine's share
// of a served call).

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "loader.h"
#include "mentat/query/query_engine.h"
#include "stats_util.h"
#include "swap_writer.h"
#include "truth.h"
#include "workload_queries.h"

namespace mentat::bench {
namespace {

using Clock = std::chrono::steady_clock;
using edn::EdnValue;
using query::QueryEngine;
using storage::Basis;

// q2 with its clauses in the reverse order: the planner must find the
// same plan.
constexpr char kQ2Reversed[] =
    "[:find ?i ?title ?state :in $ ?email :where [?i :issue/state ?state] "
    "[?i :issue/title ?title] [?i :issue/assignee ?u] "
    "[?u :user/email ?email]]";

struct Args {
  std::string scale = "s";
  std::string dir = "bench-store";
  double seconds = 2;
  std::string only;  // comma-separated scenario names; empty: all
  bool explain = false;
  // StoreOptions::entity_cache_bytes in MiB; negative: the default.
  int64_t entity_cache_mb = -1;
  int64_t value_cache_mb = -1;
  int64_t column_cache_mb = -1;
  // StoreOptions::warm_entity_cache (mentatd's default), waited for before
  // the first scenario.
  bool warm = false;
  double writer_tps = 0;  // > 0: run the write-sensitive scenarios again
  bool first_q4 = false;
};

// True if `name` is among the comma-separated `only` (or `only` is empty).
bool Selected(const Args& args, std::string_view name) {
  if (args.only.empty()) return true;
  std::string_view rest = args.only;
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    if (rest.substr(0, comma) == name) return true;
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return false;
}

int failures = 0;

void Fail(const char* scenario, const std::string& why) {
  failures++;
  std::fprintf(stderr, "CHECK FAILED %s: %s\n", scenario, why.c_str());
}

// The span a scenario times: only its engine call, so that making the
// inputs and checking the answer stay out of the figures.
struct Lap {
  Clock::time_point start;
  Clock::time_point stop;
  // --cold-kb: written (one byte a cache line) before each timed call.
  std::vector<char>* cold = nullptr;

  template <typename F>
  auto Time(F&& f) {
    if (cold != nullptr) {
      // A new value each time, so that no line stays clean and shared.
      for (size_t i = 0; i < cold->size(); i += 64) ++(*cold)[i];
    }
    start = Clock::now();
    auto result = f();
    stop = Clock::now();
    return result;
  }
};

// Called after a scenario's warm-up calls: columns they asked for are
// built in the background, and the figures are of warm queries.
std::function<void()> after_warm_up;
// --runs: exactly this many timed calls per scenario instead of
// --seconds' worth (instruction counts under callgrind: the difference
// of two counts is the cost of the extra runs alone).
int64_t runs = 0;
// --cold-kb, in bytes (0: none).
size_t cold_bytes = 0;

// Runs `op` repeatedly for `seconds` (at least 30 times, 3 warm-up calls
// discarded) and prints the percentiles of the laps it timed.
void Measure(const char* name, double seconds,
             const std::function<bool(Lap&)>& op) {
  Lap lap;
  std::vector<char> cold(cold_bytes);
  if (!cold.empty()) lap.cold = &cold;
  for (int i = 0; i < 3; ++i) {
    if (!op(lap)) return;
  }
  if (after_warm_up) after_warm_up();
  std::vector<double> micros;
  const auto end = Clock::now() + std::chrono::duration<double>(seconds);
  while (runs > 0 ? micros.size() < static_cast<size_t>(runs)
                  : Clock::now() < end || micros.size() < 30) {
    const bool ok = op(lap);
    micros.push_back(
        std::chrono::duration<double, std::micro>(lap.stop - lap.start)
            .count());
    if (!ok) break;
  }
  const Percentiles p = ComputePercentiles(micros);
  std::printf("%-16s %8zu %10.1f %10.1f %10.1f %10.1f\n", name, p.count, p.p50,
              p.p95, p.p99, p.max);
  std::fflush(stdout);
}

int Run(const Args& args) {
  WorkloadScale scale;
  if (!ScaleByName(args.scale, &scale)) {
    std::fprintf(stderr, "unknown scale %s\n", args.scale.c_str());
    return 2;
  }
  storage::StoreOptions options;
  if (args.entity_cache_mb >= 0) {
    options.entity_cache_bytes = static_cast<size_t>(args.entity_cache_mb)
                                 << 20;
  }
  if (args.value_cache_mb >= 0) {
    options.value_cache_bytes = static_cast<size_t>(args.value_cache_mb) << 20;
  }
  if (args.column_cache_mb >= 0) {
    options.column_cache_bytes = static_cast<size_t>(args.column_cache_mb)
                                 << 20;
  }
  options.warm_entity_cache = args.warm;
  auto opened = storage::Store::Open(args.dir, options);
  if (!opened.ok()) {
    std::fprintf(stderr, "%s\n", opened.status().ToString().c_str());
    return 1;
  }
  std::unique_ptr<storage::Store> store = std::move(*opened);
  const Clock::time_point opened_at = Clock::now();
  auto meta = ReadLoadMeta(args.dir, scale);
  if (!meta.ok() && meta.status().code() != absl::StatusCode::kNotFound) {
    std::fprintf(stderr, "%s\n", meta.status().ToString().c_str());
    return 1;
  }
  // --first-q4: before anything else has read the store (a cold block
  // cache, and the remembered columns being built meanwhile).
  int64_t first_q4_rows = -1;
  if (args.first_q4 && meta.ok()) {
    QueryEngine first_engine;
    const Clock::time_point start = Clock::now();
    auto r = first_engine.Query(kQ4, store->Latest()->View(Basis::Current()),
                                {EdnValue::Int(4)});
    const Clock::time_point stop = Clock::now();
    if (!r.ok()) Fail("q4_first", r.status().ToString());
    first_q4_rows = r.ok() ? static_cast<int64_t>(r->rows.size()) : -1;
    store->WaitForColumns();
    auto ms = [](Clock::duration d) {
      return std::chrono::duration<double, std::milli>(d).count();
    };
    std::printf(
        "q4_first: %.1f ms (%.1f ms after the store opened); columns "
        "built %.1f ms after it opened\n",
        ms(stop - start), ms(stop - opened_at), ms(Clock::now() - opened_at));
  }
  if (!meta.ok()) {
    std::printf("loading scale %s into %s...\n", scale.name.c_str(),
                args.dir.c_str());
    auto loaded = ImportWorkload(store.get(), scale);
    if (!loaded.ok()) {
      std::fprintf(stderr, "load: %s\n", loaded.status().ToString().c_str());
      return 1;
    }
    absl::Status s = store->Flush();
    if (s.ok()) s = store->CompactAll();
    if (s.ok()) s = SaveLoadMeta(args.dir, scale, *loaded);
    if (!s.ok()) {
      std::fprintf(stderr, "%s\n", s.ToString().c_str());
      return 1;
    }
    meta = std::move(loaded);
  }
  std::mt19937_64 rng(42);
  std::set<int64_t> probes;
  while (probes.size() < 50)
    probes.insert(static_cast<int64_t>(rng() % scale.users));
  const Truth truth = ComputeTruth(scale, probes);
  if (first_q4_rows >= 0 && first_q4_rows != truth.open_at_least[4]) {
    Fail("q4_first", "got " + std::to_string(first_q4_rows) + " rows");
  }
  const std::vector<int64_t> probe_list(probes.begin(), probes.end());

  QueryEngine engine;
  after_warm_up = [&] {
    store->WaitForColumns();
    store->WaitForWarmCache();
  };
  auto db = store->Latest();
  const auto current = db->View(Basis::Current());
  const auto as_of = db->View(Basis::AsOf(meta->t_mid));
  const storage::EntityId since_t = meta->t_since;
  const int64_t since_expected = truth.changed_after_since;
  const auto since = db->View(Basis::Since(since_t));

  std::printf("scale %s, basis %lld; latencies in microseconds\n",
              scale.name.c_str(), static_cast<long long>(db->basis_tx()));
  std::printf("%-16s %8s %10s %10s %10s %10s\n", "scenario", "count", "p50",
              "p95", "p99", "max");

  // Runs scenario `name` if selected, then prints the profiled plan of
  // `text` on `view` with `inputs` when asked.
  auto bench = [&](const char* name, std::string_view text,
                   const storage::DbView& view,
                   const std::vector<EdnValue>& inputs,
                   const std::function<bool(Lap&)>& op) {
    if (!Selected(args, name)) return;
    Measure(name, args.seconds, op);
    // After the runs: the profile of a warm query, as the figures are.
    if (args.explain) {
      auto plan = engine.Explain(text, view, inputs, /*profile=*/true);
      std::printf("%s\n",
                  plan.ok() ? plan->c_str() : plan.status().ToString().c_str());
    }
  };
  const std::vector<EdnValue> probe_email = {
      EdnValue::String(UserEmail(probe_list[0]))};
  query::QueryOptions scan;
  scan.use_statistics = false;

  bench("q1", kQ1, current, probe_email, [&](Lap& lap) {
    const int64_t k = static_cast<int64_t>(rng() % scale.users);
    const std::vector<EdnValue> in = {EdnValue::String(UserEmail(k))};
    auto r = lap.Time([&] { return engine.Query(kQ1, current, in); });
    if (!r.ok()) return Fail("q1", r.status().ToString()), false;
    if (r->rows.size() != 1 || r->rows[0][1] != EdnValue::String(UserName(k))) {
      return Fail("q1", "wrong answer for user " + std::to_string(k)), false;
    }
    return true;
  });
  bench(
      "pull", kPull, current, {EdnValue::Int(meta->issue_ids[0])},
      [&](Lap& lap) {
        const int64_t idx = static_cast<int64_t>(rng() % scale.issues);
        const std::vector<EdnValue> in = {
            EdnValue::Int(meta->issue_ids[static_cast<size_t>(idx)])};
        auto r = lap.Time([&] { return engine.Query(kPull, current, in); });
        if (!r.ok()) return Fail("pull", r.status().ToString()), false;
        const Issue issue = GenerateIssue(scale, idx);
        const EdnValue map = r->ToEdn();
        const EdnValue* title = map.Get("issue/title");
        const EdnValue* priority = map.Get("issue/priority");
        if (title == nullptr || *title != EdnValue::String(issue.title) ||
            priority == nullptr || *priority != EdnValue::Int(issue.priority)) {
          return Fail("pull", "wrong answer for issue " + std::to_string(idx)),
                 false;
        }
        return true;
      });
  auto check_q2 = [&](Lap& lap, const char* name, const char* text,
                      const storage::DbView& view, bool initial) {
    const int64_t k = probe_list[rng() % probe_list.size()];
    const std::vector<EdnValue> in = {EdnValue::String(UserEmail(k))};
    auto r = lap.Time([&] { return engine.Query(text, view, in); });
    if (!r.ok()) return Fail(name, r.status().ToString()), false;
    std::set<std::pair<int64_t, std::string>> got, want;
    for (const auto& row : r->rows)
      got.insert({row[0].as_int(), row[2].text()});
    auto it = truth.assigned.find(k);
    if (it != truth.assigned.end()) {
      for (const auto& [idx, s0, s1] : it->second) {
        want.insert({meta->issue_ids[static_cast<size_t>(idx)],
                     kStates[initial ? s0 : s1]});
      }
    }
    if (got != want) {
      return Fail(name, "wrong answer for user " + std::to_string(k)), false;
    }
    return true;
  };
  bench("q2", kQ2, current, probe_email,
        [&](Lap& lap) { return check_q2(lap, "q2", kQ2, current, false); });
  bench("q2_reversed", kQ2Reversed, current, probe_email, [&](Lap& lap) {
    return check_q2(lap, "q2_reversed", kQ2Reversed, current, false);
  });
  bench("as_of_q2", kQ2, as_of, probe_email,
        [&](Lap& lap) { return check_q2(lap, "as_of_q2", kQ2, as_of, true); });
  std::vector<EdnValue> sample_emails;
  for (int i = 0; i < 100; ++i) {
    sample_emails.push_back(EdnValue::String(UserEmail(i)));
  }
  bench(
      "input_bindings", kInputs, current,
      {EdnValue::Vector(std::move(sample_emails))}, [&](Lap& lap) {
        std::vector<EdnValue> emails;
        std::set<std::string> want;
        for (int i = 0; i < 100; ++i) {
          const int64_t k = static_cast<int64_t>(rng() % scale.users);
          emails.push_back(EdnValue::String(UserEmail(k)));
          want.insert(UserName(k));
        }
        const std::vector<EdnValue> in = {EdnValue::Vector(std::move(emails))};
        auto r = lap.Time([&] { return engine.Query(kInputs, current, in); });
        if (!r.ok())
          return Fail("input_bindings", r.status().ToString()), false;
        std::set<std::string> got;
        for (const auto& row : r->rows) got.insert(row[1].text());
        if (got != want) return Fail("input_bindings", "wrong names"), false;
        return true;
      });
  bench("since", kSince, since, {}, [&](Lap& lap) {
    auto r = lap.Time([&] { return engine.Query(kSince, since, {}); });
    if (!r.ok()) return Fail("since", r.status().ToString()), false;
    if (static_cast<int64_t>(r->rows.size()) != truth.changed_after_since) {
      return Fail("since", "got " + std::to_string(r->rows.size()) + " issues"),
             false;
    }
    return true;
  });
  auto check_q3 = [&](Lap& lap, const char* name,
                      const query::QueryOptions& options,
                      const storage::DbView& view) {
    auto r = lap.Time([&] { return engine.Query(kQ3, view, {}, options); });
    if (!r.ok()) return Fail(name, r.status().ToString()), false;
    for (const auto& row : r->rows) {
      for (int s = 0; s < 5; ++s) {
        if (row[0].is_keyword(kStates[s]) &&
            row[1] != EdnValue::Int(truth.states_final[s])) {
          return Fail(name, "wrong count for " + std::string(kStates[s])),
                 false;
        }
      }
    }
    if (r->rows.size() != 5) return Fail(name, "wrong number of states"), false;
    return true;
  };
  bench("q3", kQ3, current, {},
        [&](Lap& lap) { return check_q3(lap, "q3", {}, current); });
  // The same count without the statistics: one pass over the attribute.
  if (Selected(args, "q3_scan")) {
    Measure("q3_scan", args.seconds,
            [&](Lap& lap) { return check_q3(lap, "q3_scan", scan, current); });
    if (args.explain) {
      auto plan = engine.Explain(kQ3, current, {}, /*profile=*/true, scan);
      std::printf("%s\n",
                  plan.ok() ? plan->c_str() : plan.status().ToString().c_str());
    }
  }
  auto check_q4 = [&](Lap& lap, const char* name, const storage::DbView& view) {
    const std::vector<EdnValue> in = {EdnValue::Int(4)};
    auto r = lap.Time([&] { return engine.Query(kQ4, view, in); });
    if (!r.ok()) return Fail(name, r.status().ToString()), false;
    if (static_cast<int64_t>(r->rows.size()) != truth.open_at_least[4]) {
      return Fail(name, "got " + std::to_string(r->rows.size()) + " rows"),
             false;
    }
    return true;
  };
  bench("q4", kQ4, current, {EdnValue::Int(4)},
        [&](Lap& lap) { return check_q4(lap, "q4", current); });

  // The scenarios a writer changes the data of, again under a writer.
  // Each call reads the latest basis, as a server's queries do.
  if (args.writer_tps > 0) {
    after_warm_up = nullptr;
    SwapWriter writer(store.get(), scale, *meta, args.writer_tps);
    const Clock::time_point started = Clock::now();
    writer.Start();
    auto latest = [&](Basis basis) { return store->Latest()->View(basis); };
    if (Selected(args, "since")) {
      Measure("since+w", args.seconds, [&](Lap& lap) {
        const storage::DbView view = latest(Basis::Since(since_t));
        auto r = lap.Time([&] { return engine.Query(kSince, view, {}); });
        if (!r.ok()) return Fail("since+w", r.status().ToString()), false;
        // The writer's state swaps add their issues, none go.
        const auto rows = static_cast<int64_t>(r->rows.size());
        if (rows < since_expected ||
            rows > since_expected + writer.states_touched()) {
          return Fail("since+w", "got " + std::to_string(rows) + " issues"),
                 false;
        }
        return true;
      });
    }
    if (Selected(args, "q3")) {
      Measure("q3+w", args.seconds, [&](Lap& lap) {
        return check_q3(lap, "q3+w", {}, latest(Basis::Current()));
      });
    }
    if (Selected(args, "q3_scan")) {
      Measure("q3_scan+w", args.seconds, [&](Lap& lap) {
        return check_q3(lap, "q3_scan+w", scan, latest(Basis::Current()));
      });
    }
    if (Selected(args, "q4")) {
      Measure("q4+w", args.seconds, [&](Lap& lap) {
        return check_q4(lap, "q4+w", latest(Basis::Current()));
      });
    }
    writer.Stop();
    const double seconds =
        std::chrono::duration<double>(Clock::now() - started).count();
    std::printf(
        "writer: %lld tx committed in %.1f s (%.0f tx/s), %lld "
        "failed; column folds so far: %llu\n",
        static_cast<long long>(writer.committed()), seconds,
        static_cast<double>(writer.committed()) / seconds,
        static_cast<long long>(writer.failed()),
        static_cast<unsigned long long>(store->column_cache_counters().folds));
    if (writer.failed() > 0) Fail("writer", "transactions failed");
  }
  for (const auto& [name, cache] :
       {std::pair{"entity", store->entity_cache_counters()},
        std::pair{"value", store->value_cache_counters()},
        std::pair{"column", store->column_cache_counters()}}) {
    std::printf("%s cache: %llu hits, %llu misses, %llu entries in %.1f MB\n",
                name, static_cast<unsigned long long>(cache.hits),
                static_cast<unsigned long long>(cache.misses),
                static_cast<unsigned long long>(cache.entries),
                cache.bytes / 1e6);
  }
  std::printf("checks: %s\n", failures == 0 ? "all passed" : "FAILED");
  return failures == 0 ? 0 : 1;
}

}  // namespace
}  // namespace mentat::bench

int main(int argc, char** argv) {
  // As in mentatd (ServerImpl::Start): Debian's abseil keeps absl::Mutex's
  // deadlock detection on, a global graph lookup on every lock (the record
  // caches lock a shard per probe), which would make the engine look slower
  // here than it is in the server.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  auto usage = [] {
    std::fprintf(
        stderr,
        "usage: query-bench [--scale xs|s|m] [--dir DIR] [--seconds N] "
        "[--only q1,pull,q2,q2_reversed,as_of_q2,input_bindings,since,q3,"
        "q3_scan,q4] [--explain 0|1] [--entity-cache-mb N] "
        "[--value-cache-mb N] [--column-cache-mb N] [--writer-tps N] "
        "[--first-q4 0|1] [--runs N] [--cold-kb N] [--warm 0|1]\n");
    return 2;
  };
  mentat::bench::Args args;
  for (int i = 1; i < argc; i += 2) {
    // Every flag takes a value: a lone one (--help too) is a usage error.
    if (i + 1 == argc) return usage();
    const char* value = argv[i + 1];
    if (std::strcmp(argv[i], "--scale") == 0) {
      args.scale = value;
    } else if (std::strcmp(argv[i], "--dir") == 0) {
      args.dir = value;
    } else if (std::strcmp(argv[i], "--seconds") == 0) {
      args.seconds = std::atof(value);
    } else if (std::strcmp(argv[i], "--only") == 0) {
      args.only = value;
    } else if (std::strcmp(argv[i], "--explain") == 0) {
      args.explain = std::atoi(value) != 0;
    } else if (std::strcmp(argv[i], "--entity-cache-mb") == 0) {
      args.entity_cache_mb = std::atoll(value);
    } else if (std::strcmp(argv[i], "--value-cache-mb") == 0) {
      args.value_cache_mb = std::atoll(value);
    } else if (std::strcmp(argv[i], "--column-cache-mb") == 0) {
      args.column_cache_mb = std::atoll(value);
    } else if (std::strcmp(argv[i], "--warm") == 0) {
      args.warm = std::atoi(value) != 0;
    } else if (std::strcmp(argv[i], "--writer-tps") == 0) {
      args.writer_tps = std::atof(value);
    } else if (std::strcmp(argv[i], "--first-q4") == 0) {
      args.first_q4 = std::atoi(value) != 0;
    } else if (std::strcmp(argv[i], "--runs") == 0) {
      mentat::bench::runs = std::atoll(value);
    } else if (std::strcmp(argv[i], "--cold-kb") == 0) {
      const long long kb = std::atoll(value);
      if (kb < 0) return usage();
      mentat::bench::cold_bytes = static_cast<size_t>(kb) * 1024;
    } else {
      return usage();
    }
  }
  return mentat::bench::Run(args);
}
