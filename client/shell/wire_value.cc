#include "shell/wire_value.h"

#include <string>
#include <utility>

#include "mentat/edn/edn_inst.h"
#include "mentat/edn/edn_reader.h"
#include "shell/command.h"

namespace mentat::cli {
namespace {

[[nodiscard]] absl::Status Bad(std::string_view what, std::string_view text) {
  return absl::InvalidArgumentError(std::string(what) + ": " +
                                    std::string(text));
}

void AddItems(const edn::EdnValue& value, v1::ValueList* list) {
  for (const edn::EdnValue& item : value.items()) {
    *list->add_values() = ToWireValue(item);
  }
}

// Text that is meant as a date rather than a number: four digits then '-'
// (2025-02-31), or a signed year (+12025-01-01).
bool LooksLikeDate(std::string_view text) {
  size_t digits = 0;
  size_t i = !text.empty() && (text[0] == '+' || text[0] == '-') ? 1 : 0;
  while (i + digits < text.size() && text[i + digits] >= '0' &&
         text[i + digits] <= '9') {
    ++digits;
  }
  return digits >= 4 && i + digits < text.size() && text[i + digits] == '-';
}

[[nodiscard]] absl::StatusOr<TxPoint> InstantPoint(std::string_view text) {
  absl::StatusOr<int64_t> micros = edn::ParseInstant(text);
  if (!micros.ok()) {
    return absl::InvalidArgumentError(
        "invalid instant \"" + std::string(text) +
        "\": " + std::string(micros.status().message()));
  }
  TxPoint point;
  point.is_instant = true;
  point.instant_micros = *micros;
  return point;
}

}  // namespace

v1::Value ToWireValue(const edn::EdnValue& value) {
  using edn::EdnKind;
  v1::Value v;
  switch (value.kind()) {
    case EdnKind::kNil:
      v.set_nil(true);
      break;
    case EdnKind::kBool:
      v.set_boolean(value.as_bool());
      break;
    case EdnKind::kInt:
      v.set_long_value(value.as_int());
      break;
    case EdnKind::kBigInt:
      v.set_bigint(value.text());
      break;
    case EdnKind::kFloat:
      v.set_double_value(value.as_double());
      break;
    case EdnKind::kBigDec:
      v.set_bigdec(value.text());
      break;
    case EdnKind::kChar:
      v.set_char_value(value.as_char());
      break;
    case EdnKind::kString:
      v.set_string_value(value.text());
      break;
    case EdnKind::kKeyword:
      v.set_keyword(value.text());
      break;
    case EdnKind::kSymbol:
      v.set_symbol(value.text());
      break;
    case EdnKind::kList:
    case EdnKind::kVector:
      AddItems(value, v.mutable_list());
      break;
    case EdnKind::kSet:
      AddItems(value, v.mutable_set());
      break;
    case EdnKind::kMap:
      for (size_t i = 0; i + 1 < value.items().size(); i += 2) {
        v1::MapEntry* entry = v.mutable_map()->add_entries();
        *entry->mutable_key() = ToWireValue(value.items()[i]);
        *entry->mutable_value() = ToWireValue(value.items()[i + 1]);
      }
      break;
    case EdnKind::kInst:
      v.set_instant_micros(value.as_inst_micros());
      break;
    case EdnKind::kUuid:
      v.set_uuid(value.text());
      break;
    case EdnKind::kTagged:
      if (value.text() == "uri" && value.tagged_value().is_string()) {
        v.set_uri(value.tagged_value().text());
        break;
      }
      v.mutable_tagged()->set_tag(value.text());
      *v.mutable_tagged()->mutable_value() = ToWireValue(value.tagged_value());
      break;
  }
  return v;
}

absl::StatusOr<v1::EntityRef> ParseEntity(std::string_view raw) {
  const std::string_view text = TrimEdn(raw);
  absl::StatusOr<edn::EdnValue> value = edn::ParseEdn(text);
  if (!value.ok()) {
    return Bad("an entity is an id, an :ident or a lookup ref (" +
                   std::string(value.status().message()) + ")",
               text);
  }
  v1::EntityRef ref;
  if (value->is_int()) {
    ref.set_id(value->as_int());
  } else if (value->is_keyword()) {
    ref.set_ident(value->text());
  } else if (value->is_vector()) {
    if (value->items().size() != 2) {
      return Bad("a lookup ref is [:attribute value]", text);
    }
    if (!value->items()[0].is_keyword()) {
      return Bad("a lookup ref starts with an attribute keyword", text);
    }
    ref.mutable_lookup()->set_attribute(value->items()[0].text());
    *ref.mutable_lookup()->mutable_value() = ToWireValue(value->items()[1]);
  } else {
    return Bad("an entity is an id, an :ident or a lookup ref", text);
  }
  return ref;
}

absl::StatusOr<TxPoint> ParseTxPoint(std::string_view raw) {
  const std::string_view text = TrimEdn(raw);
  if (text.empty()) return Bad("expected a tx id, a t, or an instant", text);
  // A bare date is not EDN (2025-01-02 reads as no token at all); it is
  // what people type, so it is read as RFC 3339 text.
  if (LooksLikeDate(text)) return InstantPoint(text);
  absl::StatusOr<edn::EdnValue> value = edn::ParseEdn(text);
  if (value.ok() && value->is_int()) {
    TxPoint point;
    point.tx = value->as_int();
    return point;
  }
  if (value.ok() && value->is_inst()) {
    TxPoint point;
    point.is_instant = true;
    point.instant_micros = value->as_inst_micros();
    return point;
  }
  if (value.ok() && value->is_string()) return InstantPoint(value->text());
  if (!value.ok() && text.starts_with("#inst")) {
    // The reader names what is wrong with the instant.
    return value.status();
  }
  return Bad("expected a tx id, a t, or an instant (2025-01-02, #inst \"...\")",
             text);
}

}  // namespace mentat::cli
