#ifndef MENTAT_CLIENT_SHELL_INTERRUPTS_H_
#define MENTAT_CLIENT_SHELL_INTERRUPTS_H_

#include <functional>

namespace mentat::cli {

// Ctrl-C for the shell. A SIGINT handler only writes a byte to a pipe; a
// watcher thread turns it into an action outside signal context:
//  - while an operation runs (a CancelScope is alive) it calls that
//    operation's cancel function (for an RPC, ClientContext::TryCancel);
//  - otherwise, interactively, the prompt sees it on prompt_fd() and
//    discards the line being typed;
//  - otherwise (a script) the process exits with status 130.
class Interrupts {
 public:
  // Installs the handler and starts the watcher; call once, early.
  static void Install(bool interactive);

  // Readable after Ctrl-C was pressed with no operation running.
  static int prompt_fd();
  // Drains prompt_fd(): an interrupt that arrived between commands must not
  // also discard the next line.
  static void DrainPrompt();

  // Registers `cancel` for the lifetime of the scope. Scopes do not nest:
  // the innermost one wins and restores the outer one when it ends.
  class CancelScope {
   public:
    explicit CancelScope(std::function<void()> cancel);
    ~CancelScope();
    CancelScope(const CancelScope&) = delete;
    CancelScope& operator=(const CancelScope&) = delete;
    // True if Ctrl-C was pressed while this scope was active.
    bool interrupted() const;

   private:
    std::function<void()> previous_;
    bool previous_interrupted_ = false;
  };
};

}  // namespace mentat::cli

#endif  // MENTAT_CLIENT_SHELL_INTERRUPTS_H_
