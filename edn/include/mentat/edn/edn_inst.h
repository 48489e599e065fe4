#ifndef MENTAT_EDN_EDN_INST_H_
#define MENTAT_EDN_EDN_INST_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace mentat::edn {

// The text of an EDN #inst literal: an RFC 3339 timestamp, parsed to
// microseconds since the Unix epoch, UTC.
//
// Accepted: "YYYY[-MM[-DD[THH[:MM[:SS[.fraction]]]]]][offset]" where the
// offset is "Z" or "+HH:MM"/"-HH:MM" (default Z), 't'/'z' may be lower case
// and a space may replace 'T'. Missing parts default to the start of the
// period. The year has exactly four digits, or a sign and four or more
// ("-0044", "+12345"). Fractions may have any number of digits; digits past
// microseconds are truncated. Fields are range-checked (month 1-12, day
// within its month, leap years included, hour 0-23, minute 0-59, second
// 0-59: leap seconds are rejected).
//
// Returns InvalidArgument with a message naming the problem (the message
// does not repeat the text), also for instants outside the int64 range.
[[nodiscard]] absl::StatusOr<int64_t> ParseInstant(std::string_view text);

// Formats microseconds since the epoch as RFC 3339 in UTC:
// "2025-03-04T10:22:00Z", with ".mmm" when the instant has milliseconds
// and ".uuuuuu" when it has microseconds. Years outside 0..9999 are written
// with a sign. ParseInstant(FormatInstant(x)) == x for every int64 x.
std::string FormatInstant(int64_t micros);

}  // namespace mentat::edn

#endif  // MENTAT_EDN_EDN_INST_H_
