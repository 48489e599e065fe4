#ifndef MENTAT_CLIENT_SHELL_EDN_SCAN_H_
#define MENTAT_CLIENT_SHELL_EDN_SCAN_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace mentat::cli {

// A small EDN scanner for the shell: it knows strings, characters, comments,
// brackets, tags and #_ discards well enough to tell when typed input is
// complete and where its top-level forms begin and end. It does not
// validate EDN; the server does that and reports positions.

// The byte range [begin, end) of one top-level form in scanned text. A tag
// (#inst "...") is part of the form it tags.
struct FormSpan {
  size_t begin = 0;
  size_t end = 0;
};

struct EdnScan {
  int depth = 0;                // brackets opened and not yet closed
  bool in_string = false;       // the text ends inside a string literal
  bool stray_closer = false;    // a closer with no opener was seen
  std::vector<FormSpan> forms;  // complete top-level forms, in order
  // Where the outermost bracket or string left open at the end starts.
  size_t unclosed_at = 0;
};

// Scans `text`. Never fails: any byte sequence gives a result.
EdnScan ScanEdn(std::string_view text);

// True when `text` needs no more lines: every bracket is closed and no
// string is open. A stray closer also counts as complete, so the server can
// report it instead of the shell waiting forever.
bool IsCompleteEdn(std::string_view text);

// Tracks bracket balance over text fed in pieces (a file read line by
// line), so a reader can tell where a multi-line form ends without
// rescanning what it already read. Same lexical rules as ScanEdn.
class EdnBalance {
 public:
  void Feed(std::string_view text);
  // No open bracket or string: what was fed so far ends whole forms.
  bool balanced() const { return depth_ <= 0 && !in_string_; }
  void Reset() { *this = EdnBalance(); }

 private:
  int depth_ = 0;
  bool in_string_ = false;
  bool in_comment_ = false;
  bool escape_ = false;  // after a backslash, in a string or a character
};

// What a top-level form typed at the prompt asks for.
enum class FormKind {
  kQuery,        // [:find ...] or {:find ...}
  kTransaction,  // any other vector: tx forms
  kOther,
};
FormKind ClassifyForm(std::string_view form);

// 1-based line and byte column of `offset` in `text` (offset may equal
// text.size()).
struct TextPosition {
  uint32_t line = 1;
  uint32_t column = 1;
};
TextPosition PositionAt(std::string_view text, size_t offset);

// The byte offset of a 1-based (line, column) in `text`, clamped to the
// text; the inverse of PositionAt.
size_t OffsetAt(std::string_view text, uint32_t line, uint32_t column);

}  // namespace mentat::cli

#endif  // MENTAT_CLIENT_SHELL_EDN_SCAN_H_
