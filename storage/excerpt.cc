#include "mentat/storage/excerpt.h"

#include "mentat/storage/str_cat.h"

namespace mentat {

std::string_view ExcerptPrefix(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  size_t cut = max_bytes;
  // Back up over continuation bytes (10xxxxxx) so that no character is cut
  // in half.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) {
    --cut;
  }
  return text.substr(0, cut);
}

std::string ExcerptMarker(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string();
  return StrCat("\u2026(", text.size(), " bytes)");
}

std::string Excerpt(std::string_view text, size_t max_bytes) {
  std::string out(ExcerptPrefix(text, max_bytes));
  out += ExcerptMarker(text, max_bytes);
  return out;
}

}  // namespace mentat
