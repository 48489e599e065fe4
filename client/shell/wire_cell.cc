#include "shell/wire_cell.h"

#include <string>

#include "mentat/edn/edn_uuid.h"
#include "mentat/edn/utf8.h"

namespace mentat::cli {
namespace {

Cell Items(Cell::Kind kind, const v1::ValueList& list) {
  std::vector<Cell> items;
  items.reserve(list.values_size());
  for (const v1::Value& v : list.values()) items.push_back(ToCell(v));
  return Cell::Collection(kind, std::move(items));
}

}  // namespace

Cell ToCell(const v1::Value& value) {
  switch (value.kind_case()) {
    case v1::Value::kNil:
    case v1::Value::KIND_NOT_SET:
      return Cell::Nil();
    case v1::Value::kLongValue:
      return Cell::Long(value.long_value());
    case v1::Value::kRef:
      return Cell::Ref(value.ref());
    case v1::Value::kDoubleValue:
      return Cell::Double(value.double_value());
    case v1::Value::kStringValue:
      return Cell::String(value.string_value());
    case v1::Value::kKeyword:
      return Cell::Keyword(value.keyword());
    case v1::Value::kBoolean:
      return Cell::Boolean(value.boolean());
    case v1::Value::kInstantMicros:
      return Cell::Instant(value.instant_micros());
    case v1::Value::kUuid:
      // The server sends 16 bytes; anything else prints as its bytes.
      if (value.uuid().size() != 16) return Cell::Bytes(value.uuid());
      return Cell::Uuid(edn::FormatUuid(value.uuid()));
    case v1::Value::kBigint:
      return Cell::BigInt(value.bigint());
    case v1::Value::kBigdec:
      return Cell::BigDec(value.bigdec());
    case v1::Value::kBytesValue:
      return Cell::Bytes(value.bytes_value());
    case v1::Value::kSymbol:
      return Cell::Symbol(value.symbol());
    case v1::Value::kUri:
      return Cell::Uri(value.uri());
    case v1::Value::kCharValue: {
      // Not a Unicode scalar value (the server never sends one): U+FFFD.
      const uint32_t cp = value.char_value();
      const bool scalar = cp <= 0x10FFFF && (cp < 0xD800 || cp > 0xDFFF);
      std::string text;
      edn::AppendUtf8(scalar ? cp : 0xFFFD, &text);
      return Cell::String(std::move(text));
    }
    case v1::Value::kList:
      return Items(Cell::Kind::kVector, value.list());
    case v1::Value::kSet:
      return Items(Cell::Kind::kSet, value.set());
    case v1::Value::kMap: {
      std::vector<Cell> items;
      items.reserve(2 * value.map().entries_size());
      for (const v1::MapEntry& e : value.map().entries()) {
        items.push_back(ToCell(e.key()));
        items.push_back(ToCell(e.value()));
      }
      return Cell::Collection(Cell::Kind::kMap, std::move(items));
    }
    case v1::Value::kTagged:
      // Printed as written: #my/tag <value>.
      return Cell::Symbol("#" + value.tagged().tag() + " " +
                          ToEdn(ToCell(value.tagged().value())));
  }
  return Cell::Nil();
}

}  // namespace mentat::cli
