#ifndef MENTAT_SERVER_WIRE_NESTING_H_
#define MENTAT_SERVER_WIRE_NESTING_H_

// How deep a result nests once it is a mentat.v1.Value, against what
// clients can parse. Protobuf's parsers (C++, Python, Java, Go's default)
// refuse a message whose sub-messages nest deeper than 100 levels, and the
// generated gRPC stubs give no way to raise that; a pull map costs three
// levels (Value, ValueMap, MapEntry) and a vector two more (Value,
// ValueList), so a pull of a 20-level chain through a many-valued
// attribute is over it. The server refuses such a result with a clear
// error instead of sending what no client can read.

#include <string_view>

#include "absl/status/status.h"
#include "mentat/query/edn/edn_value.h"

namespace mentat::server {

// Protobuf's default recursion limit: sub-messages nested below the
// top-level message.
inline constexpr int kMaxWireNesting = 100;

// OK if `v`, sent `enclosing` messages below the response message (0 for
// PullResponse.result and PullManyResponse.results, 1 for a value in a
// QueryResponse's Row), stays within kMaxWireNesting. ResourceExhausted
// otherwise, naming `what` ("the pull result"), how deep it nests and the
// limit, and saying what to do. Stops walking at the limit.
[[nodiscard]] absl::Status CheckWireNesting(const edn::EdnValue& v,
                                            int enclosing,
                                            std::string_view what);

}  // namespace mentat::server

#endif  // MENTAT_SERVER_WIRE_NESTING_H_
