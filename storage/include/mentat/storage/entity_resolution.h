#ifndef MENTAT_STORAGE_ENTITY_RESOLUTION_H_
#define MENTAT_STORAGE_ENTITY_RESOLUTION_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "mentat/storage/db.h"
#include "mentat/storage/schema.h"
#include "mentat/storage/value.h"

namespace mentat::storage {

// How a request names an entity: by id, by ident (`:person/alice`), or by
// a lookup ref `[unique-attribute value]` resolved at a DbView. Callers
// decode their own representation (a protobuf EntityRef, an EDN form) and
// call these; the value of a lookup ref is decoded once its attribute is
// known (LookupRefAttribute), because the attribute's type says how.
//
// `where` names the position in the request (e.g. "entity 3") and begins
// every error message. Idents may carry their leading ':' or not. All of
// these only read immutable state: any thread.

// An entity id as given: InvalidArgument if negative.
[[nodiscard]] absl::StatusOr<EntityId> EntityOfId(int64_t id,
                                                  std::string_view where);

// The entity whose :db/ident is `ident`; NotFound if none.
[[nodiscard]] absl::StatusOr<EntityId> EntityOfIdent(const Schema& schema,
                                                     std::string_view ident,
                                                     std::string_view where);

// The attribute a lookup ref names: InvalidArgument if `ident` is no
// attribute or the attribute is not :db/unique.
[[nodiscard]] absl::StatusOr<const Attribute*> LookupRefAttribute(
    const Schema& schema, std::string_view ident, std::string_view where);

// The entity whose unique `attribute` holds `value` at `view` (an AVET
// point seek); NotFound if none. Storage errors pass through.
[[nodiscard]] absl::StatusOr<EntityId> EntityOfLookupRef(
    const DbView& view, const Attribute& attribute, const Value& value,
    std::string_view where);

// An attribute named by ident or by id: InvalidArgument if unknown.
[[nodiscard]] absl::StatusOr<const Attribute*> AttributeOfIdent(
    const Schema& schema, std::string_view ident, std::string_view where);
[[nodiscard]] absl::StatusOr<const Attribute*> AttributeOfId(
    const Schema& schema, EntityId id, std::string_view where);

// `ident` without its leading ':'.
std::string_view IdentName(std::string_view ident);

}  // namespace mentat::storage

#endif  // MENTAT_STORAGE_ENTITY_RESOLUTION_H_
