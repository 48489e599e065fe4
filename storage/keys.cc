#include "mentat/storage/keys.h"

#include "absl/strings/str_cat.h"
#include "internal/coding.h"
#include "mentat/storage/value_codec.h"

namespace mentat::storage {
namespace {

absl::Status BadKey(IndexOrder order, absl::string_view why) {
  std::string_view name = IndexOrderName(order);
  return absl::DataLossError(
      absl::StrCat("malformed ", absl::string_view(name.data(), name.size()),
                   " key: ", why));
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
  // Ids are read at fixed offsets and the value straight into the caller's
  // datom, so that its string buffer is reused from one key to the next
  // (cursors and joins decode millions in a row).
  auto id_at = [&](size_t offset) {
    return static_cast<EntityId>(
        internal::DecodeFixed64BE(key.substr(offset, 8)));
  };
  auto truncated = [&](size_t need) {
    return BadKey(order, absl::StrCat("truncated: ", key.size(), " bytes, ",
                                      "at least ", need, " needed"));
  };
  // Decodes the value at `offset`, which must leave exactly `after` bytes.
  auto value_at = [&](size_t offset, size_t after) {
    std::string_view in = key.substr(offset);
    absl::Status s = DecodeValue(&in, &d->v);
    if (!s.ok()) return BadKey(order, s.message());
    if (in.size() != after) {
      return BadKey(order, absl::StrCat(in.size(), " bytes after the value at ",
                                        offset, ", expected ", after));
    }
    return absl::OkStatus();
  };
  switch (order) {
    case IndexOrder::kEavt:
    case IndexOrder::kAevt: {
      if (key.size() < 17) return truncated(17);
      const EntityId first = id_at(0);
      const EntityId second = id_at(8);
      if (absl::Status s = value_at(16, 0); !s.ok()) return s;
      d->e = order == IndexOrder::kEavt ? first : second;
      d->a = order == IndexOrder::kEavt ? second : first;
      return absl::OkStatus();
    }
    case IndexOrder::kAvet: {
      if (key.size() < 17) return truncated(17);
      if (absl::Status s = value_at(8, 8); !s.ok()) return s;
      d->a = id_at(0);
      d->e = id_at(key.size() - 8);
      return absl::OkStatus();
    }
    case IndexOrder::kVaet:
      if (key.size() != 24) {
        return BadKey(order, absl::StrCat(key.size(), " bytes, expected 24"));
      }
      d->v = Value::Ref(id_at(0));
      d->a = id_at(8);
      d->e = id_at(16);
      return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown index order ", static_cast<int>(order)));
}

absl::Status DecodeKeyIds(IndexOrder order, std::string_view key, Datom* d) {
  // Two ids and at least a value's type tag.
  if (order == IndexOrder::kVaet || key.size() < 17) {
    return DecodeKey(order, key, d);
  }
  auto id_at = [&](size_t offset) {
    return static_cast<EntityId>(
        internal::DecodeFixed64BE(key.substr(offset, 8)));
  };
  const EntityId first = id_at(0);
  // AVET's entity follows the value, at the end.
  const EntityId second =
      id_at(order == IndexOrder::kAvet ? key.size() - 8 : 8);
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
