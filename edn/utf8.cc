#include "mentat/edn/utf8.h"

namespace mentat::edn {

int DecodeUtf8(const char* p, const char* end, uint32_t* code_point) {
  const auto b0 = static_cast<unsigned char>(p[0]);
  if (b0 < 0x80) {
    *code_point = b0;
    return 1;
  }
  int len;
  uint32_t c;
  uint32_t min;
  if ((b0 & 0xE0) == 0xC0) {
    len = 2;
    c = b0 & 0x1F;
    min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3;
    c = b0 & 0x0F;
    min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4;
    c = b0 & 0x07;
    min = 0x10000;
  } else {
    return 0;
  }
  if (end - p < len) return 0;
  for (int i = 1; i < len; ++i) {
    const auto b = static_cast<unsigned char>(p[i]);
    if ((b & 0xC0) != 0x80) return 0;
    c = c << 6 | (b & 0x3F);
  }
  if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return 0;
  *code_point = c;
  return len;
}

bool IsValidUtf8(std::string_view s) {
  const char* p = s.data();
  const char* end = p + s.size();
  while (p < end) {
    if (static_cast<unsigned char>(*p) < 0x80) {
      ++p;
      continue;
    }
    uint32_t cp;
    const int len = DecodeUtf8(p, end, &cp);
    if (len == 0) return false;
    p += len;
  }
  return true;
}

void AppendUtf8(uint32_t code_point, std::string* out) {
  const uint32_t cp = code_point;
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | cp >> 6));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | cp >> 12));
    out->push_back(static_cast<char>(0x80 | (cp >> 6 & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | cp >> 18));
    out->push_back(static_cast<char>(0x80 | (cp >> 12 & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp >> 6 & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

}  // namespace mentat::edn
