#ifndef MENTAT_CLIENT_SHELL_SHELL_H_
#define MENTAT_CLIENT_SHELL_SHELL_H_

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "mentat/client/client.h"
#include "shell/command.h"
#include "shell/completion.h"
#include "shell/output_sink.h"
#include "shell/result_writer.h"
#include "shell/statement.h"
#include "shell/wire_value.h"

namespace mentat::cli {

class LineEditor;

struct ShellOptions {
  client::ClientOptions client;
  std::string database = "default";
  WriterStyle style;
  // A person at a terminal: prompts, greetings and confirmations; without
  // it only results (and errors, on stderr) are printed.
  bool interactive = false;
  // Go on after a failed statement (scripts stop at the first by default).
  bool keep_going = false;
  // Page results longer than the screen (interactive, stdout a terminal).
  bool pager = false;
  // Transactions an import keeps in flight.
  int import_inflight = 4;
};

// mentat-cli's interpreter: runs statements (dot-commands and plain EDN)
// against a server through the client library and prints their results.
// One thread only.
class Shell {
 public:
  Shell(ShellOptions options, std::unique_ptr<client::Client> client);
  ~Shell();

  // Checks that the server answers (and the database exists); when
  // interactive, says what it connected to.
  [[nodiscard]] absl::Status Connect();

  // The prompt loop; returns the process exit status.
  int RunInteractive();

  // Runs every statement of `reader`; stops at the first failure unless
  // keep_going. `source` names the script in error messages ("" for -c).
  // True if every statement succeeded.
  bool RunScript(ScriptReader* reader, const std::string& source);

  bool quit_requested() const { return quit_; }

 private:
  // One EDN form of a command's arguments, and where it starts in the
  // statement.
  struct Arg {
    std::string_view text;
    size_t offset = 0;
  };
  struct Basis {
    int kind = 0;  // v1::Basis::Kind
    TxPoint point;
    std::string label;  // "as-of 1005", shown in the prompt
  };

  // Runs a statement, prints its error; returns it.
  [[nodiscard]] absl::Status Run(const Statement& statement,
                                 const std::string& source);
  [[nodiscard]] absl::Status Dispatch(const Statement& statement);
  // The error for a command no spec knows, with the closest one.
  [[nodiscard]] absl::Status UnknownCommand(const CommandLine& cmd) const;
  [[nodiscard]] absl::Status RunCommand(const std::string& name,
                                        std::string_view args,
                                        size_t args_offset);
  std::vector<Arg> EdnArgs(std::string_view args, size_t args_offset) const;

  // Plain EDN and the data commands (shell.cc).
  [[nodiscard]] absl::Status RunEdn(std::string_view text);
  [[nodiscard]] absl::Status RunQuery(const std::vector<Arg>& forms);
  // With dry_run, asks what transacting `form` would do (nothing is
  // committed).
  [[nodiscard]] absl::Status RunTransact(const Arg& form, bool dry_run = false);
  // .with TX...: speculative tx-data that queries and pulls apply first
  // (with_tx_data); .with alone drops it.
  [[nodiscard]] absl::Status SetWith(const std::vector<Arg>& forms);
  [[nodiscard]] absl::Status RunPull(const std::vector<Arg>& forms);
  [[nodiscard]] absl::Status RunExplain(const std::vector<Arg>& forms);
  [[nodiscard]] absl::Status SetBasis(const std::string& name,
                                      std::string_view args);

  // Commands about the database (shell_commands.cc).
  [[nodiscard]] absl::Status RunSchema(std::string_view args);
  [[nodiscard]] absl::Status RunStats(std::string_view args);
  [[nodiscard]] absl::Status RunDbs();
  // .cluster: Stats of every node the client knows (role, term, basis,
  // lag, the primary each names).
  [[nodiscard]] absl::Status RunCluster();
  [[nodiscard]] absl::Status RunUse(std::string_view args);
  [[nodiscard]] absl::Status RunCreate(std::string_view args);
  [[nodiscard]] absl::Status RunDrop(std::string_view args);
  [[nodiscard]] absl::Status RunBackup(std::string_view args);
  [[nodiscard]] absl::Status RunLog(std::string_view args);
  [[nodiscard]] absl::Status RunWatch(std::string_view args);
  [[nodiscard]] absl::Status RunImport(std::string_view args);
  [[nodiscard]] absl::Status RunExport(std::string_view args);
  [[nodiscard]] absl::Status RunRead(std::string_view args);
  [[nodiscard]] absl::Status RunOutput(std::string_view args);
  [[nodiscard]] absl::Status RunSetting(const std::string& name,
                                        std::string_view args);
  void PrintHelp();

  // Attribute idents by id, fetched on demand (log, watch, export).
  [[nodiscard]] absl::Status LoadAttributeNames();
  Cell AttributeCell(int64_t id) const;
  // Refreshes what tab completion offers; failures are ignored.
  void RefreshCompletions();

  void FillBasis(v1::Basis* basis) const;
  std::string Prompt() const;
  client::CallOptions Call();
  // A sink for one result (paged when interactive and on a terminal).
  std::unique_ptr<OutputSink> NewSink();
  std::FILE* results() const { return output_ != nullptr ? output_ : stdout; }
  // A message for the person at the prompt; silent in scripts.
  void Info(const std::string& text);

  ShellOptions options_;
  std::unique_ptr<client::Client> client_;
  std::unique_ptr<LineEditor> editor_;
  Basis basis_;
  // The .with transactions, in order.
  std::vector<std::string> with_tx_data_;
  bool timer_ = false;
  bool quit_ = false;
  std::FILE* output_ = nullptr;  // .output FILE; owned
  // The first failed write of the running statement's results (see
  // OutputSink); it fails the statement.
  absl::Status output_error_;
  std::string output_name_;
  CompletionSources completions_;
  std::vector<std::pair<int64_t, std::string>> attribute_names_;  // sorted
  // Where the text sent with the current request starts in the statement,
  // so the server's line/column can be marked under the input.
  size_t request_offset_ = 0;
  // The canceller of the running statement (Ctrl-C).
  client::Canceller* canceller_ = nullptr;
  int read_depth_ = 0;  // nested .read files
};

}  // namespace mentat::cli

#endif  // MENTAT_CLIENT_SHELL_SHELL_H_
