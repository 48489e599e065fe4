#ifndef MENTAT_CLIENT_SHELL_COMPLETION_H_
#define MENTAT_CLIENT_SHELL_COMPLETION_H_

#include <string>
#include <string_view>
#include <vector>

namespace mentat::cli {

// What the word under the cursor can be completed to.
enum class CompletionKind {
  kNone,
  kCommand,   // ".sch" at the start of the line
  kDatabase,  // the argument of .use / .drop
  kFile,      // the argument of .import / .export / .read / .output
  kKeyword,   // ":user/em" anywhere else: attribute idents, query keywords
  kWord,      // the argument of .format / .timer / .pager
};

// Decides from the line before the word and the word itself.
CompletionKind ClassifyCompletion(std::string_view before,
                                  std::string_view word);

// What the shell knows to complete with; refreshed from the server.
struct CompletionSources {
  std::vector<std::string> idents;     // ":user/email", ...
  std::vector<std::string> databases;  // "default", ...
};

// The candidates starting with `word`, sorted and without duplicates. kFile
// gives none: readline completes file names itself.
std::vector<std::string> CompletionCandidates(CompletionKind kind,
                                              std::string_view before,
                                              std::string_view word,
                                              const CompletionSources& sources);

}  // namespace mentat::cli

#endif  // MENTAT_CLIENT_SHELL_COMPLETION_H_
