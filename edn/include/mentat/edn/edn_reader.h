#ifndef MENTAT_EDN_EDN_READER_H_
#define MENTAT_EDN_EDN_READER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "mentat/edn/edn_value.h"

namespace mentat::edn {

// How the reader treats its input.
struct EdnReadOptions {
  // Deepest allowed nesting of collections, tagged values and #_ discards;
  // a form nested deeper is an InvalidArgument error at the position of the
  // first form past the limit. Values are walked recursively (copy, destroy,
  // compare, print), so keep this well under a thread's stack: a few
  // thousand at most.
  int max_depth = 512;
};

// Where an error was found: 1-based line and column (columns count bytes).
struct EdnPosition {
  uint32_t line = 0;
  uint32_t column = 0;
};

// The reader's errors are InvalidArgument statuses whose message starts with
// "line L, column C: " and which carry the position as a payload; this
// returns it, or nullopt for a status that has none.
std::optional<EdnPosition> EdnErrorPosition(const absl::Status& status);

// Builds such an error: InvalidArgument "line L, column C: <message>" with
// the position payload. For other parsers of EDN-shaped input (tx-data,
// queries) so that their errors carry positions the same way. With line 0
// (a value built in code) the message has no prefix and no payload.
[[nodiscard]] absl::Status EdnError(EdnPosition position,
                                    std::string_view message);

// Reads exactly one EDN form from `text`. Whitespace, commas, comments and
// #_ discarded forms may surround it; anything else after it is an error, as
// is an input with no form.
//
// The dialect is the EDN spec, with these decisions:
//  - An integer too large for int64 and written without 'N' becomes a
//    kBigInt (as in Clojure), not an error. Integers other than 0 may not
//    start with 0 (no octal); there are no ratios or radix literals.
//  - A float beyond the double range ("1e999") is an error; ##Inf, ##-Inf
//    and ##NaN read as the special doubles.
//  - Strings, characters, symbols and keywords must be valid UTF-8;
//    string escapes are \t \r \n \\ \" \b \f and \uXXXX (surrogate pairs
//    combine; a lone surrogate is an error). Characters are \c, \uXXXX and
//    \newline \return \space \tab \formfeed \backspace.
//  - Keywords and symbols follow the spec: no leading digit (nor '+', '-'
//    or '.' followed by a digit), at most one '/' with non-empty parts
//    around it ("/" alone is a symbol), no leading "::".
//  - Duplicate map keys and set elements are errors.
//  - #inst takes a string parsed by ParseInstant (edn_inst.h); #uuid a
//    string parsed by ParseUuid (edn_uuid.h). Other tags ("#my/tag v") are
//    kept as kTagged values; a tag must start with a letter.
//  - Lines end at '\n'; a '\r' is whitespace.
//
// Errors: InvalidArgument, "line L, column C: <what>", position payload as
// above. Thread-safe: the function has no shared state.
[[nodiscard]] absl::StatusOr<EdnValue> ParseEdn(
    std::string_view text, const EdnReadOptions& options = {});

// Reads every top-level form of `text` (for example a file with one
// transaction per line), in order. An input with no form gives an empty
// vector. Errors as for ParseEdn.
[[nodiscard]] absl::StatusOr<std::vector<EdnValue>> ParseEdnAll(
    std::string_view text, const EdnReadOptions& options = {});

// The reader's implementation (edn_reader.cc).
class EdnParser;

// Reads top-level forms one at a time from a text the caller keeps alive
// for the reader's lifetime, keeping line and column counts across forms.
// Not thread-safe; use one reader per thread.
//
//   EdnReader reader(text);
//   EdnValue form;
//   for (;;) {
//     absl::StatusOr<bool> more = reader.Next(&form);
//     if (!more.ok()) return more.status();
//     if (!*more) break;
//     Use(form);
//   }
class EdnReader {
 public:
  explicit EdnReader(std::string_view text, const EdnReadOptions& options = {});
  ~EdnReader();
  EdnReader(const EdnReader&) = delete;
  EdnReader& operator=(const EdnReader&) = delete;

  // Reads the next form into *out and returns true; returns false, leaving
  // *out alone, when only whitespace, comments and discarded forms remain.
  // After an error every later call returns the same error.
  [[nodiscard]] absl::StatusOr<bool> Next(EdnValue* out);

  // Byte offset just past the last form read (or of the error).
  size_t offset() const;

 private:
  std::unique_ptr<EdnParser> parser_;
};

}  // namespace mentat::edn

#endif  // MENTAT_EDN_EDN_READER_H_
