// Cat: the edn module's string concatenation for error messages (private to
// edn/). absl::StrCat does not take std::string_view in Debian's Abseil
// build, and edn sits below storage, whose StrCat it cannot use.
#ifndef MENTAT_EDN_CAT_H_
#define MENTAT_EDN_CAT_H_

#include <string>
#include <string_view>
#include <type_traits>

namespace mentat::edn {

inline void AppendPiece(std::string* s, std::string_view piece) {
  s->append(piece);
}
template <typename T, typename = std::enable_if_t<std::is_integral_v<T> &&
                                                  !std::is_same_v<T, char> &&
                                                  !std::is_same_v<T, bool>>>
inline void AppendPiece(std::string* s, T n) {
  s->append(std::to_string(n));
}

// Concatenates strings, string views and integers.
template <typename... Pieces>
std::string Cat(const Pieces&... pieces) {
  std::string s;
  (AppendPiece(&s, pieces), ...);
  return s;
}

}  // namespace mentat::edn

#endif  // MENTAT_EDN_CAT_H_
