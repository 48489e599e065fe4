#include "shell/wire_cell.h"

#include "shell/edn_literal.h"

namespace mentat::cli {
namespace {

std::string Utf8(uint32_t cp) {
  std::string out;
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
  return out;
}

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
      return Cell::Uuid(FormatUuid(value.uuid()));
    case v1::Value::kBigint:
      return Cell::BigInt(value.bigint());
    case v1::Value::kBigdec:
      return Cell::BigDec(value.bigdec());
    case v1::Value::kBytesValue:
      return Cell::Bytes(value.bytes_value());
    case v1::Value::kSymbol:
      return Cell::Symbol(value.symbol());
    case v1::Value::kCharValue:
      return Cell::String(Utf8(value.char_value()));
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
