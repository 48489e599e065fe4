#ifndef MENTAT_CLIENT_SHELL_WIRE_VALUE_H_
#define MENTAT_CLIENT_SHELL_WIRE_VALUE_H_

#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"
#include "mentat/edn/edn_value.h"
#include "mentat/v1/mentat.pb.h"

namespace mentat::cli {

// The few command arguments the shell reads itself, where an argument must
// become a typed request field rather than EDN text the server reads:
// entities for .pull, points for .as-of, .since, .log and .watch. The text
// is read with the shared EDN reader (mentat/edn), so the shell accepts and
// refuses exactly what the server would. Errors are InvalidArgument naming
// the argument; none of these functions keeps state.

// An EDN value as the wire's typed value. Vectors and lists become lists,
// characters char values, other tags tagged values.
v1::Value ToWireValue(const edn::EdnValue& value);

// An entity: an id (integer), an ident (:ns/name) or a lookup ref
// ([:ns/attr value]).
[[nodiscard]] absl::StatusOr<v1::EntityRef> ParseEntity(std::string_view text);

// A transaction point: an integer (tx id or t) sets `tx`; an instant sets
// `instant_micros`: #inst "...", a string, or a bare RFC 3339 date or
// timestamp (2025-01-02, 2025-01-02T10:00:00Z). An instant that names no
// real time (2025-02-31, hour 24, a leap second) is refused with the
// reason, never moved to a nearby date.
struct TxPoint {
  bool is_instant = false;
  int64_t tx = 0;
  int64_t instant_micros = 0;
};
[[nodiscard]] absl::StatusOr<TxPoint> ParseTxPoint(std::string_view text);

}  // namespace mentat::cli

#endif  // MENTAT_CLIENT_SHELL_WIRE_VALUE_H_
