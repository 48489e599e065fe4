#include "reader_pool.h"

#include <numa.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>

namespace mentat::server {

namespace {

// The CPUs this process may run on.
std::vector<int> AllowedCpus() {
  std::vector<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    for (int c = 0; c < CPU_SETSIZE; ++c) {
      if (CPU_ISSET(c, &set)) cpus.push_back(c);
    }
  }
  if (cpus.empty()) {
    const int n = std::max(1u, std::thread::hardware_concurrency());
    for (int c = 0; c < n; ++c) cpus.push_back(c);
  }
  return cpus;
}

// CPUs per NUMA node (only nodes with allowed CPUs); empty without libnuma.
std::vector<std::vector<int>> NumaNodes(const std::vector<int>& allowed) {
  std::vector<std::vector<int>> nodes;
  if (numa_available() < 0) return nodes;
  const int max_node = numa_max_node();
  struct bitmask* mask = numa_allocate_cpumask();
  for (int n = 0; n <= max_node; ++n) {
    if (numa_node_to_cpus(n, mask) != 0) continue;
    std::vector<int> cpus;
    for (int c : allowed) {
      if (numa_bitmask_isbitset(mask, c)) cpus.push_back(c);
    }
    if (!cpus.empty()) nodes.push_back(std::move(cpus));
  }
  numa_free_cpumask(mask);
  return nodes;
}

}  // namespace

ReaderPool::ReaderPool(const Options& options) {
  const std::vector<int> allowed = AllowedCpus();
  std::vector<std::vector<int>> node_cpus = NumaNodes(allowed);
  pinned_ = options.pin && !node_cpus.empty();
  if (node_cpus.empty()) node_cpus.push_back(allowed);
  for (std::vector<int>& cpus : node_cpus) {
    auto node = std::make_unique<Node>();
    node->cpus = std::move(cpus);
    const int n = options.threads_per_node > 0
                      ? options.threads_per_node
                      : std::max<int>(2, static_cast<int>(node->cpus.size()));
    for (int i = 0; i < n; ++i) {
      Node* raw = node.get();
      const bool pin = pinned_;
      raw->threads.emplace_back([raw, pin] {
        if (pin) {
          cpu_set_t set;
          CPU_ZERO(&set);
          for (int c : raw->cpus) CPU_SET(c, &set);
          // Best effort: an unpinned reader still works.
          (void)pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
        }
        pthread_setname_np(pthread_self(), "mentat-reader");
        raw->context.run();
      });
      ++thread_count_;
    }
    nodes_.push_back(std::move(node));
  }
}

ReaderPool::~ReaderPool() { Stop(); }

void ReaderPool::Stop() {
  if (stopped_.exchange(true)) return;
  for (auto& node : nodes_) node->guard.reset();
  for (auto& node : nodes_) {
    for (std::thread& t : node->threads) t.join();
  }
}

}  // namespace mentat::server
