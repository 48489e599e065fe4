#include "suite/mixed_writer.h"

#include <algorithm>

#include "mentat/base/str_cat.h"

namespace mentat::bench {
namespace {

using Clock = std::chrono::steady_clock;

// Random probes for each member before a full scan of the pool.
constexpr int kProbes = 64;
// Four cardinality-one changes (a retraction and an assertion each) and the
// transaction's instant.
constexpr int64_t kDatomsPerTx = 9;

}  // namespace

MixedWriter::MixedWriter(client::Client& client, std::string database,
                         MixedPool* pool)
    : client_(client),
      database_(std::move(database)),
      pool_(pool),
      changed_before_(pool->ChangedAfterSince()) {
  busy_.assign(pool_->members().size(), false);
}

MixedWriter::~MixedWriter() {
  if (!threads_.empty()) Stop();
}

void MixedWriter::Start(double rate, int writers) {
  {
    absl::MutexLock lock(&mu_);
    figures_ = WriterFigures();
    figures_.rate = rate;
    figures_.writers = writers;
  }
  stop_ = false;
  next_slot_ = 0;
  start_ = Clock::now();
  for (int t = 0; t < writers; ++t) {
    threads_.emplace_back([this, t, rate] { Work(t, rate); });
  }
}

WriterFigures MixedWriter::Stop() {
  stop_ = true;
  for (std::thread& t : threads_) t.join();
  threads_.clear();
  absl::MutexLock lock(&mu_);
  figures_.seconds =
      std::chrono::duration<double>(Clock::now() - start_).count();
  std::sort(first_change_tx_.begin(), first_change_tx_.end());
  return figures_;
}

int64_t MixedWriter::ChangedAfterSinceAt(int64_t basis_tx) const {
  absl::MutexLock lock(&mu_);
  return changed_before_ + (std::upper_bound(first_change_tx_.begin(),
                                             first_change_tx_.end(), basis_tx) -
                            first_change_tx_.begin());
}

bool MixedWriter::Take(std::mt19937_64& rng, Held* held) {
  std::vector<MixedPool::Member>& m = pool_->members();
  const size_t n = m.size();
  if (n < 4) return false;
  // The first free member, after kProbes random tries, then in pool order
  // from a random start, that `fits`.
  // (Lambdas are analysed on their own: they say that they run under mu_,
  // which Take holds.)
  auto find = [&](auto fits, size_t* out) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    for (int i = 0; i < kProbes; ++i) {
      const size_t k = rng() % n;
      if (!busy_[k] && fits(m[k])) return *out = k, true;
    }
    const size_t from = rng() % n;
    for (size_t i = 0; i < n; ++i) {
      const size_t k = (from + i) % n;
      if (!busy_[k] && fits(m[k])) return *out = k, true;
    }
    return false;
  };
  Held h;
  if (!find([](const auto& x) { return x.state == 0; }, &h.a)) return false;
  busy_[h.a] = true;
  const int64_t pa = m[h.a].priority;
  if (!find([&](const auto& x) { return x.state != 0 && x.priority == pa; },
            &h.b)) {
    busy_[h.a] = false;
    return false;
  }
  busy_[h.b] = true;
  // C and D: any two that fit (both open or both not); when no open pair
  // is free, two that are not open (most members).
  auto take_pair = [&](auto c_fits) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (!find(c_fits, &h.c)) return false;
    busy_[h.c] = true;
    const bool open = m[h.c].state == 0;
    const int64_t pc = m[h.c].priority;
    if (find(
            [&](const auto& x) {
              return (x.state == 0) == open && x.priority != pc;
            },
            &h.d)) {
      return true;
    }
    busy_[h.c] = false;
    return false;
  };
  if (!take_pair([](const auto&) { return true; }) &&
      !take_pair([](const auto& x) { return x.state != 0; })) {
    busy_[h.a] = busy_[h.b] = false;
    return false;
  }
  busy_[h.d] = true;
  *held = h;
  return true;
}

void MixedWriter::Work(int thread, double rate) {
  std::mt19937_64 rng(static_cast<uint64_t>(thread) * 104729 + 7);
  while (!stop_.load()) {
    const int64_t slot = next_slot_.fetch_add(1);
    const auto due = start_ + std::chrono::duration_cast<Clock::duration>(
                                  std::chrono::duration<double>(slot / rate));
    std::this_thread::sleep_until(due);
    if (stop_.load()) break;
    Held h;
    std::string tx;
    for (;;) {
      {
        absl::MutexLock lock(&mu_);
        if (Take(rng, &h)) {
          const std::vector<MixedPool::Member>& m = pool_->members();
          tx = StrCat("[[:db/add ", m[h.a].id,
                      " :issue/state :", kStates[m[h.b].state], "] [:db/add ",
                      m[h.b].id, " :issue/state :", kStates[0], "] [:db/add ",
                      m[h.c].id, " :issue/priority ", m[h.d].priority,
                      "] [:db/add ", m[h.d].id, " :issue/priority ",
                      m[h.c].priority, "]]");
          break;
        }
      }
      // Every member that fits is held by a commit in flight: this one
      // goes late (the achieved rate shows it).
      if (stop_.load()) return;
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    v1::TransactRequest request;
    request.set_database(database_);
    request.set_tx_data(std::move(tx));
    const auto t0 = Clock::now();
    auto response = client_.Transact(request);
    const double ms =
        std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    absl::MutexLock lock(&mu_);
    std::vector<MixedPool::Member>& m = pool_->members();
    std::string failure;
    if (!response.ok()) {
      // Committed or not: unknown. The members stay held, so that no later
      // transaction builds on a state that may be wrong.
      uncertain_ = true;
      failure = response.status().ToString();
    } else {
      std::swap(m[h.a].state, m[h.b].state);
      std::swap(m[h.c].priority, m[h.d].priority);
      for (size_t k : {h.a, h.b}) {
        if (!m[k].changed_after_since) {
          m[k].changed_after_since = true;
          first_change_tx_.push_back(response->tx());
        }
      }
      busy_[h.a] = busy_[h.b] = busy_[h.c] = busy_[h.d] = false;
      figures_.acked++;
      figures_.ms.push_back(ms);
      if (response->datom_count() != kDatomsPerTx) {
        failure = StrCat("mixed write: ", response->datom_count(),
                         " datoms, expected ", kDatomsPerTx);
      }
    }
    if (!failure.empty()) {
      figures_.errors++;
      if (figures_.failures.size() < 5) figures_.failures.push_back(failure);
    }
  }
}

}  // namespace mentat::bench
