#include "mentat/storage/keys.h"

#include "absl/strings/str_cat.h"
#include "internal/coding.h"
#include "mentat/storage/value_codec.h"

namespace mentat::storage {
namespace {

[[nodiscard]] absl::Status BadKey(IndexOrder order, absl::string_view why) {
  std::string_view name = IndexOrderName(order);
  return absl::DataLossError(
      absl::StrCat("malformed ", absl::string_view(name.data(), name.size()),
                   " key: ", why));
}

// The id at `offset` of a key at least offset + 8 bytes long.
EntityId IdAt(std::string_view key, size_t offset) {
  return static_cast<EntityId>(internal::DecodeFixed64BE(key.substr(offset)));
}

}  // namespace

std::string_view IndexOrderName(IndexOrder order) {
  switch (order) {
    case IndexOrder::kEavt:
      return "eavt";
    case IndexOrder::kAevt:
      return "aevt";
    case IndexOrder::kAvet:
      return "avet";
    case IndexOrder::kVaet:
      return "vaet";
  }
  return "unknown";
}

void AppendEntityId(EntityId id, std::string* out) {
  internal::PutFixed64BE(static_cast<uint64_t>(id), out);
}

absl::Status ReadEntityId(std::string_view* in, EntityId* id) {
  if (in->size() < 8) {
    return absl::DataLossError(
        absl::StrCat("truncated entity id: ", in->size(), " of 8 bytes"));
  }
  *id = static_cast<EntityId>(internal::DecodeFixed64BE(*in));
  in->remove_prefix(8);
  return absl::OkStatus();
}

void EavtKey::Encode(EntityId e, EntityId a, const Value& v, std::string* out) {
  AppendEntityId(e, out);
  AppendEntityId(a, out);
  EncodeValue(v, out);
}
void EavtKey::EncodePrefix(EntityId e, std::string* out) {
  AppendEntityId(e, out);
}
void EavtKey::EncodePrefix(EntityId e, EntityId a, std::string* out) {
  AppendEntityId(e, out);
  AppendEntityId(a, out);
}

void AevtKey::Encode(EntityId a, EntityId e, const Value& v, std::string* out) {
  AppendEntityId(a, out);
  AppendEntityId(e, out);
  EncodeValue(v, out);
}
void AevtKey::EncodePrefix(EntityId a, std::string* out) {
  AppendEntityId(a, out);
}
void AevtKey::EncodePrefix(EntityId a, EntityId e, std::string* out) {
  AppendEntityId(a, out);
  AppendEntityId(e, out);
}

void AvetKey::Encode(EntityId a, const Value& v, EntityId e, std::string* out) {
  AppendEntityId(a, out);
  EncodeValue(v, out);
  AppendEntityId(e, out);
}
void AvetKey::EncodePrefix(EntityId a, std::string* out) {
  AppendEntityId(a, out);
}
void AvetKey::EncodePrefix(EntityId a, const Value& v, std::string* out) {
  AppendEntityId(a, out);
  EncodeValue(v, out);
}

void VaetKey::Encode(EntityId v, EntityId a, EntityId e, std::string* out) {
  AppendEntityId(v, out);
  AppendEntityId(a, out);
  AppendEntityId(e, out);
}
void VaetKey::EncodePrefix(EntityId v, std::string* out) {
  AppendEntityId(v, out);
}
void VaetKey::EncodePrefix(EntityId v, EntityId a, std::string* out) {
  AppendEntityId(v, out);
  AppendEntityId(a, out);
}

void EncodeKey(IndexOrder order, const Datom& d, std::string* out) {
  switch (order) {
    case IndexOrder::kEavt:
      EavtKey::Encode(d.e, d.a, d.v, out);
      return;
    case IndexOrder::kAevt:
      AevtKey::Encode(d.a, d.e, d.v, out);
      return;
    case IndexOrder::kAvet:
      AvetKey::Encode(d.a, d.v, d.e, out);
      return;
    case IndexOrder::kVaet:
      // Only ref datoms belong in VAET; the caller checks the type.
      VaetKey::Encode(d.v.as_ref(), d.a, d.e, out);
      return;
  }
}

absl::Status DecodeKey(IndexOrder order, std::string_view key, Datom* d) {
  if (order == IndexOrder::kVaet) {
    if (key.size() != 24) {
      return BadKey(order, absl::StrCat(key.size(), " bytes, expected 24"));
    }
    d->v = Value::Ref(IdAt(key, 0));
    d->a = IdAt(key, 8);
    d->e = IdAt(key, 16);
    return absl::OkStatus();
  }
  if (order != IndexOrder::kEavt && order != IndexOrder::kAevt &&
      order != IndexOrder::kAvet) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown index order ", static_cast<int>(order)));
  }
  // Two ids and at least a value's type tag.
  if (key.size() < 17) {
    return BadKey(order, absl::StrCat("truncated: ", key.size(),
                                      " bytes, at least 17 needed"));
  }
  // The value straight into the caller's datom, so that its string buffer
  // is reused from one key to the next (cursors and joins decode millions
  // in a row); it must end where the key does, or where AVET's entity
  // starts.
  const size_t offset = order == IndexOrder::kAvet ? 8 : 16;
  const size_t after = order == IndexOrder::kAvet ? 8 : 0;
  std::string_view in = key.substr(offset);
  absl::Status s = DecodeValue(&in, &d->v);
  if (!s.ok()) return BadKey(order, s.message());
  if (in.size() != after) {
    return BadKey(order, absl::StrCat(in.size(), " bytes after the value at ",
                                      offset, ", expected ", after));
  }
  return DecodeKeyIds(order, key, d);
}

absl::Status DecodeKeyIds(IndexOrder order, std::string_view key, Datom* d) {
  // Two ids and at least a value's type tag.
  if (order == IndexOrder::kVaet || key.size() < 17) {
    return DecodeKey(order, key, d);
  }
  const EntityId first = IdAt(key, 0);
  // AVET's entity follows the value, at the end.
  const EntityId second =
      IdAt(key, order == IndexOrder::kAvet ? key.size() - 8 : 8);
  if (order == IndexOrder::kEavt) {
    d->e = first;
    d->a = second;
  } else {
    d->a = first;
    d->e = second;
  }
  return absl::OkStatus();
}

std::string PrefixSuccessor(std::string_view prefix) {
  std::string out(prefix);
  while (!out.empty()) {
    unsigned char last = static_cast<unsigned char>(out.back());
    if (last != 0xFF) {
      out.back() = static_cast<char>(last + 1);
      return out;
    }
    out.pop_back();
  }
  return out;
}

}  // namespace mentat::storage
