#include "mentat/edn/edn_uuid.h"

#include <cassert>

#include "absl/status/status.h"

namespace mentat::edn {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool IsHyphenPosition(size_t i) {
  return i == 8 || i == 13 || i == 18 || i == 23;
}

}  // namespace

[[nodiscard]] absl::StatusOr<std::string> ParseUuid(std::string_view text) {
  if (text.size() != 36) {
    return absl::InvalidArgumentError(
        "expected 36 characters: 8-4-4-4-12 hexadecimal digits");
  }
  std::string bytes;
  bytes.resize(16);
  size_t out = 0;
  for (size_t i = 0; i < 36;) {
    if (IsHyphenPosition(i)) {
      if (text[i] != '-') {
        return absl::InvalidArgumentError(
            "expected 8-4-4-4-12 hexadecimal digits separated by '-'");
      }
      ++i;
      continue;
    }
    const int hi = HexValue(text[i]);
    const int lo = HexValue(text[i + 1]);
    if (hi < 0 || lo < 0 || IsHyphenPosition(i + 1)) {
      return absl::InvalidArgumentError(
          "expected 8-4-4-4-12 hexadecimal digits separated by '-'");
    }
    bytes[out++] = static_cast<char>(hi << 4 | lo);
    i += 2;
  }
  return bytes;
}

std::string FormatUuid(std::string_view bytes) {
  assert(bytes.size() == 16);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string text;
  text.reserve(36);
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) text.push_back('-');
    const auto b = static_cast<unsigned char>(bytes[i]);
    text.push_back(kHex[b >> 4]);
    text.push_back(kHex[b & 0xF]);
  }
  return text;
}

}  // namespace mentat::edn
