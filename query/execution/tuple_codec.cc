#include "execution/tuple_codec.h"

#include <optional>
#include <string>
#include <string_view>

#include "mentat/query/pull.h"
#include "mentat/storage/value_codec.h"

namespace mentat::query::execution {

storage::Value EncodeTuple(const storage::Value* elements, size_t n) {
  std::string bytes;
  // Refs go in as the longs they equal (AppendTupleElement).
  for (size_t i = 0; i < n; ++i)
    storage::AppendTupleElement(elements[i], &bytes);
  return storage::Value::Tuple(bytes);
}

absl::Status DecodeTuple(const storage::Value& tuple,
                         std::vector<storage::Value>* out, bool* has_nil) {
  out->clear();
  *has_nil = false;
  std::vector<std::optional<storage::Value>> elements;
  absl::Status s = storage::DecodeTupleElements(tuple.text(), &elements);
  if (!s.ok()) return s;
  for (std::optional<storage::Value>& e : elements) {
    if (!e.has_value()) {
      *has_nil = true;
      continue;
    }
    out->push_back(*std::move(e));
  }
  return absl::OkStatus();
}

edn::EdnValue TupleToEdn(const storage::Value& tuple) {
  return ValueToEdn(tuple);
}

}  // namespace mentat::query::execution
