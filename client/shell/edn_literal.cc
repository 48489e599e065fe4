#include "shell/edn_literal.h"

#include <cerrno>
#include <cstdlib>

#include "shell/command.h"
#include "shell/edn_scan.h"

namespace mentat::cli {
namespace {

absl::Status Bad(std::string_view what, std::string_view text) {
  return absl::InvalidArgumentError(std::string(what) + ": " +
                                    std::string(text));
}

// Days from 1970-01-01 to a proleptic Gregorian date.
int64_t DaysFromCivil(int64_t y, int m, int d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

bool Digits(std::string_view s, size_t at, size_t n, int* out) {
  if (at + n > s.size()) return false;
  int v = 0;
  for (size_t i = at; i < at + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}

absl::StatusOr<std::string> Unquote(std::string_view text) {
  if (text.size() < 2 || text.front() != '"' || text.back() != '"') {
    return Bad("expected a string", text);
  }
  std::string out;
  for (size_t i = 1; i + 1 < text.size(); ++i) {
    char c = text[i];
    if (c == '\\' && i + 2 < text.size()) {
      c = text[++i];
      switch (c) {
        case 'n':
          out.push_back('\n');
          break;
        case 't':
          out.push_back('\t');
          break;
        case 'r':
          out.push_back('\r');
          break;
        default:
          out.push_back(c);
      }
    } else {
      out.push_back(c);
    }
  }
  return out;
}

// The tag and the form after it ("#inst \"x\"" -> "inst", "\"x\"").
bool SplitTag(std::string_view text, std::string_view* tag,
              std::string_view* rest) {
  if (text.size() < 2 || text[0] != '#') return false;
  size_t i = 1;
  while (i < text.size() && text[i] != ' ' && text[i] != '"' &&
         text[i] != '\t' && text[i] != '\n') {
    ++i;
  }
  *tag = text.substr(1, i - 1);
  *rest = TrimEdn(text.substr(i));
  return true;
}

}  // namespace

absl::StatusOr<int64_t> ParseInstant(std::string_view s) {
  int year, month, day, hour = 0, minute = 0, second = 0;
  if (!Digits(s, 0, 4, &year) || s.size() < 10 || s[4] != '-' ||
      !Digits(s, 5, 2, &month) || s[7] != '-' || !Digits(s, 8, 2, &day) ||
      month < 1 || month > 12 || day < 1 || day > 31) {
    return Bad("not an instant (want 2025-01-02T03:04:05Z)", s);
  }
  size_t i = 10;
  int64_t micros = 0;
  int64_t offset_seconds = 0;
  if (i < s.size() && (s[i] == 'T' || s[i] == 't' || s[i] == ' ')) {
    if (!Digits(s, i + 1, 2, &hour) || i + 3 >= s.size() || s[i + 3] != ':' ||
        !Digits(s, i + 4, 2, &minute)) {
      return Bad("not an instant (want 2025-01-02T03:04:05Z)", s);
    }
    i += 6;
    if (i < s.size() && s[i] == ':') {
      if (!Digits(s, i + 1, 2, &second)) return Bad("bad seconds", s);
      i += 3;
      if (i < s.size() && s[i] == '.') {
        ++i;
        int64_t scale = 100000;
        while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
          micros += (s[i] - '0') * scale;
          scale /= 10;
          ++i;
        }
      }
    }
    if (i < s.size() && (s[i] == 'Z' || s[i] == 'z')) {
      ++i;
    } else if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
      int oh, om;
      if (!Digits(s, i + 1, 2, &oh) || i + 3 >= s.size() || s[i + 3] != ':' ||
          !Digits(s, i + 4, 2, &om)) {
        return Bad("bad zone offset", s);
      }
      offset_seconds = (s[i] == '+' ? 1 : -1) * (oh * 3600 + om * 60);
      i += 6;
    }
  }
  if (i != s.size() || hour > 23 || minute > 59 || second > 60) {
    return Bad("not an instant (want 2025-01-02T03:04:05Z)", s);
  }
  const int64_t seconds = DaysFromCivil(year, month, day) * 86400 +
                          hour * 3600 + minute * 60 + second - offset_seconds;
  return seconds * 1000000 + micros;
}

absl::StatusOr<std::string> ParseUuid(std::string_view text) {
  if (text.size() != 36) return Bad("not a uuid", text);
  std::string out;
  int nibble = -1;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (c != '-') return Bad("not a uuid", text);
      continue;
    }
    int v;
    if (c >= '0' && c <= '9') {
      v = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      v = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      v = c - 'A' + 10;
    } else {
      return Bad("not a uuid", text);
    }
    if (nibble < 0) {
      nibble = v;
    } else {
      out.push_back(static_cast<char>(nibble << 4 | v));
      nibble = -1;
    }
  }
  return out;
}

std::string FormatUuid(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out.push_back('-');
    const unsigned char b = static_cast<unsigned char>(bytes[i]);
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 15]);
  }
  return out;
}

absl::StatusOr<v1::Value> ParseScalar(std::string_view raw) {
  const std::string_view text = TrimEdn(raw);
  v1::Value v;
  if (text.empty()) return Bad("expected a value", raw);
  if (text == "nil") {
    v.set_nil(true);
  } else if (text == "true" || text == "false") {
    v.set_boolean(text == "true");
  } else if (text.front() == '"') {
    absl::StatusOr<std::string> s = Unquote(text);
    if (!s.ok()) return s.status();
    v.set_string_value(*s);
  } else if (text.front() == ':' && text.size() > 1) {
    v.set_keyword(std::string(text.substr(1)));
  } else if (text.front() == '#') {
    std::string_view tag, rest;
    SplitTag(text, &tag, &rest);
    absl::StatusOr<std::string> s = Unquote(rest);
    if (!s.ok()) return s.status();
    if (tag == "inst") {
      absl::StatusOr<int64_t> micros = ParseInstant(*s);
      if (!micros.ok()) return micros.status();
      v.set_instant_micros(*micros);
    } else if (tag == "uuid") {
      absl::StatusOr<std::string> bytes = ParseUuid(*s);
      if (!bytes.ok()) return bytes.status();
      v.set_uuid(*bytes);
    } else {
      return Bad("unsupported tag", text);
    }
  } else {
    const std::string s(text);
    char* end = nullptr;
    errno = 0;
    const long long n = std::strtoll(s.c_str(), &end, 10);
    if (errno == 0 && end == s.c_str() + s.size()) {
      v.set_long_value(n);
    } else {
      errno = 0;
      const double d = std::strtod(s.c_str(), &end);
      if (errno != 0 || end != s.c_str() + s.size()) {
        return Bad("not a value the shell can read", text);
      }
      v.set_double_value(d);
    }
  }
  return v;
}

absl::StatusOr<v1::EntityRef> ParseEntity(std::string_view raw) {
  const std::string_view text = TrimEdn(raw);
  v1::EntityRef ref;
  if (!text.empty() && text.front() == '[' && text.back() == ']') {
    const std::string_view inner = text.substr(1, text.size() - 2);
    const EdnScan scan = ScanEdn(inner);
    if (scan.forms.size() != 2) {
      return Bad("a lookup ref is [:attribute value]", text);
    }
    const std::string_view attr = inner.substr(
        scan.forms[0].begin, scan.forms[0].end - scan.forms[0].begin);
    if (attr.size() < 2 || attr.front() != ':') {
      return Bad("a lookup ref starts with an attribute keyword", text);
    }
    absl::StatusOr<v1::Value> value = ParseScalar(inner.substr(
        scan.forms[1].begin, scan.forms[1].end - scan.forms[1].begin));
    if (!value.ok()) return value.status();
    ref.mutable_lookup()->set_attribute(std::string(attr.substr(1)));
    *ref.mutable_lookup()->mutable_value() = std::move(*value);
    return ref;
  }
  absl::StatusOr<v1::Value> value = ParseScalar(text);
  if (!value.ok()) return value.status();
  if (value->kind_case() == v1::Value::kLongValue) {
    ref.set_id(value->long_value());
  } else if (value->kind_case() == v1::Value::kKeyword) {
    ref.set_ident(value->keyword());
  } else {
    return Bad("an entity is an id, an :ident or a lookup ref", text);
  }
  return ref;
}

absl::StatusOr<TxPoint> ParseTxPoint(std::string_view raw) {
  const std::string_view text = TrimEdn(raw);
  TxPoint point;
  if (!text.empty() && text.front() != '#' && text.front() != '"') {
    absl::StatusOr<v1::Value> v = ParseScalar(text);
    if (v.ok() && v->kind_case() == v1::Value::kLongValue) {
      point.tx = v->long_value();
      return point;
    }
    // A bare date: 2025-01-02 or 2025-01-02T10:00:00Z.
    absl::StatusOr<int64_t> micros = ParseInstant(text);
    if (!micros.ok()) {
      return Bad("expected a tx id, a t, or an instant", text);
    }
    point.is_instant = true;
    point.instant_micros = *micros;
    return point;
  }
  std::string_view inner = text;
  std::string_view tag, rest;
  if (SplitTag(text, &tag, &rest)) {
    if (tag != "inst") return Bad("expected #inst", text);
    inner = rest;
  }
  absl::StatusOr<std::string> s = Unquote(inner);
  if (!s.ok()) return s.status();
  absl::StatusOr<int64_t> micros = ParseInstant(*s);
  if (!micros.ok()) return micros.status();
  point.is_instant = true;
  point.instant_micros = *micros;
  return point;
}

}  // namespace mentat::cli
