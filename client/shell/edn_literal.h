#ifndef MENTAT_CLIENT_SHELL_EDN_LITERAL_H_
#define MENTAT_CLIENT_SHELL_EDN_LITERAL_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "mentat/v1/mentat.pb.h"

namespace mentat::cli {

// The few EDN literals the shell reads itself, where a command argument
// must become a typed request field rather than EDN text the server reads:
// entities for .pull, points for .as-of/.since, lookup ref values.

// A scalar: nil, true, false, an integer, a float, a string, a keyword,
// #inst "...", #uuid "...". Errors: InvalidArgument naming the text.
absl::StatusOr<v1::Value> ParseScalar(std::string_view text);

// An entity: an id (integer), an ident (:ns/name) or a lookup ref
// ([:ns/attr value]).
absl::StatusOr<v1::EntityRef> ParseEntity(std::string_view text);

// A transaction point: an integer (tx id or t) sets `tx`; an instant
// (#inst "..." or a bare RFC 3339 string) sets `instant_micros`.
struct TxPoint {
  bool is_instant = false;
  int64_t tx = 0;
  int64_t instant_micros = 0;
};
absl::StatusOr<TxPoint> ParseTxPoint(std::string_view text);

// RFC 3339: "2025-01-02", "2025-01-02T03:04", "2025-01-02T03:04:05.678Z",
// "...+02:00". Missing parts are zero; no zone means UTC.
absl::StatusOr<int64_t> ParseInstant(std::string_view text);

// 36-character canonical form to 16 bytes.
absl::StatusOr<std::string> ParseUuid(std::string_view text);
// 16 bytes to the canonical form.
std::string FormatUuid(std::string_view bytes);

}  // namespace mentat::cli

#endif  // MENTAT_CLIENT_SHELL_EDN_LITERAL_H_
