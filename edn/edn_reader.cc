#include "mentat/edn/edn_reader.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/cord.h"
#include "mentat/base/excerpt.h"
#include "mentat/base/str_cat.h"
#include "mentat/edn/edn_inst.h"
#include "mentat/edn/edn_printer.h"
#include "mentat/edn/edn_tokens.h"
#include "mentat/edn/edn_uuid.h"
#include "mentat/edn/utf8.h"

namespace mentat::edn {
namespace {

// absl::string_view is not std::string_view in this Abseil build.
inline std::string_view ToStd(absl::string_view s) {
  return std::string_view(s.data(), s.size());
}
constexpr char kPositionPayloadUrl[] = "mentat.edn/position";

// Character classes, one table lookup per byte on the hot paths.
enum : uint8_t {
  kSpace = 1,        // whitespace other than '\n' (commas included)
  kToken = 2,        // may appear in a symbol, keyword or number
  kDelimiter = 4,    // may follow a token or character literal
  kStringPlain = 8,  // needs no attention inside a string
  kAsciiAlnum = 16,  // [A-Za-z0-9]
};

struct CharTable {
  uint8_t bits[256] = {};
  constexpr CharTable() {
    for (int c = 0; c < 256; ++c) {
      uint8_t b = 0;
      const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                         (c >= '0' && c <= '9');
      if (alnum) b |= kToken | kAsciiAlnum;
      if (c >= 0x80) b |= kToken;
      for (char t : std::string_view(".*+!-_?$%&=<>/:#")) {
        if (c == t) b |= kToken;
      }
      const bool space = c == ' ' || c == '\t' || c == '\r' || c == '\f' ||
                         c == '\v' || c == ',';
      if (space) b |= kSpace;
      if (space || c == '\n') b |= kDelimiter;
      for (char t : std::string_view("()[]{}\";\\")) {
        if (c == t) b |= kDelimiter;
      }
      if (c < 0x80 && c != '"' && c != '\\' && c != '\n') b |= kStringPlain;
      bits[c] = b;
    }
  }
};
constexpr CharTable kTable;

inline uint8_t ClassOf(char c) {
  return kTable.bits[static_cast<unsigned char>(c)];
}

// The first byte at or after p (before end) that is not kStringPlain
// ('"', '\\', '\n' or a byte of a multi-byte UTF-8 sequence), or end.
// Eight bytes at a time while eight remain: a byte equal to one of the
// three shows as a zero in its XOR, found with the borrow trick, whose
// lowest flag is always exact.
inline const char* SkipStringPlain(const char* p, const char* end) {
  constexpr uint64_t kOnes = 0x0101010101010101ull;
  constexpr uint64_t kHigh = 0x8080808080808080ull;
  auto zero_bytes = [](uint64_t x) { return (x - kOnes) & ~x & kHigh; };
  while (end - p >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    const uint64_t special = zero_bytes(w ^ (kOnes * '"')) |
                             zero_bytes(w ^ (kOnes * '\\')) |
                             zero_bytes(w ^ (kOnes * '\n')) | (w & kHigh);
    if (special != 0) return p + __builtin_ctzll(special) / 8;
    p += 8;
  }
  while (p < end && (ClassOf(*p) & kStringPlain)) ++p;
  return p;
}
inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }
inline bool IsAlpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Four hex digits at p (the caller checked they are in range), or -1.
int32_t Hex4(const char* p) {
  int32_t v = 0;
  for (int i = 0; i < 4; ++i) {
    const int d = HexDigit(p[i]);
    if (d < 0) return -1;
    v = v << 4 | d;
  }
  return v;
}

// A byte quoted for an error message: 'x', or byte 0xNN when unprintable.
std::string Quoted(char c) {
  const auto b = static_cast<unsigned char>(c);
  if (b >= 0x20 && b < 0x7F) return StrCat("'", std::string(1, c), "'");
  static constexpr char kHex[] = "0123456789ABCDEF";
  return StrCat("byte 0x", std::string(1, kHex[b >> 4]),
                std::string(1, kHex[b & 0xF]));
}

std::string_view CollectionName(EdnKind kind) {
  switch (kind) {
    case EdnKind::kList:
      return "list";
    case EdnKind::kVector:
      return "vector";
    case EdnKind::kMap:
      return "map";
    default:
      return "set";
  }
}

// Collections up to this many entries look for duplicates pairwise; larger
// ones sort their hashes first.
constexpr size_t kSmallDuplicateScan = 16;

// Index in `items` of an entry (every `stride`-th item) equal to an earlier
// one, or npos. When several exist, returns the smallest such index.
size_t FindDuplicate(const std::vector<EdnValue>& items, size_t stride) {
  const size_t n = items.size() / stride;
  if (n <= kSmallDuplicateScan) {
    for (size_t j = stride; j < items.size(); j += stride) {
      for (size_t i = 0; i < j; i += stride) {
        if (items[i] == items[j]) return j;
      }
    }
    return std::string::npos;
  }
  std::vector<std::pair<size_t, size_t>> hashes;  // (hash, index)
  hashes.reserve(n);
  for (size_t i = 0; i < items.size(); i += stride) {
    hashes.emplace_back(items[i].Hash(), i);
  }
  std::sort(hashes.begin(), hashes.end());
  size_t best = std::string::npos;
  for (size_t run = 0; run < hashes.size();) {
    size_t run_end = run + 1;
    while (run_end < hashes.size() &&
           hashes[run_end].first == hashes[run].first) {
      ++run_end;
    }
    // Within a run indexes ascend, so the first match for each j is enough.
    for (size_t b = run + 1; b < run_end; ++b) {
      for (size_t a = run; a < b; ++a) {
        if (items[hashes[a].second] == items[hashes[b].second]) {
          best = std::min(best, hashes[b].second);
          break;
        }
      }
    }
    run = run_end;
  }
  return best;
}

}  // namespace

// The recursive-descent reader behind ParseEdn, ParseEdnAll and EdnReader.
// Works on raw pointers into the text; fails by recording status_ and
// returning false, so that the hot paths carry no Status objects.
class EdnParser {
 public:
  EdnParser(std::string_view text, const EdnReadOptions& options)
      : begin_(text.data()),
        p_(text.data()),
        end_(text.data() + text.size()),
        line_start_(text.data()),
        max_depth_(options.max_depth) {
    stack_.reserve(64);
  }

  // Reads the next top-level form: 1 if read, 0 at the end, -1 on error.
  int Next(EdnValue* out) {
    if (!status_.ok()) return -1;
    if (!SkipSpace(0)) return -1;
    if (p_ == end_) return 0;
    *out = EdnValue();
    if (!ParseForm(out, 0)) return -1;
    return 1;
  }

  // After a form: succeeds if nothing but space is left.
  bool ExpectEnd() {
    if (!SkipSpace(0)) return false;
    if (p_ != end_) {
      return Fail(p_,
                  StrCat("expected one form, found more text: ", Quoted(*p_)));
    }
    return true;
  }

  bool FailNoForm() { return Fail(p_, "expected a form, found the end"); }

  const absl::Status& status() const { return status_; }
  size_t offset() const { return static_cast<size_t>(p_ - begin_); }

 private:
  uint32_t Column(const char* at) const {
    return static_cast<uint32_t>(at - line_start_ + 1);
  }

  bool FailAt(uint32_t line, uint32_t column, std::string_view message) {
    status_ = EdnError({line, column}, message);
    return false;
  }

  // `at` must be on the current line.
  bool Fail(const char* at, std::string_view message) {
    return FailAt(line_, Column(at), message);
  }

  bool FailDepth(const EdnValue& at) {
    return FailAt(at.line_, at.column_,
                  StrCat("nesting deeper than ", max_depth_, " levels"));
  }

  // Skips whitespace, commas, comments and #_ discarded forms.
  bool SkipSpace(int depth) {
    for (;;) {
      while (p_ < end_) {
        const char c = *p_;
        if (ClassOf(c) & kSpace) {
          ++p_;
        } else if (c == '\n') {
          ++p_;
          ++line_;
          line_start_ = p_;
        } else if (c == ';') {
          const void* nl = std::memchr(p_, '\n', end_ - p_);
          p_ = nl ? static_cast<const char*>(nl) : end_;
        } else {
          break;
        }
      }
      if (end_ - p_ >= 2 && p_[0] == '#' && p_[1] == '_') {
        if (!Discard(depth)) return false;
        continue;
      }
      return true;
    }
  }

  bool Discard(int depth) {
    EdnValue dropped;
    dropped.line_ = line_;
    dropped.column_ = Column(p_);
    if (depth >= max_depth_) return FailDepth(dropped);
    p_ += 2;
    if (!SkipSpace(depth + 1)) return false;
    if (p_ == end_) {
      return FailAt(dropped.line_, dropped.column_,
                    "#_ needs a form to discard, found the end");
    }
    return ParseForm(&dropped, depth + 1);
  }

  // Reads one form starting at p_ (space already skipped, p_ < end_).
  bool ParseForm(EdnValue* out, int depth) {
    out->line_ = line_;
    out->column_ = Column(p_);
    const char c = *p_;
    switch (c) {
      case '"':
        return ParseString(out);
      case ':':
        return ParseKeyword(out);
      case '[':
        return ParseCollection(out, EdnKind::kVector, ']', depth);
      case '(':
        return ParseCollection(out, EdnKind::kList, ')', depth);
      case '{':
        return ParseCollection(out, EdnKind::kMap, '}', depth);
      case '#':
        return ParseDispatch(out, depth);
      case '\\':
        return ParseChar(out);
      case ')':
      case ']':
      case '}':
        return Fail(p_, StrCat("unmatched ", Quoted(c)));
      default:
        if (ClassOf(c) & kToken) return ParseToken(out);
        return Fail(p_, StrCat("unexpected character ", Quoted(c)));
    }
  }

  // p_ is at the opening bracket ('{' of "#{" for sets); out carries the
  // position of the form.
  bool ParseCollection(EdnValue* out, EdnKind kind, char close, int depth) {
    if (depth >= max_depth_) return FailDepth(*out);
    ++p_;
    const size_t base = stack_.size();
    for (;;) {
      if (!SkipSpace(depth + 1)) return false;
      if (p_ == end_) {
        return FailAt(out->line_, out->column_,
                      StrCat("unterminated ", CollectionName(kind),
                             ": no closing '", std::string(1, close), "'"));
      }
      const char c = *p_;
      if (c == close) {
        ++p_;
        break;
      }
      if (c == ')' || c == ']' || c == '}') {
        return Fail(
            p_, StrCat("unmatched ", Quoted(c), ": the ", CollectionName(kind),
                       " at line ", out->line_, ", column ", out->column_,
                       " needs '", std::string(1, close), "'"));
      }
      if (c != '[' && c != '(' && c != '{' && c != '#') {
        // A scalar (string, keyword, number, ...) never uses the stack, so
        // it is read straight into its slot there: no move.
        if (!ParseForm(&stack_.emplace_back(), depth + 1)) return false;
        continue;
      }
      EdnValue item;
      if (!ParseForm(&item, depth + 1)) return false;
      stack_.push_back(std::move(item));
    }
    out->kind_ = kind;
    out->items_.assign(std::make_move_iterator(stack_.begin() + base),
                       std::make_move_iterator(stack_.end()));
    stack_.erase(stack_.begin() + base, stack_.end());
    if (kind == EdnKind::kMap) {
      if (out->items_.size() % 2 != 0) {
        const EdnValue& key = out->items_.back();
        return FailAt(
            key.line_, key.column_,
            StrCat("map key ", PrintEdnAbbreviated(key, 60), " has no value"));
      }
      const size_t dup = FindDuplicate(out->items_, 2);
      if (dup != std::string::npos) {
        const EdnValue& key = out->items_[dup];
        return FailAt(
            key.line_, key.column_,
            StrCat("duplicate map key ", PrintEdnAbbreviated(key, 60)));
      }
    } else if (kind == EdnKind::kSet) {
      const size_t dup = FindDuplicate(out->items_, 1);
      if (dup != std::string::npos) {
        const EdnValue& item = out->items_[dup];
        return FailAt(
            item.line_, item.column_,
            StrCat("duplicate set element ", PrintEdnAbbreviated(item, 60)));
      }
    }
    return true;
  }

  bool ParseString(EdnValue* out) {
    const uint32_t open_line = line_;
    const uint32_t open_column = Column(p_);
    ++p_;
    const char* start = p_;
    p_ = SkipStringPlain(p_, end_);
    out->kind_ = EdnKind::kString;
    if (p_ < end_ && *p_ == '"') {
      // Built whole rather than assigned into: the empty text_ would take
      // basic_string's general replace.
      out->text_ = std::string(start, p_);
      ++p_;
      return true;
    }
    // Escapes, newlines or non-ASCII: the slow path.
    std::string s(start, p_);
    for (;;) {
      if (p_ == end_)
        return FailAt(open_line, open_column, "unterminated string");
      const char c = *p_;
      if (c == '"') {
        ++p_;
        break;
      }
      if (c == '\\') {
        if (!ParseEscape(&s, open_line, open_column)) return false;
      } else if (c == '\n') {
        s.push_back('\n');
        ++p_;
        ++line_;
        line_start_ = p_;
      } else if (static_cast<unsigned char>(c) >= 0x80) {
        uint32_t cp;
        const int len = DecodeUtf8(p_, end_, &cp);
        if (len == 0) return Fail(p_, "invalid UTF-8 in string");
        s.append(p_, len);
        p_ += len;
      } else {
        const char* run = p_;
        p_ = SkipStringPlain(p_, end_);
        s.append(run, p_);
      }
    }
    out->text_ = std::move(s);
    return true;
  }

  // p_ is at a backslash inside a string.
  bool ParseEscape(std::string* s, uint32_t open_line, uint32_t open_column) {
    if (end_ - p_ < 2)
      return FailAt(open_line, open_column, "unterminated string");
    const char e = p_[1];
    char plain = 0;
    switch (e) {
      case 't':
        plain = '\t';
        break;
      case 'r':
        plain = '\r';
        break;
      case 'n':
        plain = '\n';
        break;
      case '\\':
        plain = '\\';
        break;
      case '"':
        plain = '"';
        break;
      case 'b':
        plain = '\b';
        break;
      case 'f':
        plain = '\f';
        break;
      case 'u':
        break;
      default:
        return Fail(p_, StrCat("unsupported escape \\", std::string(1, e),
                               " in string"));
    }
    if (e != 'u') {
      s->push_back(plain);
      p_ += 2;
      return true;
    }
    const int32_t unit = end_ - p_ >= 6 ? Hex4(p_ + 2) : -1;
    if (unit < 0) return Fail(p_, "\\u needs four hexadecimal digits");
    uint32_t cp = static_cast<uint32_t>(unit);
    if (cp >= 0xDC00 && cp <= 0xDFFF) {
      return Fail(p_, "unpaired low surrogate in \\u escape");
    }
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      const int32_t low =
          end_ - p_ >= 12 && p_[6] == '\\' && p_[7] == 'u' ? Hex4(p_ + 8) : -1;
      if (low < 0xDC00 || low > 0xDFFF) {
        return Fail(p_,
                    "high surrogate in \\u escape not followed by a \\u "
                    "low surrogate");
      }
      cp = 0x10000 + ((cp - 0xD800) << 10) +
           (static_cast<uint32_t>(low) - 0xDC00);
      p_ += 6;
    }
    AppendUtf8(cp, s);
    p_ += 6;
    return true;
  }

  // Fails unless p_ is at the end or at a byte that may follow a token.
  bool CheckTokenEnd() {
    if (p_ < end_ && !(ClassOf(*p_) & kDelimiter)) {
      return Fail(p_, StrCat("unexpected character ", Quoted(*p_)));
    }
    return true;
  }

  bool ParseKeyword(EdnValue* out) {
    const char* colon = p_;
    ++p_;
    const char* start = p_;
    while (p_ < end_ && (ClassOf(*p_) & kToken)) ++p_;
    if (!CheckTokenEnd()) return false;
    const std::string_view tok(start, p_ - start);
    if (absl::Status s = CheckEdnKeywordName(tok); !s.ok()) {
      return Fail(colon, ToStd(s.message()));
    }
    out->kind_ = EdnKind::kKeyword;
    out->text_.assign(tok);
    return true;
  }

  bool ParseToken(EdnValue* out) {
    const char* start = p_;
    while (p_ < end_ && (ClassOf(*p_) & kToken)) ++p_;
    if (!CheckTokenEnd()) return false;
    const std::string_view tok(start, p_ - start);
    if (IsEdnNumberToken(tok)) {
      const uint32_t line = out->line_;
      const uint32_t column = out->column_;
      if (absl::Status s = ParseEdnNumber(tok, out); !s.ok()) {
        return Fail(start, ToStd(s.message()));
      }
      out->line_ = line;
      out->column_ = column;
      return true;
    }
    if (tok == "nil") {
      out->kind_ = EdnKind::kNil;
      return true;
    }
    if (tok == "true" || tok == "false") {
      out->kind_ = EdnKind::kBool;
      out->b_ = tok[0] == 't';
      return true;
    }
    if (absl::Status s = CheckEdnSymbolName(tok); !s.ok()) {
      return Fail(start, ToStd(s.message()));
    }
    out->kind_ = EdnKind::kSymbol;
    out->text_.assign(tok);
    return true;
  }

  bool ParseChar(EdnValue* out) {
    const char* backslash = p_;
    ++p_;
    if (p_ == end_) return Fail(backslash, "expected a character after '\\'");
    uint32_t cp;
    const int len = DecodeUtf8(p_, end_, &cp);
    if (len == 0) return Fail(p_, "invalid UTF-8 in character literal");
    if (cp == ' ' || cp == '\t' || cp == '\n' || cp == '\r' || cp == '\f' ||
        cp == '\v') {
      return Fail(backslash,
                  "expected a character after '\\' (write whitespace as "
                  "\\space, \\tab, \\newline, ...)");
    }
    const char* first = p_;
    p_ += len;
    if (ClassOf(*first) & kAsciiAlnum) {
      while (p_ < end_ && (ClassOf(*p_) & kAsciiAlnum)) ++p_;
    }
    const std::string_view tok(first, p_ - first);
    if (tok.size() > 1 && (ClassOf(*first) & kAsciiAlnum)) {
      if (tok == "newline") {
        cp = '\n';
      } else if (tok == "return") {
        cp = '\r';
      } else if (tok == "space") {
        cp = ' ';
      } else if (tok == "tab") {
        cp = '\t';
      } else if (tok == "formfeed") {
        cp = '\f';
      } else if (tok == "backspace") {
        cp = '\b';
      } else if (tok.size() == 5 && tok[0] == 'u' && Hex4(first + 1) >= 0) {
        cp = static_cast<uint32_t>(Hex4(first + 1));
        if (cp >= 0xD800 && cp <= 0xDFFF) {
          return Fail(backslash, StrCat("character \\", Excerpt(tok),
                                        " is a surrogate, not a character"));
        }
      } else {
        return Fail(backslash, StrCat("unknown character \\", Excerpt(tok)));
      }
    }
    if (!CheckTokenEnd()) return false;
    out->kind_ = EdnKind::kChar;
    out->i_ = cp;
    return true;
  }

  // p_ is at '#' (not "#_", which SkipSpace consumed).
  bool ParseDispatch(EdnValue* out, int depth) {
    const char* hash = p_;
    if (end_ - p_ < 2) return Fail(hash, "'#' at the end of the input");
    const char c = p_[1];
    if (c == '{') {
      ++p_;
      return ParseCollection(out, EdnKind::kSet, '}', depth);
    }
    if (c == '#') {
      p_ += 2;
      const char* start = p_;
      while (p_ < end_ && (ClassOf(*p_) & kToken)) ++p_;
      if (!CheckTokenEnd()) return false;
      const std::string_view tok(start, p_ - start);
      out->kind_ = EdnKind::kFloat;
      if (tok == "Inf") {
        out->d_ = std::numeric_limits<double>::infinity();
      } else if (tok == "-Inf") {
        out->d_ = -std::numeric_limits<double>::infinity();
      } else if (tok == "NaN") {
        out->d_ = std::numeric_limits<double>::quiet_NaN();
      } else {
        return Fail(hash, StrCat("unknown symbolic value ##", Excerpt(tok),
                                 " (expected ##Inf, ##-Inf or ##NaN)"));
      }
      return true;
    }
    if (!IsAlpha(c)) {
      return Fail(hash, StrCat("unexpected ", Quoted(c), " after '#'"));
    }
    ++p_;
    const char* start = p_;
    while (p_ < end_ && (ClassOf(*p_) & kToken)) ++p_;
    if (!CheckTokenEnd()) return false;
    const std::string_view tag(start, p_ - start);
    if (absl::Status s = CheckEdnSymbolName(tag); !s.ok()) {
      return Fail(start, ToStd(s.message()));
    }
    if (depth >= max_depth_) return FailDepth(*out);
    if (!SkipSpace(depth + 1)) return false;
    if (p_ == end_) {
      return FailAt(out->line_, out->column_,
                    StrCat("#", Excerpt(tag), " needs a form after it"));
    }
    EdnValue child;
    if (!ParseForm(&child, depth + 1)) return false;
    if (tag == "inst" || tag == "uuid") {
      const bool inst = tag == "inst";
      if (!child.is_string()) {
        return FailAt(child.line_, child.column_,
                      StrCat("#", Excerpt(tag), " needs a string, found ",
                             EdnKindName(child.kind_), " ",
                             PrintEdnAbbreviated(child, 40)));
      }
      if (inst) {
        absl::StatusOr<int64_t> micros = ParseInstant(child.text_);
        if (!micros.ok()) {
          return FailAt(child.line_, child.column_,
                        StrCat("invalid #inst \"", Excerpt(child.text_),
                               "\": ", ToStd(micros.status().message())));
        }
        out->kind_ = EdnKind::kInst;
        out->i_ = *micros;
      } else {
        absl::StatusOr<std::string> bytes = ParseUuid(child.text_);
        if (!bytes.ok()) {
          return FailAt(child.line_, child.column_,
                        StrCat("invalid #uuid \"", Excerpt(child.text_),
                               "\": ", ToStd(bytes.status().message())));
        }
        out->kind_ = EdnKind::kUuid;
        out->text_ = std::move(*bytes);
      }
      return true;
    }
    out->kind_ = EdnKind::kTagged;
    out->text_.assign(tag);
    out->items_.push_back(std::move(child));
    return true;
  }

  const char* const begin_;
  const char* p_;
  const char* const end_;
  const char* line_start_;  // first byte of the current line
  uint32_t line_ = 1;
  const int max_depth_;
  // Elements of the collections being read, innermost last; each collection
  // moves its elements out into one exactly-sized vector when it closes.
  std::vector<EdnValue> stack_;
  absl::Status status_;
};

[[nodiscard]] absl::Status EdnError(EdnPosition position,
                                    std::string_view message) {
  if (position.line == 0)
    return absl::InvalidArgumentError(std::string(message));
  absl::Status status = absl::InvalidArgumentError(StrCat(
      "line ", position.line, ", column ", position.column, ": ", message));
  status.SetPayload(kPositionPayloadUrl,
                    absl::Cord(StrCat(position.line, ":", position.column)));
  return status;
}

std::optional<EdnPosition> EdnErrorPosition(const absl::Status& status) {
  absl::optional<absl::Cord> payload = status.GetPayload(kPositionPayloadUrl);
  if (!payload.has_value()) return std::nullopt;
  const std::string text(*payload);
  EdnPosition pos;
  int consumed = 0;
  if (std::sscanf(text.c_str(), "%u:%u%n", &pos.line, &pos.column, &consumed) !=
          2 ||
      static_cast<size_t>(consumed) != text.size()) {
    return std::nullopt;
  }
  return pos;
}

[[nodiscard]] absl::StatusOr<EdnValue> ParseEdn(std::string_view text,
                                                const EdnReadOptions& options) {
  EdnParser parser(text, options);
  EdnValue value;
  const int r = parser.Next(&value);
  if (r < 0) return parser.status();
  if (r == 0) {
    parser.FailNoForm();
    return parser.status();
  }
  if (!parser.ExpectEnd()) return parser.status();
  return value;
}

[[nodiscard]] absl::StatusOr<std::vector<EdnValue>> ParseEdnAll(
    std::string_view text, const EdnReadOptions& options) {
  EdnParser parser(text, options);
  std::vector<EdnValue> forms;
  for (;;) {
    EdnValue value;
    const int r = parser.Next(&value);
    if (r < 0) return parser.status();
    if (r == 0) break;
    forms.push_back(std::move(value));
  }
  return forms;
}

EdnReader::EdnReader(std::string_view text, const EdnReadOptions& options)
    : parser_(std::make_unique<EdnParser>(text, options)) {}

EdnReader::~EdnReader() = default;

absl::StatusOr<bool> EdnReader::Next(EdnValue* out) {
  const int r = parser_->Next(out);
  if (r < 0) return parser_->status();
  return r > 0;
}

size_t EdnReader::offset() const { return parser_->offset(); }

}  // namespace mentat::edn
