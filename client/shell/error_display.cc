#include "shell/error_display.h"

#include "mentat/edn/edn_scan.h"

namespace mentat::cli {
namespace {

constexpr char kRed[] = "\033[1;31m";
constexpr char kReset[] = "\033[0m";
// Lines longer than this are shown as a window around the caret.
constexpr size_t kMaxShown = 100;
constexpr size_t kBefore = 60;

bool ParseNumber(std::string_view* s, uint32_t* out) {
  size_t i = 0;
  uint64_t v = 0;
  while (i < s->size() && (*s)[i] >= '0' && (*s)[i] <= '9' && i < 9) {
    v = v * 10 + static_cast<uint64_t>((*s)[i] - '0');
    ++i;
  }
  if (i == 0) return false;
  *out = static_cast<uint32_t>(v);
  s->remove_prefix(i);
  return true;
}

bool Consume(std::string_view* s, std::string_view prefix) {
  if (s->substr(0, prefix.size()) != prefix) return false;
  s->remove_prefix(prefix.size());
  return true;
}

// Code points in s[0, bytes).
size_t CodePoints(std::string_view s, size_t bytes) {
  size_t n = 0;
  for (size_t i = 0; i < bytes && i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) ++n;
  }
  return n;
}

// Moves `at` back to the start of a UTF-8 sequence.
size_t CharStart(std::string_view s, size_t at) {
  while (at > 0 && at < s.size() &&
         (static_cast<unsigned char>(s[at]) & 0xC0) == 0x80) {
    --at;
  }
  return at;
}

}  // namespace

std::optional<MessagePosition> ParseMessagePosition(std::string_view message) {
  MessagePosition pos;
  std::string_view s = message;
  if (!Consume(&s, "line ") || !ParseNumber(&s, &pos.line) ||
      !Consume(&s, ", column ") || !ParseNumber(&s, &pos.column) ||
      !Consume(&s, ": ")) {
    return std::nullopt;
  }
  if (pos.line == 0 || pos.column == 0) return std::nullopt;
  pos.rest = s;
  return pos;
}

std::string RenderError(std::string_view message, const ErrorContext& ctx) {
  std::string out = ctx.source;
  if (ctx.color) out.append(kRed);
  out.append("ERROR:");
  if (ctx.color) out.append(kReset);
  out.push_back(' ');

  const std::optional<MessagePosition> pos = ParseMessagePosition(message);
  if (!pos || ctx.input.empty()) {
    out.append(message);
    out.push_back('\n');
    return out;
  }
  // The server counts from the start of the text it was sent.
  const size_t request_offset = ctx.request_offset < ctx.input.size()
                                    ? ctx.request_offset
                                    : ctx.input.size();
  const edn::EdnPosition base = edn::EdnPositionAt(ctx.input, request_offset);
  const uint32_t line = base.line + pos->line - 1;
  const uint32_t column =
      pos->line == 1 ? base.column + pos->column - 1 : pos->column;
  const size_t at = edn::EdnOffsetAt(ctx.input, {line, column});
  const edn::EdnPosition actual = edn::EdnPositionAt(ctx.input, at);
  if (actual.line != line) {
    out.append(message);
    out.push_back('\n');
    return out;
  }
  out.append(pos->rest);
  out.push_back('\n');

  const size_t line_begin = at - (actual.column - 1);
  size_t line_end = ctx.input.find('\n', line_begin);
  if (line_end == std::string_view::npos) line_end = ctx.input.size();
  std::string_view text = ctx.input.substr(line_begin, line_end - line_begin);
  size_t caret_bytes = at - line_begin;
  std::string shown_prefix;
  if (text.size() > kMaxShown) {
    size_t from = caret_bytes > kBefore ? caret_bytes - kBefore : 0;
    from = CharStart(text, from);
    size_t to = CharStart(
        text, from + kMaxShown < text.size() ? from + kMaxShown : text.size());
    if (to < text.size()) to = CharStart(text, to);
    std::string_view window = text.substr(from, to - from);
    if (from > 0) shown_prefix = "...";
    caret_bytes -= from;
    std::string shown(window);
    if (to < text.size()) shown.append("...");
    const std::string label =
        "LINE " + std::to_string(ctx.first_line + line - 1) + ": ";
    out.append(label);
    out.append(shown_prefix);
    out.append(shown);
    out.push_back('\n');
    out.append(
        label.size() + shown_prefix.size() + CodePoints(window, caret_bytes),
        ' ');
    out.append("^\n");
    return out;
  }
  const std::string label =
      "LINE " + std::to_string(ctx.first_line + line - 1) + ": ";
  out.append(label);
  out.append(text);
  out.push_back('\n');
  // Tabs keep their width under the caret.
  for (size_t i = 0; i < label.size(); ++i) out.push_back(' ');
  for (size_t i = 0; i < caret_bytes; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\t') {
      out.push_back('\t');
    } else if ((c & 0xC0) != 0x80) {
      out.push_back(' ');
    }
  }
  out.append("^\n");
  return out;
}

}  // namespace mentat::cli
