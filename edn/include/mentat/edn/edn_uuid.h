#ifndef MENTAT_EDN_EDN_UUID_H_
#define MENTAT_EDN_EDN_UUID_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace mentat::edn {

// Parses the text of a #uuid literal, "8-4-4-4-12" hexadecimal digits in
// either case ("f81d4fae-7dec-11d0-a765-00a0c91e6bf6"), into its 16 raw
// bytes. Returns InvalidArgument on any other shape.
[[nodiscard]] absl::StatusOr<std::string> ParseUuid(std::string_view text);

// Formats 16 raw bytes as the canonical lower-case 36-character text.
// `bytes` must hold exactly 16 bytes.
std::string FormatUuid(std::string_view bytes);

}  // namespace mentat::edn

#endif  // MENTAT_EDN_EDN_UUID_H_
