#include "mentat/edn/edn_scan.h"

#include <string>

namespace mentat::edn {
namespace {

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',' ||
         c == '\f';
}

bool IsDelimiter(char c) {
  return IsSpace(c) || c == '(' || c == ')' || c == '[' || c == ']' ||
         c == '{' || c == '}' || c == '"' || c == ';';
}

bool IsAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9');
}

bool IsContinuationByte(char c) {
  return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
}

bool IsLetter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

class Scanner {
 public:
  explicit Scanner(std::string_view text) : t_(text) {}

  EdnScan Run() {
    const size_t n = t_.size();
    size_t i = 0;
    while (i < n) {
      const char c = t_[i];
      if (IsSpace(c)) {
        ++i;
      } else if (c == ';') {
        while (i < n && t_[i] != '\n') ++i;
      } else if (c == '"') {
        const size_t begin = i;
        if (!SkipString(&i)) {
          out_.in_string = true;
          out_.unclosed_at = out_.depth > 0 ? group_start_ : begin;
          break;
        }
        Atom(begin, i);
      } else if (c == '\\') {
        // A character literal: one character (which may be a bracket, a
        // quote or several UTF-8 bytes, \é), then letters for the named
        // ones (\newline, \u0041).
        const size_t begin = i;
        i += 2;
        while (i < n && IsContinuationByte(t_[i])) ++i;
        while (i < n && IsAlnum(t_[i])) ++i;
        if (i > n) i = n;
        Atom(begin, i);
      } else if (c == '(' || c == '[' || c == '{') {
        Open(i);
        ++i;
      } else if (c == '#' && i + 1 < n && t_[i + 1] == '{') {
        Open(i);
        i += 2;
      } else if (c == ')' || c == ']' || c == '}') {
        Close(i + 1);
        ++i;
      } else if (c == '#' && i + 1 < n && t_[i + 1] == '_') {
        if (out_.depth == 0) ++discards_;
        i += 2;
      } else if (c == '#' && i + 1 < n && t_[i + 1] == '"') {
        // A regex literal: the string that follows is the form.
        if (out_.depth == 0 && prefix_ == std::string_view::npos) prefix_ = i;
        ++i;
      } else if (c == '#' && i + 1 < n && IsLetter(t_[i + 1])) {
        // A tag: it belongs to the form after it.
        const size_t begin = i;
        while (i < n && !IsDelimiter(t_[i])) ++i;
        if (out_.depth == 0 && prefix_ == std::string_view::npos) {
          prefix_ = begin;
        }
      } else {
        const size_t begin = i;
        while (i < n && !IsDelimiter(t_[i])) ++i;
        Atom(begin, i);
      }
    }
    if (out_.depth > 0) out_.unclosed_at = group_start_;
    return std::move(out_);
  }

 private:
  // Moves *i past the string starting at *i; false if it never closes.
  bool SkipString(size_t* i) {
    size_t j = *i + 1;
    while (j < t_.size() && t_[j] != '"') {
      j += t_[j] == '\\' ? 2 : 1;
    }
    if (j >= t_.size()) return false;
    *i = j + 1;
    return true;
  }

  void Atom(size_t begin, size_t end) {
    if (out_.depth == 0) Finish(begin, end);
  }

  void Open(size_t at) {
    if (out_.depth == 0) group_start_ = at;
    ++out_.depth;
  }

  void Close(size_t end) {
    if (out_.depth == 0) {
      out_.stray_closer = true;
      return;
    }
    --out_.depth;
    if (out_.depth == 0) Finish(group_start_, end);
  }

  void Finish(size_t begin, size_t end) {
    if (prefix_ != std::string_view::npos) {
      begin = prefix_;
      prefix_ = std::string_view::npos;
    }
    if (discards_ > 0) {
      --discards_;
      return;
    }
    out_.forms.push_back({begin, end});
  }

  std::string_view t_;
  EdnScan out_;
  size_t group_start_ = 0;
  size_t prefix_ = std::string_view::npos;
  int discards_ = 0;
};

}  // namespace

EdnScan ScanEdn(std::string_view text) { return Scanner(text).Run(); }

void EdnBalance::Feed(std::string_view text) {
  for (const char c : text) {
    if (escape_) {
      escape_ = false;
    } else if (in_comment_) {
      in_comment_ = c != '\n';
    } else if (in_string_) {
      if (c == '\\') {
        escape_ = true;
      } else if (c == '"') {
        in_string_ = false;
      }
    } else if (c == '"') {
      in_string_ = true;
    } else if (c == ';') {
      in_comment_ = true;
    } else if (c == '\\') {
      escape_ = true;
    } else if (c == '(' || c == '[' || c == '{') {
      ++depth_;
    } else if (c == ')' || c == ']' || c == '}') {
      --depth_;
    }
  }
}

bool IsCompleteEdn(std::string_view text) {
  const EdnScan scan = ScanEdn(text);
  return scan.depth == 0 && !scan.in_string;
}

EdnPosition EdnPositionAt(std::string_view text, size_t offset) {
  EdnPosition pos{1, 1};
  if (offset > text.size()) offset = text.size();
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++pos.line;
      pos.column = 1;
    } else {
      ++pos.column;
    }
  }
  return pos;
}

size_t EdnOffsetAt(std::string_view text, EdnPosition position) {
  const uint32_t line = position.line;
  const uint32_t column = position.column;
  size_t i = 0;
  for (uint32_t l = 1; l < line && i < text.size(); ++i) {
    if (text[i] == '\n') ++l;
  }
  size_t line_end = text.find('\n', i);
  if (line_end == std::string_view::npos) line_end = text.size();
  const size_t want = i + (column > 0 ? column - 1 : 0);
  return want < line_end ? want : line_end;
}

}  // namespace mentat::edn
