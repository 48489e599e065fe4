#include "mentat/storage/entity_resolution.h"

#include "mentat/base/str_cat.h"

namespace mentat::storage {

std::string_view IdentName(std::string_view ident) {
  if (ident.starts_with(":")) ident.remove_prefix(1);
  return ident;
}

absl::StatusOr<EntityId> EntityOfId(int64_t id, std::string_view where) {
  if (id < 0) {
    return absl::InvalidArgumentError(
        StrCat(where, ": entity id ", id, " is negative"));
  }
  return id;
}

absl::StatusOr<EntityId> EntityOfIdent(const Schema& schema,
                                       std::string_view ident,
                                       std::string_view where) {
  ident = IdentName(ident);
  std::optional<EntityId> e = schema.EntityForIdent(ident);
  if (!e) {
    return absl::NotFoundError(
        StrCat(where, ": no entity has the ident :", ident));
  }
  return *e;
}

absl::StatusOr<const Attribute*> LookupRefAttribute(const Schema& schema,
                                                    std::string_view ident,
                                                    std::string_view where) {
  ident = IdentName(ident);
  const Attribute* attr = schema.FindAttribute(ident);
  if (attr == nullptr) {
    return absl::InvalidArgumentError(
        StrCat(where, ": lookup ref on unknown attribute :", ident));
  }
  if (attr->unique == Unique::kNone) {
    return absl::InvalidArgumentError(
        StrCat(where, ": lookup ref on :", ident, ", which is not :db/unique"));
  }
  return attr;
}

absl::StatusOr<EntityId> EntityOfLookupRef(const DbView& view,
                                           const Attribute& attribute,
                                           const Value& value,
                                           std::string_view where) {
  absl::StatusOr<std::optional<EntityId>> e =
      view.LookupUnique(attribute.id, value);
  if (!e.ok()) return e.status();
  if (!e->has_value()) {
    return absl::NotFoundError(StrCat(
        where, ": no entity has :", attribute.ident, " ", value.DebugString()));
  }
  return **e;
}

absl::StatusOr<const Attribute*> AttributeOfIdent(const Schema& schema,
                                                  std::string_view ident,
                                                  std::string_view where) {
  ident = IdentName(ident);
  const Attribute* attr = schema.FindAttribute(ident);
  if (attr == nullptr) {
    return absl::InvalidArgumentError(
        StrCat(where, ": unknown attribute :", ident));
  }
  return attr;
}

absl::StatusOr<const Attribute*> AttributeOfId(const Schema& schema,
                                               EntityId id,
                                               std::string_view where) {
  const Attribute* attr = schema.FindAttribute(id);
  if (attr == nullptr) {
    return absl::InvalidArgumentError(
        StrCat(where, ": entity ", id, " is not an attribute"));
  }
  return attr;
}

}  // namespace mentat::storage
