#include "execution/tuple_codec.h"

#include <string>
#include <string_view>

#include "mentat/query/pull.h"
#include "mentat/storage/value_codec.h"

namespace mentat::query::execution {

storage::Value EncodeTuple(const storage::Value* elements, size_t n) {
  std::string bytes;
  for (size_t i = 0; i < n; ++i) {
    // A ref element is stored as the long it equals, so that tuples made
    // from refs and from integers compare equal.
    if (elements[i].type() == storage::ValueType::kRef) {
      storage::EncodeValue(storage::Value::Long(elements[i].as_long()), &bytes);
    } else {
      storage::EncodeValue(elements[i], &bytes);
    }
  }
  return storage::Value::Bytes(bytes);
}

absl::StatusOr<std::vector<storage::Value>> DecodeTuple(
    const storage::Value& tuple) {
  std::vector<storage::Value> out;
  std::string_view in = tuple.text();
  while (!in.empty()) {
    storage::Value v;
    absl::Status s = storage::DecodeValue(&in, &v);
    if (!s.ok()) return s;
    out.push_back(std::move(v));
  }
  return out;
}

edn::EdnValue TupleToEdn(const storage::Value& tuple) {
  absl::StatusOr<std::vector<storage::Value>> elements = DecodeTuple(tuple);
  std::vector<edn::EdnValue> items;
  if (elements.ok()) {
    for (const storage::Value& v : *elements) items.push_back(ValueToEdn(v));
  }
  return edn::EdnValue::Vector(std::move(items));
}

}  // namespace mentat::query::execution
