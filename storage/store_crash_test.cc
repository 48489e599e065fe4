// Crash test: a child process commits transactions as fast as it can and
// reports each acknowledged one; it gets SIGKILL at a random moment; the
// store reopens and every acknowledged transaction must be there whole,
// and no transaction may be there in part.

#include <doctest/doctest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <random>
#include <set>
#include <string>

#include "mentat/storage/store.h"
#include "test_support.h"

namespace mentat::storage {
namespace {

struct ChildRun {
  std::set<int64_t> acknowledged;
  bool ready = false;
};

// Starts the writer, lets it run for `run_ms` after it is ready, kills it
// with SIGKILL, and collects every acknowledgement it printed.
ChildRun RunAndKill(const std::string& dir, int64_t start, int run_ms) {
  ChildRun run;
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    close(fds[1]);
    const std::string start_text = std::to_string(start);
    execl(MENTAT_CRASH_WRITER, MENTAT_CRASH_WRITER, dir.c_str(),
          start_text.c_str(), "8", static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fds[1]);
  std::string buffer;
  auto deadline = std::chrono::steady_clock::time_point::max();
  bool killed = false;
  for (;;) {
    if (!killed && std::chrono::steady_clock::now() >= deadline) {
      kill(pid, SIGKILL);
      killed = true;
    }
    pollfd p{fds[0], POLLIN, 0};
    if (poll(&p, 1, 5) < 0) continue;
    if (!(p.revents & (POLLIN | POLLHUP))) continue;
    char chunk[4096];
    const ssize_t n = read(fds[0], chunk, sizeof(chunk));
    if (n <= 0) break;  // EOF: the child is gone
    buffer.append(chunk, static_cast<size_t>(n));
    size_t line_end;
    while ((line_end = buffer.find('\n')) != std::string::npos) {
      const std::string line = buffer.substr(0, line_end);
      buffer.erase(0, line_end + 1);
      if (line == "ready") {
        run.ready = true;
        deadline = std::chrono::steady_clock::now() +
                   std::chrono::milliseconds(run_ms);
      } else {
        run.acknowledged.insert(std::atoll(line.c_str()));
      }
    }
  }
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK_MESSAGE(WIFSIGNALED(status), "the writer exited on its own: status ",
                status);
  return run;
}

TEST_CASE("acknowledged transactions survive kill -9, none is partial" *
          doctest::test_suite("slow")) {
  const char* env = std::getenv("MENTAT_CRASH_ITERATIONS");
  const int iterations = env != nullptr ? std::atoi(env) : 5;
  testing::TempDir dir;
  std::mt19937 rng(20261130);
  int64_t next = 0;
  size_t total_acknowledged = 0;
  for (int i = 0; i < iterations; ++i) {
    CAPTURE(i);
    const int run_ms = std::uniform_int_distribution<int>(5, 400)(rng);
    ChildRun run = RunAndKill(dir.path(), next, run_ms);
    REQUIRE(run.ready);
    total_acknowledged += run.acknowledged.size();

    auto store = Store::Open(dir.path());
    REQUIRE_MESSAGE(store.ok(), store.status().ToString());
    auto db = (*store)->Latest();
    DbView view = db->View(Basis::Current());
    const Attribute* seq = db->schema().FindAttribute("crash/seq");
    const Attribute* twin = db->schema().FindAttribute("crash/twin");
    REQUIRE(seq != nullptr);
    REQUIRE(twin != nullptr);
    // Every committed seq has its twin on the same entity.
    std::string prefix;
    AevtKey::EncodePrefix(seq->id, &prefix);
    auto seqs = view.Datoms(IndexOrder::kAevt, prefix);
    REQUIRE(seqs.ok());
    std::set<int64_t> present;
    int partial = 0;
    for (const Datom& d : *seqs) {
      present.insert(d.v.as_long());
      std::string key;
      EavtKey::Encode(d.e, twin->id, d.v, &key);
      auto twin_datoms = view.Datoms(IndexOrder::kEavt, key);
      REQUIRE(twin_datoms.ok());
      if (twin_datoms->size() != 1) partial++;
    }
    prefix.clear();
    AevtKey::EncodePrefix(twin->id, &prefix);
    CHECK(view.Datoms(IndexOrder::kAevt, prefix)->size() == seqs->size());
    CHECK(partial == 0);
    int lost = 0;
    for (int64_t n : run.acknowledged) lost += present.contains(n) ? 0 : 1;
    CHECK(lost == 0);
    next = present.empty() ? 1 : *present.rbegin() + 1;
  }
  MESSAGE("crash loop: ", iterations, " kills, ", total_acknowledged,
          " acknowledged transactions, 0 lost, 0 partial");
}

}  // namespace
}  // namespace mentat::storage
