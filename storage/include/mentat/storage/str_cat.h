#ifndef MENTAT_STORAGE_STR_CAT_H_
#define MENTAT_STORAGE_STR_CAT_H_

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include "absl/strings/string_view.h"

namespace mentat {

// Concatenates strings, string views and numbers into a message. Exists
// because Debian's abseil has its own string_view, so absl::StrCat does
// not take std::string_view; everything in mentat uses std::string_view.
namespace str_cat_internal {

inline void Append(std::string* out, std::string_view s) { out->append(s); }
inline void Append(std::string* out, const char* s) { out->append(s); }
inline void Append(std::string* out, absl::string_view s) {
  out->append(s.data(), s.size());
}
inline void Append(std::string* out, const std::string& s) { out->append(s); }
inline void Append(std::string* out, char c) { out->push_back(c); }
inline void Append(std::string* out, bool b) {
  out->append(b ? "true" : "false");
}

template <typename T>
requires(std::is_integral_v<T> && !std::is_same_v<T, bool> &&
         !std::is_same_v<T, char>) void Append(std::string* out, T v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, r.ptr);
}

template <typename T>
requires std::is_floating_point_v<T>
void Append(std::string* out, T v) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, r.ptr);
}

}  // namespace str_cat_internal

template <typename... Args>
std::string StrCat(const Args&... args) {
  std::string out;
  (str_cat_internal::Append(&out, args), ...);
  return out;
}

template <typename... Args>
void StrAppend(std::string* out, const Args&... args) {
  (str_cat_internal::Append(out, args), ...);
}

}  // namespace mentat

#endif  // MENTAT_STORAGE_STR_CAT_H_
