#ifndef MENTAT_CLIENT_SHELL_ERROR_DISPLAY_H_
#define MENTAT_CLIENT_SHELL_ERROR_DISPLAY_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mentat::cli {

// The position the server puts at the front of INVALID_ARGUMENT messages:
// "line L, column C: what" (1-based; columns count bytes).
struct MessagePosition {
  uint32_t line = 0;
  uint32_t column = 0;
  std::string_view rest;  // the message after the prefix
};
std::optional<MessagePosition> ParseMessagePosition(std::string_view message);

// What an error is reported against.
struct ErrorContext {
  // Everything the user typed for the command (may span lines).
  std::string_view input;
  // Where the text sent to the server starts inside `input`: the server's
  // positions count from there.
  size_t request_offset = 0;
  // The first line of `input` in its script (1 for typed input), so the
  // LINE shown is the script's line.
  uint32_t first_line = 1;
  // Prefix naming a script ("load.edn:12: "), or empty.
  std::string source;
  bool color = false;
};

// Renders an error the way psql does: "ERROR: <message>" and, when the
// message has a position inside the input, the offending line with a caret
// under the column:
//
//   ERROR: unknown attribute :user/emial
//   LINE 1: [:find ?e :where [?e :user/emial "x"]]
//                                ^
// Long lines are cut around the caret. The text ends with a newline.
std::string RenderError(std::string_view message, const ErrorContext& ctx);

}  // namespace mentat::cli

#endif  // MENTAT_CLIENT_SHELL_ERROR_DISPLAY_H_
