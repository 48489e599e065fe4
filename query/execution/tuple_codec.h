#ifndef MENTAT_QUERY_EXECUTION_TUPLE_CODEC_H_
#define MENTAT_QUERY_EXECUTION_TUPLE_CODEC_H_

// Tuples inside the executor: a tuple (from `tuple`, `get-some`, a vector
// given to `ground` or as an input, or a :db.type/tuple attribute) is a
// storage kTuple value (value_codec.h), so tuples built in a query and
// stored ones are the same values.

#include <vector>

#include "absl/status/statusor.h"
#include "mentat/edn/edn_value.h"
#include "mentat/storage/value.h"

namespace mentat::query::execution {

storage::Value EncodeTuple(const storage::Value* elements, size_t n);
// The elements of a kTuple value. A tuple with a nil element (a stored
// one: a composite tuple with a member missing) sets *has_nil and leaves
// the nil out: a variable cannot be bound to nil.
[[nodiscard]] absl::Status DecodeTuple(const storage::Value& tuple,
                                       std::vector<storage::Value>* out,
                                       bool* has_nil);
// The tuple as an EDN vector (elements through ValueToEdn).
edn::EdnValue TupleToEdn(const storage::Value& tuple);

}  // namespace mentat::query::execution

#endif  // MENTAT_QUERY_EXECUTION_TUPLE_CODEC_H_
