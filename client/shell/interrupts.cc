#include "shell/interrupts.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <thread>

#include "absl/synchronization/mutex.h"

namespace mentat::cli {
namespace {

int g_signal_pipe[2] = {-1, -1};
int g_prompt_pipe[2] = {-1, -1};
bool g_interactive = false;

// Constant-initialized: usable from any static initializer or thread.
ABSL_CONST_INIT absl::Mutex g_mu(absl::kConstInit);
// The running scope's cancel function (a function-local static: a global
// std::function would have a destructor run at exit).
std::function<void()>& Current() ABSL_EXCLUSIVE_LOCKS_REQUIRED(g_mu) {
  static std::function<void()>* const f = new std::function<void()>;
  return *f;
}
bool g_interrupted ABSL_GUARDED_BY(g_mu) = false;

void OnSigint(int) {
  const int saved = errno;
  const char byte = 1;
  ssize_t n = write(g_signal_pipe[1], &byte, 1);
  (void)n;  // a full pipe already holds an interrupt
  errno = saved;
}

void Watch() {
  char buf[64];
  for (;;) {
    const ssize_t n = read(g_signal_pipe[0], buf, sizeof buf);
    if (n <= 0) {
      if (n < 0 && errno == EINTR) continue;
      return;
    }
    bool cancelled = false;
    {
      // Held while cancelling, so the scope (and what its function cancels)
      // cannot end meanwhile.
      absl::MutexLock lock(&g_mu);
      if (Current()) {
        g_interrupted = true;
        Current()();
        cancelled = true;
      }
    }
    if (cancelled) {
      continue;
    } else if (g_interactive) {
      const char byte = 1;
      ssize_t w = write(g_prompt_pipe[1], &byte, 1);
      (void)w;
    } else {
      _exit(130);
    }
  }
}

}  // namespace

void Interrupts::Install(bool interactive) {
  g_interactive = interactive;
  if (pipe(g_signal_pipe) != 0 || pipe(g_prompt_pipe) != 0) return;
  for (int fd : {g_signal_pipe[1], g_prompt_pipe[0], g_prompt_pipe[1]}) {
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  }
  for (int fd : {g_signal_pipe[0], g_signal_pipe[1], g_prompt_pipe[0],
                 g_prompt_pipe[1]}) {
    fcntl(fd, F_SETFD, FD_CLOEXEC);
  }
  std::thread(Watch).detach();
  struct sigaction sa = {};
  sa.sa_handler = OnSigint;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, nullptr);
}

int Interrupts::prompt_fd() { return g_prompt_pipe[0]; }

void Interrupts::DrainPrompt() {
  char buf[64];
  while (read(g_prompt_pipe[0], buf, sizeof buf) > 0) {
  }
}

Interrupts::CancelScope::CancelScope(std::function<void()> cancel) {
  absl::MutexLock lock(&g_mu);
  previous_ = std::move(Current());
  previous_interrupted_ = g_interrupted;
  Current() = std::move(cancel);
  g_interrupted = false;
}

Interrupts::CancelScope::~CancelScope() {
  absl::MutexLock lock(&g_mu);
  Current() = std::move(previous_);
  g_interrupted = previous_interrupted_;
}

bool Interrupts::CancelScope::interrupted() const {
  absl::MutexLock lock(&g_mu);
  return g_interrupted;
}

}  // namespace mentat::cli
