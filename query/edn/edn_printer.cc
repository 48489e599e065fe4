#include "mentat/query/edn/edn_printer.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "mentat/query/edn/edn_inst.h"
#include "mentat/query/edn/edn_uuid.h"
#include "mentat/query/edn/utf8.h"
#include "mentat/storage/excerpt.h"

namespace mentat::edn {
namespace {

constexpr char kHex[] = "0123456789abcdef";

void AppendU4(uint32_t unit, std::string* out) {
  out->append("\\u");
  for (int shift = 12; shift >= 0; shift -= 4) {
    out->push_back(kHex[unit >> shift & 0xF]);
  }
}

void PrintString(std::string_view s, std::string* out) {
  out->reserve(out->size() + s.size() + 2);
  out->push_back('"');
  size_t run = 0;  // start of the bytes not yet copied
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out->append(s, run, i - run);
    run = i + 1;
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\t':
        out->append("\\t");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\b':
        out->append("\\b");
        break;
      case '\f':
        out->append("\\f");
        break;
      default:
        AppendU4(c, out);
    }
  }
  out->append(s, run, std::string::npos);
  out->push_back('"');
}

void PrintChar(uint32_t cp, std::string* out) {
  switch (cp) {
    case '\n':
      out->append("\\newline");
      return;
    case '\r':
      out->append("\\return");
      return;
    case ' ':
      out->append("\\space");
      return;
    case '\t':
      out->append("\\tab");
      return;
    case '\f':
      out->append("\\formfeed");
      return;
    case '\b':
      out->append("\\backspace");
      return;
    default:
      break;
  }
  if (cp < 0x20 || cp == 0x7F || (cp >= 0xD800 && cp <= 0xDFFF) ||
      cp > 0x10FFFF) {
    AppendU4(cp > 0xFFFF ? 0xFFFD : cp, out);
    return;
  }
  out->push_back('\\');
  AppendUtf8(cp, out);
}

void PrintDouble(double d, std::string* out) {
  if (std::isnan(d)) {
    out->append("##NaN");
    return;
  }
  if (std::isinf(d)) {
    out->append(d > 0 ? "##Inf" : "##-Inf");
    return;
  }
  char buf[32];
  const auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, d);
  (void)ec;  // 32 bytes always hold the shortest form of a double
  const std::string_view text(buf, ptr - buf);
  out->append(text);
  if (text.find_first_of(".e") == std::string_view::npos) out->append(".0");
}

class Printer {
 public:
  Printer(std::string* out, size_t limit) : out_(out), limit_(limit) {}

  void Print(const EdnValue& v) {
    switch (v.kind()) {
      case EdnKind::kNil:
        out_->append("nil");
        return;
      case EdnKind::kBool:
        out_->append(v.as_bool() ? "true" : "false");
        return;
      case EdnKind::kInt: {
        char buf[24];
        const auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, v.as_int());
        (void)ec;
        out_->append(buf, ptr);
        return;
      }
      case EdnKind::kBigInt:
        AppendText(v.text());
        out_->push_back('N');
        return;
      case EdnKind::kFloat:
        PrintDouble(v.as_double(), out_);
        return;
      case EdnKind::kBigDec:
        AppendText(v.text());
        out_->push_back('M');
        return;
      case EdnKind::kChar:
        PrintChar(v.as_char(), out_);
        return;
      case EdnKind::kString:
        if (Bounded()) {
          PrintString(ExcerptPrefix(v.text(), TextBudget()), out_);
          out_->append(ExcerptMarker(v.text(), TextBudget()));
        } else {
          PrintString(v.text(), out_);
        }
        return;
      case EdnKind::kKeyword:
        out_->push_back(':');
        AppendText(v.text());
        return;
      case EdnKind::kSymbol:
        AppendText(v.text());
        return;
      case EdnKind::kList:
        PrintItems(v, "(", ")", " ");
        return;
      case EdnKind::kVector:
        PrintItems(v, "[", "]", " ");
        return;
      case EdnKind::kSet:
        PrintItems(v, "#{", "}", " ");
        return;
      case EdnKind::kMap: {
        out_->push_back('{');
        const auto& items = v.items();
        for (size_t i = 0; i + 1 < items.size(); i += 2) {
          if (Full()) return;
          if (i > 0) out_->append(", ");
          Print(items[i]);
          out_->push_back(' ');
          Print(items[i + 1]);
        }
        out_->push_back('}');
        return;
      }
      case EdnKind::kInst:
        out_->append("#inst \"");
        out_->append(FormatInstant(v.as_inst_micros()));
        out_->push_back('"');
        return;
      case EdnKind::kUuid:
        out_->append("#uuid \"");
        out_->append(FormatUuid(v.text()));
        out_->push_back('"');
        return;
      case EdnKind::kTagged:
        out_->push_back('#');
        out_->append(v.text());
        out_->push_back(' ');
        if (!v.items().empty()) Print(v.items()[0]);
        return;
    }
  }

 private:
  bool Full() const { return out_->size() > limit_; }
  // Abbreviating: a long text is quoted as an excerpt (it could be
  // megabytes), short enough that its "…(N bytes)" fits in the budget.
  bool Bounded() const { return limit_ != std::numeric_limits<size_t>::max(); }
  size_t TextBudget() const { return std::min(kExcerptBytes, limit_ / 2); }
  void AppendText(std::string_view text) {
    if (Bounded()) {
      out_->append(ExcerptPrefix(text, TextBudget()));
      out_->append(ExcerptMarker(text, TextBudget()));
    } else {
      out_->append(text);
    }
  }

  void PrintItems(const EdnValue& v, const char* open, const char* close,
                  const char* separator) {
    out_->append(open);
    bool first = true;
    for (const EdnValue& item : v.items()) {
      if (Full()) return;
      if (!first) out_->append(separator);
      first = false;
      Print(item);
    }
    out_->append(close);
  }

  std::string* out_;
  size_t limit_;
};

}  // namespace

std::string PrintEdn(const EdnValue& value) {
  std::string out;
  PrintEdnTo(value, &out);
  return out;
}

void PrintEdnTo(const EdnValue& value, std::string* out) {
  Printer(out, std::numeric_limits<size_t>::max()).Print(value);
}

std::string PrintEdnAbbreviated(const EdnValue& value, size_t max_bytes) {
  std::string out;
  Printer(&out, max_bytes).Print(value);
  if (out.size() > max_bytes) {
    out.resize(ExcerptPrefix(out, max_bytes).size());
    out.append("...");
  }
  return out;
}

}  // namespace mentat::edn
