#ifndef MENTAT_QUERY_PLANNER_EDN_TO_VALUE_H_
#define MENTAT_QUERY_PLANNER_EDN_TO_VALUE_H_

// Turning EDN constants and inputs into storage values: generically (an
// integer is a long), for an attribute's value type (an integer is a
// double for a double attribute, a ref for a ref attribute), and for
// entity positions (ids, idents, lookup refs).

#include <string>

#include "absl/status/statusor.h"
#include "mentat/edn/edn_value.h"
#include "mentat/storage/schema.h"
#include "mentat/storage/value.h"

namespace mentat::query::planner {

// A scalar as a value: integer -> long, float -> double, N -> bigint, M ->
// bigdec, string, keyword, boolean, #inst, #uuid. InvalidArgument for nil,
// collections, symbols and other tags.
[[nodiscard]] absl::StatusOr<storage::Value> EdnToValue(const edn::EdnValue& v);

// What an entity position holds.
struct EntityConst {
  enum class Kind : uint8_t {
    kId,      // `id`
    kNone,    // an ident no entity has: matches nothing
    kLookup,  // a lookup ref, resolved against a db later
  };
  Kind kind = Kind::kId;
  storage::EntityId id = 0;
  storage::EntityId lookup_attr = 0;
  storage::Value lookup_value;
};

// An entity id (integer), an ident (keyword) or a lookup ref
// ([:unique/attr value], the attribute by ident or id). InvalidArgument
// for anything else, or a lookup ref on an attribute that is not unique.
[[nodiscard]] absl::StatusOr<EntityConst> EdnToEntity(
    const edn::EdnValue& v, const storage::Schema& schema);

// A value for attribute `attr` (its v position); refs go through
// EdnToEntity. InvalidArgument names the attribute when the type does not
// fit.
[[nodiscard]] absl::StatusOr<EntityConst> EdnToAttrValue(
    const edn::EdnValue& v, const storage::Attribute& attr,
    const storage::Schema& schema, storage::Value* out);

// `v` converted to `type` when it is a number of another kind that
// converts exactly (long -> double/bigint/bigdec, ref <-> long); false if
// it cannot be.
bool CoerceValue(storage::ValueType type, storage::Value* v);

// The EDN text of a value, short, for messages.
std::string EdnForMessage(const edn::EdnValue& v);

}  // namespace mentat::query::planner

#endif  // MENTAT_QUERY_PLANNER_EDN_TO_VALUE_H_
