// ParseUri (value_codec.h): URI syntax is checked by uriparser, a
// maintained RFC 3986 parser from Debian (liburiparser-dev), not by a
// pattern of our own.

#include <uriparser/Uri.h>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "mentat/base/excerpt.h"
#include "mentat/storage/value_codec.h"

namespace mentat::storage {

absl::StatusOr<Value> ParseUri(std::string_view text) {
  const std::string_view shown = ExcerptPrefix(text);
  const std::string quoted = absl::StrCat(
      "\"", absl::CHexEscape(absl::string_view(shown.data(), shown.size())),
      "\"", ExcerptMarker(text));
  if (text.empty()) {
    return absl::InvalidArgumentError("invalid URI \"\": the URI is empty");
  }
  UriUriA uri;
  const char* error_pos = nullptr;
  const int rc = uriParseSingleUriExA(&uri, text.data(),
                                      text.data() + text.size(), &error_pos);
  if (rc != URI_SUCCESS) {
    const size_t offset =
        error_pos == nullptr ? 0 : static_cast<size_t>(error_pos - text.data());
    return absl::InvalidArgumentError(absl::StrCat(
        "invalid URI ", quoted, ": not RFC 3986 syntax at offset ", offset));
  }
  uriFreeUriMembersA(&uri);
  return Value::Uri(text);
}

}  // namespace mentat::storage
