#ifndef MENTAT_CLIENT_SHELL_COMMAND_H_
#define MENTAT_CLIENT_SHELL_COMMAND_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mentat::cli {

// One of the shell's dot-commands, for dispatch, `.help` and completion.
struct CommandSpec {
  std::string_view name;   // without the dot: "q", "as-of"
  std::string_view usage;  // argument synopsis: "QUERY [INPUTS...]"
  std::string_view help;   // one line
};

// Every command, in the order `.help` lists them.
const std::vector<CommandSpec>& AllCommands();

// The spec named `name` (without the dot), or nullptr.
const CommandSpec* FindCommand(std::string_view name);

// A command line split into its name and argument text. `args_offset` is
// where the arguments start in the text that was parsed, so error
// positions reported against the arguments can be marked in the input.
struct CommandLine {
  std::string name;   // canonical: "\q" and ".exit" give "quit"
  std::string typed;  // as typed, with its lead: "\\dt", ".tabel"
  std::string_view args;
  size_t args_offset = 0;
};

// Parses `input` (leading whitespace allowed) if it is a command: it starts
// with '.' or '\'. Returns nullopt for anything else (plain EDN). The name
// is not checked against AllCommands(); callers report unknown ones.
std::optional<CommandLine> ParseCommandLine(std::string_view input);

// Splits simple arguments (file names, words) on whitespace; double quotes
// group words and a backslash escapes the next character inside them.
// Unterminated quotes end at the end of the text.
std::vector<std::string> SplitWords(std::string_view args);

// The known command (with its dot) closest to `name`, a typo away (an edit
// distance of at most 2, or a prefix), or "" if none is.
std::string SuggestCommand(std::string_view name);

// Strips whitespace and commas at both ends.
std::string_view TrimEdn(std::string_view text);

}  // namespace mentat::cli

#endif  // MENTAT_CLIENT_SHELL_COMMAND_H_
