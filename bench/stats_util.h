#ifndef MENTAT_BENCH_STATS_UTIL_H_
#define MENTAT_BENCH_STATS_UTIL_H_

#include <algorithm>
#include <cstdint>
#include <vector>

namespace mentat::bench {

// Latency percentiles of a sample, in the sample's unit.
struct Percentiles {
  double p50 = 0, p95 = 0, p99 = 0, max = 0;
  size_t count = 0;
};

inline Percentiles ComputePercentiles(std::vector<double> samples) {
  Percentiles p;
  p.count = samples.size();
  if (samples.empty()) return p;
  std::sort(samples.begin(), samples.end());
  auto at = [&](double q) {
    size_t i = static_cast<size_t>(q * static_cast<double>(samples.size() - 1));
    return samples[i];
  };
  p.p50 = at(0.50);
  p.p95 = at(0.95);
  p.p99 = at(0.99);
  p.max = samples.back();
  return p;
}

}  // namespace mentat::bench

#endif  // MENTAT_BENCH_STATS_UTIL_H_
