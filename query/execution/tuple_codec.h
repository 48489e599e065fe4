#ifndef MENTAT_QUERY_EXECUTION_TUPLE_CODEC_H_
#define MENTAT_QUERY_EXECUTION_TUPLE_CODEC_H_

// Tuples inside the executor. Storage values have no tuple type, so a
// tuple (from `tuple`, `get-some`, or a vector given to `ground`) travels
// as Value::Bytes holding its elements' encodings back to back; the plan
// marks the slots that hold one (SlotInfo::tuple), which is what tells it
// from a bytes value.

#include <vector>

#include "absl/status/statusor.h"
#include "mentat/edn/edn_value.h"
#include "mentat/storage/value.h"

namespace mentat::query::execution {

storage::Value EncodeTuple(const storage::Value* elements, size_t n);
[[nodiscard]] absl::StatusOr<std::vector<storage::Value>> DecodeTuple(
    const storage::Value& tuple);
// The tuple as an EDN vector (elements through ValueToEdn).
edn::EdnValue TupleToEdn(const storage::Value& tuple);

}  // namespace mentat::query::execution

#endif  // MENTAT_QUERY_EXECUTION_TUPLE_CODEC_H_
