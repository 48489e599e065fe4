#include "reader_pool.h"

#include <numa.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>

#include "absl/synchronization/mutex.h"

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

thread_local ReaderPool::Node* ReaderPool::current_node_ = nullptr;

ReaderPool::ReaderPool(const Options& options)
    : spare_idle_(options.spare_idle) {
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
    node->pool = this;
    node->target_threads = n;
    {
      absl::MutexLock lock(&node->mu);
      for (int i = 0; i < n; ++i) AddThreadLocked(node.get(), false);
    }
    nodes_.push_back(std::move(node));
  }
}

void ReaderPool::AddThreadLocked(Node* node, bool spare) {
  // Spares that exited are joined here (they are past their last lock).
  for (std::thread& t : node->finished) t.join();
  node->finished.clear();
  const bool pin = pinned_;
  node->threads.emplace_back([this, node, pin, spare] {
    current_node_ = node;
    if (pin) {
      cpu_set_t set;
      CPU_ZERO(&set);
      for (int c : node->cpus) CPU_SET(c, &set);
      // Best effort: an unpinned reader still works.
      (void)pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
    }
    pthread_setname_np(pthread_self(),
                       spare ? "mentat-spare" : "mentat-reader");
    if (spare) {
      RunSpare(node);
    } else {
      node->context.run();
    }
  });
  thread_count_.fetch_add(1);
}

void ReaderPool::RunSpare(Node* node) {
  for (;;) {
    const size_t ran = node->context.run_one_for(spare_idle_);
    if (node->context.stopped()) return;
    if (ran > 0) continue;
    absl::MutexLock lock(&node->mu);
    const int runnable = static_cast<int>(node->threads.size()) - node->parked;
    if (runnable <= node->target_threads || stopped_.load()) continue;
    // Not needed: leave, handing this thread's handle to whoever joins.
    const auto self = std::this_thread::get_id();
    for (auto it = node->threads.begin(); it != node->threads.end(); ++it) {
      if (it->get_id() == self) {
        node->finished.push_back(std::move(*it));
        node->threads.erase(it);
        break;
      }
    }
    thread_count_.fetch_sub(1);
    return;
  }
}

ReaderPool::Parked::Parked() : node_(current_node_) {
  if (node_ == nullptr) return;
  absl::MutexLock lock(&node_->mu);
  node_->parked++;
  const int runnable = static_cast<int>(node_->threads.size()) - node_->parked;
  if (runnable < node_->target_threads && !node_->pool->stopped_.load()) {
    node_->pool->AddThreadLocked(node_, /*spare=*/true);
  }
}

ReaderPool::Parked::~Parked() {
  if (node_ == nullptr) return;
  absl::MutexLock lock(&node_->mu);
  node_->parked--;
}

ReaderPool::~ReaderPool() { Stop(); }

void ReaderPool::Stop() {
  if (stopped_.exchange(true)) return;
  for (auto& node : nodes_) node->guard.reset();
  // A parked task may start a thread while others are joined.
  for (auto& node : nodes_) {
    for (;;) {
      std::vector<std::thread> threads;
      {
        absl::MutexLock lock(&node->mu);
        threads.swap(node->threads);
        for (std::thread& t : node->finished) threads.push_back(std::move(t));
        node->finished.clear();
      }
      if (threads.empty()) break;
      for (std::thread& t : threads) t.join();
    }
  }
}

}  // namespace mentat::server
