#ifndef MENTAT_CLIENT_SHELL_WIRE_CELL_H_
#define MENTAT_CLIENT_SHELL_WIRE_CELL_H_

#include "mentat/v1/mentat.pb.h"
#include "shell/cell.h"

namespace mentat::cli {

// The wire's typed value as a printable cell. Characters print as
// one-character strings and tagged literals as their inner value's text
// behind the tag (kept as a symbol, so EDN output round-trips).
Cell ToCell(const v1::Value& value);

}  // namespace mentat::cli

#endif  // MENTAT_CLIENT_SHELL_WIRE_CELL_H_
