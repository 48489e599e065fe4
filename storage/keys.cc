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
  char buf[8];
  uint64_t x = static_cast<uint64_t>(id);
  for (int i = 7; i >= 0; --i) {
    buf[i] = static_cast<char>(x & 0xFF);
    x >>= 8;
  }
  out->append(buf, sizeof buf);
}

absl::Status ReadEntityId(std::string_view* in, EntityId* id) {
  if (in->size() < 8) {
    return absl::DataLossError(
        absl::StrCat("truncated entity id: ", in->size(), " of 8 bytes"));
  }
  uint64_t x = 0;
  for (int i = 0; i < 8; ++i) x = (x << 8) | static_cast<uint8_t>((*in)[i]);
  in->remove_prefix(8);
  *id = static_cast<EntityId>(x);
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
  std::string_view in = key;
  EntityId e = 0;
  EntityId a = 0;
  // Decoded straight into the caller's datom so its string buffer is reused
  // from one key to the next (cursors decode millions in a row).
  Value& v = d->v;
  absl::Status s;
  auto read_id = [&](EntityId* id) {
    if (s.ok()) s = ReadEntityId(&in, id);
  };
  auto read_value = [&] {
    if (!s.ok()) return;
    s = DecodeValue(&in, &v);
    if (!s.ok() && !absl::IsDataLoss(s)) {
      s = absl::DataLossError(s.message());
    }
  };
  switch (order) {
    case IndexOrder::kEavt:
      read_id(&e);
      read_id(&a);
      read_value();
      break;
    case IndexOrder::kAevt:
      read_id(&a);
      read_id(&e);
      read_value();
      break;
    case IndexOrder::kAvet:
      read_id(&a);
      read_value();
      read_id(&e);
      break;
    case IndexOrder::kVaet: {
      EntityId ref = 0;
      read_id(&ref);
      read_id(&a);
      read_id(&e);
      v = Value::Ref(ref);
      break;
    }
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("unknown index order ", static_cast<int>(order)));
  }
  if (!s.ok()) return BadKey(order, s.message());
  if (!in.empty()) {
    return BadKey(order, absl::StrCat(in.size(), " trailing bytes after ",
                                      key.size() - in.size(), " bytes"));
  }
  d->e = e;
  d->a = a;
  return absl::OkStatus();
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
