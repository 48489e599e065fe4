#ifndef MENTAT_CLIENT_SHELL_LINE_EDITOR_H_
#define MENTAT_CLIENT_SHELL_LINE_EDITOR_H_

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "shell/statement.h"

namespace mentat::cli {

// The interactive prompt: GNU readline with history, completion, and input
// that continues over lines until the statement is complete (EDN brackets
// balance). Ctrl-C discards what is being typed; Ctrl-D at an empty prompt
// ends input.
//
// readline is global state, so at most one LineEditor may exist, and only
// the thread that made it may use it.
class LineEditor {
 public:
  // Candidates for the word under the cursor, given the line before it.
  using Completer = std::function<std::vector<std::string>(
      std::string_view before, std::string_view word)>;

  // `history_file`: loaded now, rewritten after each statement; empty for
  // none. The completer may be empty.
  LineEditor(std::string history_file, Completer completer);
  ~LineEditor();

  LineEditor(const LineEditor&) = delete;
  LineEditor& operator=(const LineEditor&) = delete;

  // Reads the next statement with `prompt` (and `continuation` for its
  // further lines). False at end of input.
  bool Read(const std::string& prompt, const std::string& continuation,
            Statement* out);

  // Asks a yes/no question on the terminal; true for "y" or "yes".
  bool Confirm(const std::string& question);

 private:
  void AddHistory(const std::string& entry);
  void SaveHistory() const;
  void LoadHistory();

  std::string history_file_;
};

// History file entries are one a line; newlines inside an entry are
// written as "\n" and backslashes as "\\", so multi-line statements come
// back whole.
std::string EncodeHistoryEntry(std::string_view entry);
std::string DecodeHistoryEntry(std::string_view line);

// The history file to use: $MENTAT_HISTORY, else ~/.mentat_history.
std::string DefaultHistoryFile();

}  // namespace mentat::cli

#endif  // MENTAT_CLIENT_SHELL_LINE_EDITOR_H_
