#ifndef MENTAT_EDN_UTF8_H_
#define MENTAT_EDN_UTF8_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace mentat::edn {

// Decodes the UTF-8 sequence starting at `p` (p < end). Returns its length
// (1-4) and stores the code point in *code_point, or returns 0 if the bytes
// are not well-formed UTF-8: a bad lead or continuation byte, an overlong
// form, a surrogate (U+D800-U+DFFF), a code point beyond U+10FFFF, or a
// sequence cut off by `end`.
int DecodeUtf8(const char* p, const char* end, uint32_t* code_point);

// True if all of `s` is well-formed UTF-8.
bool IsValidUtf8(std::string_view s);

// Appends the UTF-8 encoding of `code_point` (at most U+10FFFF) to *out.
void AppendUtf8(uint32_t code_point, std::string* out);

}  // namespace mentat::edn

#endif  // MENTAT_EDN_UTF8_H_
