#ifndef MENTAT_BASE_STR_CAT_H_
#define MENTAT_BASE_STR_CAT_H_

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include "absl/strings/string_view.h"

namespace mentat {

// StrCat and StrAppend: the one way mentat builds a message from strings,
// string views, characters, bools and numbers. Exists because Debian's
// abseil has its own string_view, so absl::StrCat does not take
// std::string_view, and everything in mentat uses std::string_view. In
// base (the bottom module) so that every module, edn included, shares it.
//
// Numbers print as std::to_chars prints them: integers in decimal,
// floating point in the shortest form that reads back to the same value.
// A bool prints "true" or "false", a char as itself (not its code).
// Header-only and thread-safe (no state).
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

// The pieces, in order, as one string.
template <typename... Args>
std::string StrCat(const Args&... args) {
  std::string out;
  (str_cat_internal::Append(&out, args), ...);
  return out;
}

// Appends the pieces, in order, to `*out`.
template <typename... Args>
void StrAppend([[maybe_unused]] std::string* out, const Args&... args) {
  (str_cat_internal::Append(out, args), ...);
}

}  // namespace mentat

#endif  // MENTAT_BASE_STR_CAT_H_
