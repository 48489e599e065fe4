#ifndef MENTAT_EDN_EDN_SCAN_H_
#define MENTAT_EDN_EDN_SCAN_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "mentat/edn/edn_reader.h"

namespace mentat::edn {

// A lexical scan of EDN text that may be unfinished or invalid: it knows
// strings, characters, comments, brackets, tags and #_ discards with the
// reader's lexical rules, well enough to tell whether typed input is
// complete and where its top-level forms begin and end, so that a caller
// can send each form's text on as it was written. It does not validate
// (ParseEdn does, with positions); any byte sequence scans. The shell
// uses it for its prompt and its scripts.

// The byte range [begin, end) of one top-level form. A tag (#inst "...")
// is part of the form it tags; a #_ discard and its form are in no span.
struct EdnFormSpan {
  size_t begin = 0;
  size_t end = 0;
};

struct EdnScan {
  int depth = 0;                   // brackets opened and not yet closed
  bool in_string = false;          // the text ends inside a string literal
  bool stray_closer = false;       // a closer with no opener was seen
  std::vector<EdnFormSpan> forms;  // complete top-level forms, in order
  // Where the outermost bracket or string left open at the end starts.
  size_t unclosed_at = 0;
};

// Scans `text`. Never fails. For text ParseEdnAll reads, the spans are
// exactly the forms it reads. Linear in the text. Thread-safe.
EdnScan ScanEdn(std::string_view text);

// True when `text` needs no more lines: every bracket is closed and no
// string is open. A stray closer also counts as complete, so that the
// reader can report it instead of a prompt waiting forever.
bool IsCompleteEdn(std::string_view text);

// Tracks bracket balance over text fed in pieces (a file read line by
// line), so a caller can tell where a multi-line form ends without
// rescanning what it already fed. The same lexical rules as ScanEdn. Not
// thread-safe.
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

// The reader's position (1-based line, byte column) of byte `offset` in
// `text`; offset may equal text.size() (larger offsets are clamped).
EdnPosition EdnPositionAt(std::string_view text, size_t offset);

// The byte offset of `position` in `text`, clamped to the end of its line
// and to the text; the inverse of EdnPositionAt.
size_t EdnOffsetAt(std::string_view text, EdnPosition position);

}  // namespace mentat::edn

#endif  // MENTAT_EDN_EDN_SCAN_H_
