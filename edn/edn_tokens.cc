#include "mentat/edn/edn_tokens.h"

#include <charconv>
#include <cstdint>
#include <string>

#include "mentat/base/excerpt.h"
#include "mentat/edn/utf8.h"

namespace mentat::edn {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

[[nodiscard]] absl::Status BadNumber(std::string_view token,
                                     std::string_view why) {
  std::string message = "invalid number ";
  message.append(Excerpt(token)).append(": ").append(why);
  return absl::InvalidArgumentError(message);
}

// An integer literal without suffix: int64 if it fits, else a bigint.
EdnValue MakeInteger(std::string_view digits, bool negative) {
  uint64_t magnitude = 0;
  bool overflow = false;
  if (digits.size() <= 18) {  // below 10^18: cannot overflow
    for (char c : digits) magnitude = magnitude * 10 + (c - '0');
  } else {
    for (char c : digits) {
      overflow = overflow ||
                 __builtin_mul_overflow(magnitude, 10, &magnitude) ||
                 __builtin_add_overflow(
                     magnitude, static_cast<uint64_t>(c - '0'), &magnitude);
    }
    const uint64_t limit =
        negative ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
    overflow = overflow || magnitude > limit;
  }
  if (overflow) {
    // Too big for int64: promoted to a bigint, as Clojure does.
    std::string text;
    if (negative) text.push_back('-');
    text.append(digits);
    return EdnValue::BigInt(std::move(text));
  }
  return EdnValue::Int(negative ? static_cast<int64_t>(0 - magnitude)
                                : static_cast<int64_t>(magnitude));
}

// Checks one side of the '/' of a symbol or keyword; returns why not, or
// nullptr.
const char* BadPart(std::string_view part) {
  if (part.empty()) return "empty namespace or name around '/'";
  const char c0 = part[0];
  if (IsDigit(c0)) return "a name cannot start with a digit";
  if (c0 == ':') return "a name cannot start with ':'";
  if (c0 == '#') return "a name cannot start with '#'";
  if ((c0 == '+' || c0 == '-' || c0 == '.') && part.size() > 1 &&
      IsDigit(part[1])) {
    return "a name starting with '+', '-' or '.' cannot continue with a digit";
  }
  return nullptr;
}

// Why `text` is not a valid name, or nullptr.
const char* BadName(std::string_view text) {
  size_t slash = std::string_view::npos;
  bool non_ascii = false;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '/') {
      if (slash != std::string_view::npos) return "more than one '/'";
      slash = i;
    } else if (static_cast<unsigned char>(text[i]) >= 0x80) {
      non_ascii = true;
    }
  }
  const char* why = slash == std::string_view::npos
                        ? BadPart(text)
                        : BadPart(text.substr(0, slash));
  if (why == nullptr && slash != std::string_view::npos) {
    why = BadPart(text.substr(slash + 1));
  }
  if (why == nullptr && non_ascii && !IsValidUtf8(text)) {
    why = "invalid UTF-8";
  }
  return why;
}

[[nodiscard]] absl::Status BadNameError(std::string_view kind,
                                        std::string_view text,
                                        std::string_view why) {
  std::string message = "invalid ";
  message.append(kind).append(Excerpt(text)).append(": ").append(why);
  return absl::InvalidArgumentError(message);
}

}  // namespace

bool IsEdnNumberToken(std::string_view token) {
  if (token.empty()) return false;
  const char c0 = token[0];
  return IsDigit(c0) ||
         ((c0 == '+' || c0 == '-') && token.size() > 1 && IsDigit(token[1]));
}

[[nodiscard]] absl::Status ParseEdnNumber(std::string_view token,
                                          EdnValue* out) {
  if (!IsEdnNumberToken(token)) return BadNumber(token, "not a number");
  const size_t n = token.size();
  size_t i = 0;
  bool negative = false;
  if (token[0] == '+' || token[0] == '-') {
    negative = token[0] == '-';
    i = 1;
  }
  const size_t int_begin = i;
  while (i < n && IsDigit(token[i])) ++i;
  const std::string_view digits = token.substr(int_begin, i - int_begin);
  if (digits[0] == '0' && digits.size() > 1) {
    return BadNumber(token, "leading zeros are not allowed");
  }
  if (i == n) {
    *out = MakeInteger(digits, negative);
    return absl::OkStatus();
  }
  if (token[i] == 'N' && i + 1 == n) {
    std::string text;
    if (negative && digits != "0") text.push_back('-');
    text.append(digits);
    *out = EdnValue::BigInt(std::move(text));
    return absl::OkStatus();
  }
  bool is_float = false;
  if (token[i] == '.') {
    ++i;
    while (i < n && IsDigit(token[i])) ++i;
    is_float = true;
  }
  if (i < n && (token[i] == 'e' || token[i] == 'E')) {
    ++i;
    if (i < n && (token[i] == '+' || token[i] == '-')) ++i;
    const size_t exp_begin = i;
    while (i < n && IsDigit(token[i])) ++i;
    if (i == exp_begin) return BadNumber(token, "the exponent needs digits");
    is_float = true;
  }
  // '+' is dropped from the text of big literals and before from_chars.
  const size_t first = token[0] == '+' ? 1 : 0;
  if (i + 1 == n && token[i] == 'M') {
    *out = EdnValue::BigDec(std::string(token.substr(first, i - first)));
    return absl::OkStatus();
  }
  if (i != n || !is_float) {
    return BadNumber(token, i < n && token[i] == '/'
                                ? "ratios are not supported"
                                : "unexpected characters");
  }
  double d = 0;
  const auto [ptr, ec] =
      std::from_chars(token.data() + first, token.data() + n, d);
  if (ec == std::errc::result_out_of_range) {
    return BadNumber(token, "out of the range of a double");
  }
  if (ec != std::errc() || ptr != token.data() + n) {
    return BadNumber(token, "not a float");
  }
  *out = EdnValue::Float(d);
  return absl::OkStatus();
}

[[nodiscard]] absl::Status CheckEdnSymbolName(std::string_view text) {
  if (text == "/") return absl::OkStatus();
  const char* why = BadName(text);
  if (why != nullptr) return BadNameError("symbol ", text, why);
  return absl::OkStatus();
}

[[nodiscard]] absl::Status CheckEdnKeywordName(std::string_view text) {
  if (text.empty()) {
    return absl::InvalidArgumentError("a keyword needs a name after ':'");
  }
  if (text[0] == ':') {
    return absl::InvalidArgumentError("keywords cannot start with '::'");
  }
  const char* why = BadName(text);
  if (why != nullptr) return BadNameError("keyword :", text, why);
  return absl::OkStatus();
}

}  // namespace mentat::edn
