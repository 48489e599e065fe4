#ifndef MENTAT_CLIENT_SHELL_STATEMENT_H_
#define MENTAT_CLIENT_SHELL_STATEMENT_H_

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

namespace mentat::cli {

// One unit of input the shell runs: a dot-command or an EDN form, possibly
// spanning lines.
struct Statement {
  std::string text;
  uint32_t first_line = 1;  // in its script; 1 for typed input
};

// True if `text` is a whole statement: a command whose arguments are not
// EDN (".import FILE") is whole at the end of its line; anything else when
// its EDN brackets balance and no string is open.
bool IsCompleteStatement(std::string_view text);

// True if `text` holds nothing to run: whitespace and ';' comments only.
bool IsBlankStatement(std::string_view text);

// What a top-level form typed at the prompt asks for.
enum class FormKind {
  kQuery,        // [:find ...] or {:find ...}
  kTransaction,  // any other vector: tx forms
  kOther,
};
// Classifies one top-level form's text (as edn::ScanEdn delimits it)
// without reading it: the server reads it and reports what is wrong.
FormKind ClassifyForm(std::string_view form);

// Splits a script (a file, stdin, or -c text) into statements, line by
// line, the same way the interactive prompt does. Not thread-safe.
class ScriptReader {
 public:
  // Reads from `file` (not owned).
  explicit ScriptReader(std::FILE* file);
  // Reads from `text`.
  explicit ScriptReader(std::string text);

  // The next statement, or nullopt at the end. An unfinished statement at
  // the end of the input is returned as it is (the server reports it).
  std::optional<Statement> Next();

 private:
  bool ReadLine(std::string* line);

  std::FILE* file_ = nullptr;
  std::string text_;
  size_t pos_ = 0;
  uint32_t line_no_ = 0;
};

}  // namespace mentat::cli

#endif  // MENTAT_CLIENT_SHELL_STATEMENT_H_
