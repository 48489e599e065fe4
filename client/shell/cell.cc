#include "shell/cell.h"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "mentat/edn/edn_inst.h"
#include "mentat/edn/edn_printer.h"
#include "mentat/edn/utf8.h"

namespace mentat::cli {
namespace {

void AppendDouble(double d, std::string* out) {
  char buf[32];
  const auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, d);
  (void)ec;  // 32 bytes hold the shortest form of any double
  const std::string_view text(buf, ptr - buf);
  out->append(text);
  if (text.find_first_of(".e") == std::string_view::npos) out->append(".0");
}

void AppendTagged(std::string_view tag, std::string_view text,
                  std::string* out) {
  out->append("{\"");
  out->append(tag);
  out->append("\": ");
  AppendJsonString(text, out);
  out->push_back('}');
}

}  // namespace

Cell Cell::Boolean(bool b) {
  Cell c;
  c.kind = Kind::kBoolean;
  c.boolean = b;
  return c;
}
Cell Cell::Long(int64_t v) {
  Cell c;
  c.kind = Kind::kLong;
  c.number = v;
  return c;
}
Cell Cell::Double(double v) {
  Cell c;
  c.kind = Kind::kDouble;
  c.real = v;
  return c;
}
Cell Cell::String(std::string s) {
  Cell c;
  c.kind = Kind::kString;
  c.text = std::move(s);
  return c;
}
Cell Cell::Keyword(std::string name) {
  Cell c;
  c.kind = Kind::kKeyword;
  c.text = std::move(name);
  return c;
}
Cell Cell::Symbol(std::string name) {
  Cell c;
  c.kind = Kind::kSymbol;
  c.text = std::move(name);
  return c;
}
Cell Cell::Ref(int64_t id) {
  Cell c;
  c.kind = Kind::kRef;
  c.number = id;
  return c;
}
Cell Cell::Instant(int64_t micros) {
  Cell c;
  c.kind = Kind::kInstant;
  c.number = micros;
  return c;
}
Cell Cell::Uuid(std::string canonical) {
  Cell c;
  c.kind = Kind::kUuid;
  c.text = std::move(canonical);
  return c;
}
Cell Cell::BigInt(std::string digits) {
  Cell c;
  c.kind = Kind::kBigInt;
  c.text = std::move(digits);
  return c;
}
Cell Cell::BigDec(std::string digits) {
  Cell c;
  c.kind = Kind::kBigDec;
  c.text = std::move(digits);
  return c;
}
Cell Cell::Bytes(std::string raw) {
  Cell c;
  c.kind = Kind::kBytes;
  c.text = std::move(raw);
  return c;
}

Cell Cell::Uri(std::string text) {
  Cell c;
  c.kind = Kind::kUri;
  c.text = std::move(text);
  return c;
}
Cell Cell::Collection(Kind kind, std::vector<Cell> items) {
  Cell c;
  c.kind = kind;
  c.items = std::move(items);
  return c;
}

std::string Base64(std::string_view raw) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  const auto b = [&](size_t k) {
    return static_cast<uint32_t>(static_cast<unsigned char>(raw[k]));
  };
  for (; i + 2 < raw.size(); i += 3) {
    const uint32_t v = (b(i) << 16) | (b(i + 1) << 8) | b(i + 2);
    out.push_back(kAlphabet[v >> 18]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.push_back(kAlphabet[(v >> 6) & 63]);
    out.push_back(kAlphabet[v & 63]);
  }
  if (i + 1 == raw.size()) {
    const uint32_t v = b(i) << 16;
    out.push_back(kAlphabet[v >> 18]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.append("==");
  } else if (i + 2 == raw.size()) {
    const uint32_t v = (b(i) << 16) | (b(i + 1) << 8);
    out.push_back(kAlphabet[v >> 18]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.push_back(kAlphabet[(v >> 6) & 63]);
    out.push_back('=');
  }
  return out;
}

void AppendEdn(const Cell& cell, std::string* out) {
  using Kind = Cell::Kind;
  switch (cell.kind) {
    case Kind::kNil:
      out->append("nil");
      return;
    case Kind::kBoolean:
      out->append(cell.boolean ? "true" : "false");
      return;
    case Kind::kLong:
    case Kind::kRef:
      out->append(std::to_string(cell.number));
      return;
    case Kind::kDouble:
      edn::PrintEdnTo(edn::EdnValue::Float(cell.real), out);
      return;
    case Kind::kString:
      edn::PrintEdnTo(edn::EdnValue::String(cell.text), out);
      return;
    case Kind::kKeyword:
      out->push_back(':');
      out->append(cell.text);
      return;
    case Kind::kSymbol:
      out->append(cell.text);
      return;
    case Kind::kInstant:
      edn::PrintEdnTo(edn::EdnValue::Inst(cell.number), out);
      return;
    case Kind::kUuid:
      out->append("#uuid \"");
      out->append(cell.text);
      out->push_back('"');
      return;
    case Kind::kBigInt:
      out->append(cell.text);
      out->push_back('N');
      return;
    case Kind::kBigDec:
      out->append(cell.text);
      out->push_back('M');
      return;
    case Kind::kBytes:
      out->append("#bytes \"");
      out->append(Base64(cell.text));
      out->push_back('"');
      return;
    case Kind::kUri:
      out->append("#uri ");
      edn::PrintEdnTo(edn::EdnValue::String(cell.text), out);
      return;
    case Kind::kVector:
    case Kind::kList:
    case Kind::kSet: {
      out->append(cell.kind == Kind::kVector ? "["
                  : cell.kind == Kind::kList ? "("
                                             : "#{");
      for (size_t i = 0; i < cell.items.size(); ++i) {
        if (i > 0) out->push_back(' ');
        AppendEdn(cell.items[i], out);
      }
      out->push_back(cell.kind == Kind::kVector ? ']'
                     : cell.kind == Kind::kList ? ')'
                                                : '}');
      return;
    }
    case Kind::kMap:
      out->push_back('{');
      for (size_t i = 0; i + 1 < cell.items.size(); i += 2) {
        if (i > 0) out->append(", ");
        AppendEdn(cell.items[i], out);
        out->push_back(' ');
        AppendEdn(cell.items[i + 1], out);
      }
      out->push_back('}');
      return;
  }
}

std::string ToEdn(const Cell& cell) {
  std::string out;
  AppendEdn(cell, &out);
  return out;
}

void AppendJsonString(std::string_view s, std::string* out) {
  out->push_back('"');
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      uint32_t code_point;
      const int len =
          edn::DecodeUtf8(s.data() + i, s.data() + s.size(), &code_point);
      if (len == 0) {
        out->append("\\ufffd");
        ++i;
      } else {
        out->append(s.substr(i, len));
        i += len;
      }
      continue;
    }
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
      default:
        if (c < 0x20 || c == 0x7F) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
          out->append(buf);
        } else {
          out->push_back(static_cast<char>(c));
        }
    }
    ++i;
  }
  out->push_back('"');
}

void AppendJson(const Cell& cell, std::string* out) {
  using Kind = Cell::Kind;
  switch (cell.kind) {
    case Kind::kNil:
      out->append("null");
      return;
    case Kind::kBoolean:
      out->append(cell.boolean ? "true" : "false");
      return;
    case Kind::kLong:
    case Kind::kRef:
      out->append(std::to_string(cell.number));
      return;
    case Kind::kDouble:
      if (std::isnan(cell.real)) {
        AppendTagged("#double", "NaN", out);
      } else if (std::isinf(cell.real)) {
        AppendTagged("#double", cell.real > 0 ? "Infinity" : "-Infinity", out);
      } else {
        AppendDouble(cell.real, out);
      }
      return;
    case Kind::kString:
      AppendJsonString(cell.text, out);
      return;
    case Kind::kKeyword:
      AppendJsonString(":" + cell.text, out);
      return;
    case Kind::kSymbol:
      AppendJsonString(cell.text, out);
      return;
    case Kind::kInstant:
      AppendTagged("#inst", edn::FormatInstant(cell.number), out);
      return;
    case Kind::kUuid:
      AppendTagged("#uuid", cell.text, out);
      return;
    case Kind::kBigInt:
      AppendTagged("#bigint", cell.text, out);
      return;
    case Kind::kBigDec:
      AppendTagged("#bigdec", cell.text, out);
      return;
    case Kind::kBytes:
      AppendTagged("#bytes", Base64(cell.text), out);
      return;
    case Kind::kUri:
      AppendTagged("#uri", cell.text, out);
      return;
    case Kind::kVector:
    case Kind::kList:
    case Kind::kSet:
      out->push_back('[');
      for (size_t i = 0; i < cell.items.size(); ++i) {
        if (i > 0) out->append(", ");
        AppendJson(cell.items[i], out);
      }
      out->push_back(']');
      return;
    case Kind::kMap: {
      bool named_keys = true;
      for (size_t i = 0; i < cell.items.size(); i += 2) {
        const Kind k = cell.items[i].kind;
        if (k != Kind::kKeyword && k != Kind::kString) named_keys = false;
      }
      out->push_back(named_keys ? '{' : '[');
      for (size_t i = 0; i + 1 < cell.items.size(); i += 2) {
        if (i > 0) out->append(", ");
        if (!named_keys) out->push_back('[');
        AppendJson(cell.items[i], out);
        out->append(named_keys ? ": " : ", ");
        AppendJson(cell.items[i + 1], out);
        if (!named_keys) out->push_back(']');
      }
      out->push_back(named_keys ? '}' : ']');
      return;
    }
  }
}

std::string ToJson(const Cell& cell) {
  std::string out;
  AppendJson(cell, &out);
  return out;
}

std::string ToPlainText(const Cell& cell) {
  switch (cell.kind) {
    case Cell::Kind::kNil:
      return "";
    case Cell::Kind::kString:
      return cell.text;
    case Cell::Kind::kInstant:
      return edn::FormatInstant(cell.number);
    case Cell::Kind::kUuid:
    case Cell::Kind::kUri:
      return cell.text;
    default:
      return ToEdn(cell);
  }
}

}  // namespace mentat::cli
