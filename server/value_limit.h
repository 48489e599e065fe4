#ifndef MENTAT_SERVER_VALUE_LIMIT_H_
#define MENTAT_SERVER_VALUE_LIMIT_H_

#include <cstddef>

#include "absl/status/status.h"
#include "mentat/storage/tx_op.h"

namespace mentat::server {

// The value-size limit (--max-value-bytes) applied to a transaction before
// it reaches the transactor. A value is stored once per index and sent
// whole in every log message (TxRange, Subscribe) and datom stream that
// holds it; the limit keeps every datom within one stream message, so no
// accepted transaction can leave a log that cannot be read.
//
// OK when every value of `request` (asserted, retracted, cas old and new,
// a lookup ref's value) and every tempid and ident has at most `max_bytes`
// bytes; else InvalidArgument naming the first one over, its size, the
// limit and the form ("line L, column C: ..." when the op has a position).
// Linear in the number of ops. Thread-safe.
[[nodiscard]] absl::Status CheckValueSizes(const storage::TxRequest& request,
                                           size_t max_bytes);

}  // namespace mentat::server

#endif  // MENTAT_SERVER_VALUE_LIMIT_H_
