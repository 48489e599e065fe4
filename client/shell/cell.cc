#include "shell/cell.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace mentat::cli {
namespace {

constexpr int64_t kMicrosPerSecond = 1000000;
constexpr int64_t kSecondsPerDay = 86400;

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

// Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's
// civil_from_days algorithm, restated).
void CivilFromDays(int64_t z, int64_t* year, int* month, int* day) {
  z += 719468;
  const int64_t era = FloorDiv(z, 146097);
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  *day = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  *month = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  *year = yoe + era * 400 + (*month <= 2 ? 1 : 0);
}

void AppendDouble(double d, std::string* out) {
  char buf[32];
  const auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, d);
  (void)ec;  // 32 bytes hold the shortest form of any double
  const std::string_view text(buf, ptr - buf);
  out->append(text);
  if (text.find_first_of(".e") == std::string_view::npos) out->append(".0");
}

void AppendEdnString(std::string_view s, std::string* out) {
  out->push_back('"');
  for (char c : s) {
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
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x",
                        static_cast<unsigned>(static_cast<unsigned char>(c)));
          out->append(buf);
        } else {
          out->push_back(c);
        }
    }
  }
  out->push_back('"');
}

// Length of the valid UTF-8 sequence at s[i], or 0 if it is not valid.
size_t Utf8Length(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  size_t len;
  uint32_t cp;
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0) {
    len = 2;
    cp = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    len = 3;
    cp = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    len = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(i + k) & 0x3F);
  }
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    return 0;
  }
  return len;
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
Cell Cell::Collection(Kind kind, std::vector<Cell> items) {
  Cell c;
  c.kind = kind;
  c.items = std::move(items);
  return c;
}

std::string FormatInstant(int64_t micros) {
  const int64_t seconds = FloorDiv(micros, kMicrosPerSecond);
  const int64_t fraction = micros - seconds * kMicrosPerSecond;
  const int64_t days = FloorDiv(seconds, kSecondsPerDay);
  const int64_t second_of_day = seconds - days * kSecondsPerDay;
  int64_t year;
  int month, day;
  CivilFromDays(days, &year, &month, &day);
  char buf[64];
  int len = std::snprintf(buf, sizeof buf, "%04lld-%02d-%02dT%02d:%02d:%02d",
                          static_cast<long long>(year), month, day,
                          static_cast<int>(second_of_day / 3600),
                          static_cast<int>(second_of_day / 60 % 60),
                          static_cast<int>(second_of_day % 60));
  if (fraction != 0) {
    if (fraction % 1000 == 0) {
      len += std::snprintf(buf + len, sizeof buf - len, ".%03lld",
                           static_cast<long long>(fraction / 1000));
    } else {
      len += std::snprintf(buf + len, sizeof buf - len, ".%06lld",
                           static_cast<long long>(fraction));
    }
  }
  std::snprintf(buf + len, sizeof buf - len, "Z");
  return buf;
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
      if (std::isnan(cell.real)) {
        out->append("##NaN");
      } else if (std::isinf(cell.real)) {
        out->append(cell.real > 0 ? "##Inf" : "##-Inf");
      } else {
        AppendDouble(cell.real, out);
      }
      return;
    case Kind::kString:
      AppendEdnString(cell.text, out);
      return;
    case Kind::kKeyword:
      out->push_back(':');
      out->append(cell.text);
      return;
    case Kind::kSymbol:
      out->append(cell.text);
      return;
    case Kind::kInstant:
      out->append("#inst \"");
      out->append(FormatInstant(cell.number));
      out->push_back('"');
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
      const size_t len = Utf8Length(s, i);
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
      AppendTagged("#inst", FormatInstant(cell.number), out);
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
      return FormatInstant(cell.number);
    case Cell::Kind::kUuid:
      return cell.text;
    default:
      return ToEdn(cell);
  }
}

}  // namespace mentat::cli
