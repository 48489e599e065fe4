#include "value_convert.h"

#include <cmath>

#include "absl/strings/escaping.h"
#include "mentat/base/str_cat.h"
#include "mentat/edn/edn_reader.h"
#include "mentat/edn/edn_uuid.h"
#include "mentat/edn/json_edn.h"
#include "mentat/edn/utf8.h"
#include "mentat/storage/value_codec.h"

namespace mentat::server {

using edn::EdnKind;
using edn::EdnValue;
using storage::ValueType;

void StorageToProto(const storage::Value& v, pb::Value* out) {
  switch (v.type()) {
    case ValueType::kRef:
      out->set_ref(v.as_ref());
      return;
    case ValueType::kLong:
      out->set_long_value(v.as_long());
      return;
    case ValueType::kBoolean:
      out->set_boolean(v.as_bool());
      return;
    case ValueType::kDouble:
      out->set_double_value(v.as_double());
      return;
    case ValueType::kInstant:
      out->set_instant_micros(v.as_long());
      return;
    case ValueType::kUuid:
      out->set_uuid(v.text());
      return;
    case ValueType::kKeyword:
      out->set_keyword(v.text());
      return;
    case ValueType::kString:
      out->set_string_value(v.text());
      return;
    case ValueType::kBigInt:
      out->set_bigint(v.text());
      return;
    case ValueType::kBigDec:
      out->set_bigdec(v.text());
      return;
    case ValueType::kBytes:
      out->set_bytes_value(v.text());
      return;
    case ValueType::kUri:
      out->set_uri(v.text());
      return;
    case ValueType::kSymbol:
      out->set_symbol(v.text());
      return;
  }
  out->set_nil(true);
}

void DatomToProto(const storage::Datom& d, pb::Datom* out) {
  out->set_e(d.e);
  out->set_a(d.a);
  StorageToProto(d.v, out->mutable_v());
  out->set_tx(d.tx);
  out->set_added(d.added);
}

void EdnToProto(const EdnValue& v, pb::Value* out) {
  switch (v.kind()) {
    case EdnKind::kNil:
      out->set_nil(true);
      return;
    case EdnKind::kBool:
      out->set_boolean(v.as_bool());
      return;
    case EdnKind::kInt:
      out->set_long_value(v.as_int());
      return;
    case EdnKind::kBigInt:
      out->set_bigint(v.text());
      return;
    case EdnKind::kFloat:
      out->set_double_value(v.as_double());
      return;
    case EdnKind::kBigDec:
      out->set_bigdec(v.text());
      return;
    case EdnKind::kChar:
      out->set_char_value(v.as_char());
      return;
    case EdnKind::kString:
      out->set_string_value(v.text());
      return;
    case EdnKind::kKeyword:
      out->set_keyword(v.text());
      return;
    case EdnKind::kSymbol:
      out->set_symbol(v.text());
      return;
    case EdnKind::kList:
    case EdnKind::kVector: {
      pb::ValueList* list = out->mutable_list();
      list->mutable_values()->Reserve(static_cast<int>(v.items().size()));
      for (const EdnValue& item : v.items())
        EdnToProto(item, list->add_values());
      return;
    }
    case EdnKind::kSet: {
      pb::ValueList* set = out->mutable_set();
      set->mutable_values()->Reserve(static_cast<int>(v.items().size()));
      for (const EdnValue& item : v.items())
        EdnToProto(item, set->add_values());
      return;
    }
    case EdnKind::kMap: {
      pb::ValueMap* map = out->mutable_map();
      const auto& items = v.items();
      map->mutable_entries()->Reserve(static_cast<int>(items.size() / 2));
      for (size_t i = 0; i + 1 < items.size(); i += 2) {
        pb::MapEntry* e = map->add_entries();
        EdnToProto(items[i], e->mutable_key());
        EdnToProto(items[i + 1], e->mutable_value());
      }
      return;
    }
    case EdnKind::kInst:
      out->set_instant_micros(v.as_inst_micros());
      return;
    case EdnKind::kUuid:
      out->set_uuid(v.text());
      return;
    case EdnKind::kTagged: {
      const EdnValue& inner = v.tagged_value();
      std::string bytes;
      if (v.text() == "bytes" && inner.is_string() &&
          Base64Decode(inner.text(), &bytes)) {
        out->set_bytes_value(std::move(bytes));
        return;
      }
      if (v.text() == "uri" && inner.is_string()) {
        out->set_uri(inner.text());
        return;
      }
      pb::TaggedValue* t = out->mutable_tagged();
      t->set_tag(v.text());
      EdnToProto(inner, t->mutable_value());
      return;
    }
  }
  out->set_nil(true);
}

namespace {

[[nodiscard]] absl::Status CheckUtf8(std::string_view text,
                                     std::string_view where,
                                     std::string_view what) {
  if (edn::IsValidUtf8(text)) return absl::OkStatus();
  return absl::InvalidArgumentError(
      StrCat(where, ": ", what, " is not valid UTF-8"));
}

[[nodiscard]] absl::StatusOr<EdnValue> ProtoToEdnAt(const pb::Value& v,
                                                    std::string_view where,
                                                    int depth) {
  if (depth > kMaxInputDepth) {
    return absl::InvalidArgumentError(StrCat(
        where, ": value nested deeper than ", kMaxInputDepth, " levels"));
  }
  switch (v.kind_case()) {
    case pb::Value::KIND_NOT_SET:
      return absl::InvalidArgumentError(StrCat(where, ": value is not set"));
    case pb::Value::kNil:
      return EdnValue::Nil();
    case pb::Value::kLongValue:
      return EdnValue::Int(v.long_value());
    case pb::Value::kRef:
      return EdnValue::Int(v.ref());
    case pb::Value::kDoubleValue:
      return EdnValue::Float(v.double_value());
    case pb::Value::kStringValue: {
      absl::Status s = CheckUtf8(v.string_value(), where, "string");
      if (!s.ok()) return s;
      return EdnValue::String(v.string_value());
    }
    case pb::Value::kKeyword: {
      std::string_view k = v.keyword();
      if (k.starts_with(":")) k.remove_prefix(1);
      absl::Status s = CheckUtf8(k, where, "keyword");
      if (!s.ok()) return s;
      if (k.empty()) {
        return absl::InvalidArgumentError(StrCat(where, ": empty keyword"));
      }
      return EdnValue::Keyword(std::string(k));
    }
    case pb::Value::kBoolean:
      return EdnValue::Bool(v.boolean());
    case pb::Value::kInstantMicros:
      return EdnValue::Inst(v.instant_micros());
    case pb::Value::kUuid:
      if (v.uuid().size() != 16) {
        return absl::InvalidArgumentError(
            StrCat(where, ": uuid must be 16 bytes, got ", v.uuid().size()));
      }
      return EdnValue::Uuid(v.uuid());
    case pb::Value::kBigint: {
      auto parsed = storage::ParseBigInt(v.bigint());
      if (!parsed.ok()) {
        return absl::InvalidArgumentError(
            StrCat(where, ": ", parsed.status().message()));
      }
      return EdnValue::BigInt(parsed->text());
    }
    case pb::Value::kBigdec: {
      auto parsed = storage::ParseBigDec(v.bigdec());
      if (!parsed.ok()) {
        return absl::InvalidArgumentError(
            StrCat(where, ": ", parsed.status().message()));
      }
      return EdnValue::BigDec(v.bigdec());
    }
    case pb::Value::kBytesValue:
      return EdnValue::Tagged("bytes",
                              EdnValue::String(Base64Encode(v.bytes_value())));
    case pb::Value::kSymbol: {
      absl::Status s = CheckUtf8(v.symbol(), where, "symbol");
      if (!s.ok()) return s;
      if (v.symbol().empty()) {
        return absl::InvalidArgumentError(StrCat(where, ": empty symbol"));
      }
      return EdnValue::Symbol(v.symbol());
    }
    case pb::Value::kUri: {
      // Checked here so a bad URI is named wherever it came from.
      auto parsed = storage::ParseUri(v.uri());
      if (!parsed.ok()) {
        return absl::InvalidArgumentError(
            StrCat(where, ": ", parsed.status().message()));
      }
      return EdnValue::Tagged("uri", EdnValue::String(v.uri()));
    }
    case pb::Value::kCharValue:
      if (v.char_value() > 0x10FFFF ||
          (v.char_value() >= 0xD800 && v.char_value() <= 0xDFFF)) {
        return absl::InvalidArgumentError(
            StrCat(where, ": char ", v.char_value(), " is not a code point"));
      }
      return EdnValue::Char(v.char_value());
    case pb::Value::kList:
    case pb::Value::kSet: {
      const pb::ValueList& list =
          v.kind_case() == pb::Value::kList ? v.list() : v.set();
      std::vector<EdnValue> items;
      items.reserve(list.values_size());
      for (const pb::Value& item : list.values()) {
        auto e = ProtoToEdnAt(item, where, depth + 1);
        if (!e.ok()) return e.status();
        items.push_back(*std::move(e));
      }
      if (v.kind_case() == pb::Value::kList) {
        return EdnValue::Vector(std::move(items));
      }
      return EdnValue::Set(std::move(items));
    }
    case pb::Value::kMap: {
      std::vector<EdnValue> items;
      items.reserve(2 * v.map().entries_size());
      for (const pb::MapEntry& entry : v.map().entries()) {
        auto k = ProtoToEdnAt(entry.key(), where, depth + 1);
        if (!k.ok()) return k.status();
        auto val = ProtoToEdnAt(entry.value(), where, depth + 1);
        if (!val.ok()) return val.status();
        items.push_back(*std::move(k));
        items.push_back(*std::move(val));
      }
      return EdnValue::Map(std::move(items));
    }
    case pb::Value::kTagged: {
      const pb::TaggedValue& t = v.tagged();
      if (t.tag().empty() || !edn::IsValidUtf8(t.tag())) {
        return absl::InvalidArgumentError(
            StrCat(where, ": tagged value needs a UTF-8 tag"));
      }
      auto inner = ProtoToEdnAt(t.value(), where, depth + 1);
      if (!inner.ok()) return inner.status();
      return EdnValue::Tagged(t.tag(), *std::move(inner));
    }
  }
  return absl::InvalidArgumentError(StrCat(where, ": unknown value kind"));
}

}  // namespace

absl::StatusOr<EdnValue> ProtoToEdn(const pb::Value& v,
                                    std::string_view where) {
  return ProtoToEdnAt(v, where, 0);
}

absl::StatusOr<EdnValue> InputToEdn(const pb::Input& input,
                                    std::string_view where) {
  switch (input.kind_case()) {
    case pb::Input::kEdn: {
      auto parsed = edn::ParseEdn(input.edn());
      if (!parsed.ok()) {
        return absl::InvalidArgumentError(
            StrCat(where, " (EDN): ", parsed.status().message()));
      }
      return parsed;
    }
    case pb::Input::kValue:
      return ProtoToEdn(input.value(), where);
    case pb::Input::kJson:
      return edn::JsonToEdn(input.json(), where,
                            edn::JsonReadOptions{.max_depth = kMaxInputDepth});
    case pb::Input::KIND_NOT_SET:
      break;
  }
  return absl::InvalidArgumentError(StrCat(where, ": input is not set"));
}

absl::StatusOr<storage::Value> ProtoToAttributeValue(
    const pb::Value& v, const storage::Attribute& attr,
    const storage::Schema& schema, std::string_view where) {
  auto mismatch = [&]() {
    return absl::InvalidArgumentError(
        StrCat(where, ": attribute :", attr.ident, " holds ",
               storage::ValueTypeIdent(attr.type), " values; got a ",
               pb::Value::GetDescriptor()
                   ->FindFieldByNumber(static_cast<int>(v.kind_case()))
                   ->name()));
  };
  if (v.kind_case() == pb::Value::KIND_NOT_SET) {
    return absl::InvalidArgumentError(StrCat(where, ": value is not set"));
  }
  switch (attr.type) {
    case ValueType::kRef:
      if (v.has_ref()) return storage::Value::Ref(v.ref());
      if (v.has_long_value()) return storage::Value::Ref(v.long_value());
      if (v.has_keyword()) {
        std::string_view k = v.keyword();
        if (k.starts_with(":")) k.remove_prefix(1);
        auto e = schema.EntityForIdent(k);
        if (!e) {
          return absl::NotFoundError(
              StrCat(where, ": no entity has the ident :", k));
        }
        return storage::Value::Ref(*e);
      }
      return mismatch();
    case ValueType::kLong:
      if (v.has_long_value()) return storage::Value::Long(v.long_value());
      return mismatch();
    case ValueType::kBoolean:
      if (v.has_boolean()) return storage::Value::Boolean(v.boolean());
      return mismatch();
    case ValueType::kDouble:
      if (v.has_double_value()) {
        return storage::Value::Double(v.double_value());
      }
      if (v.has_long_value()) {
        return storage::Value::Double(static_cast<double>(v.long_value()));
      }
      return mismatch();
    case ValueType::kInstant:
      if (v.has_instant_micros()) {
        return storage::Value::Instant(v.instant_micros());
      }
      return mismatch();
    case ValueType::kUuid:
      if (v.has_uuid()) {
        if (v.uuid().size() != 16) {
          return absl::InvalidArgumentError(
              StrCat(where, ": uuid must be 16 bytes, got ", v.uuid().size()));
        }
        return storage::Value::Uuid(v.uuid());
      }
      return mismatch();
    case ValueType::kKeyword:
      if (v.has_keyword()) {
        std::string_view k = v.keyword();
        if (k.starts_with(":")) k.remove_prefix(1);
        if (!edn::IsValidUtf8(k)) {
          return absl::InvalidArgumentError(
              StrCat(where, ": keyword is not valid UTF-8"));
        }
        return storage::Value::Keyword(k);
      }
      return mismatch();
    case ValueType::kString:
      if (v.has_string_value()) {
        if (!edn::IsValidUtf8(v.string_value())) {
          return absl::InvalidArgumentError(
              StrCat(where, ": string is not valid UTF-8"));
        }
        return storage::Value::String(v.string_value());
      }
      return mismatch();
    case ValueType::kBigInt:
    case ValueType::kBigDec: {
      std::string text;
      if (v.has_long_value()) {
        text = std::to_string(v.long_value());
      } else if (attr.type == ValueType::kBigInt && v.has_bigint()) {
        text = v.bigint();
      } else if (attr.type == ValueType::kBigDec && v.has_bigdec()) {
        text = v.bigdec();
      } else {
        return mismatch();
      }
      auto parsed = attr.type == ValueType::kBigInt
                        ? storage::ParseBigInt(text)
                        : storage::ParseBigDec(text);
      if (!parsed.ok()) {
        return absl::InvalidArgumentError(
            StrCat(where, ": ", parsed.status().message()));
      }
      return parsed;
    }
    case ValueType::kBytes:
      if (v.has_bytes_value()) return storage::Value::Bytes(v.bytes_value());
      return mismatch();
    case ValueType::kUri:
      if (v.has_uri()) {
        auto parsed = storage::ParseUri(v.uri());
        if (!parsed.ok()) {
          return absl::InvalidArgumentError(
              StrCat(where, ": ", parsed.status().message()));
        }
        return parsed;
      }
      return mismatch();
    case ValueType::kSymbol:
      if (v.has_symbol()) {
        if (!edn::IsValidUtf8(v.symbol()) || v.symbol().empty()) {
          return absl::InvalidArgumentError(
              StrCat(where, ": symbol is empty or not valid UTF-8"));
        }
        return storage::Value::Symbol(v.symbol());
      }
      return mismatch();
  }
  return mismatch();
}

std::string Base64Encode(std::string_view bytes) {
  return absl::Base64Escape(absl::string_view(bytes.data(), bytes.size()));
}

bool Base64Decode(std::string_view text, std::string* out) {
  auto digit = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  if (text.size() % 4 != 0) return false;
  out->clear();
  out->reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    int d[4];
    int pad = 0;
    for (int j = 0; j < 4; ++j) {
      const char c = text[i + j];
      if (c == '=' && last && j >= 2) {
        d[j] = 0;
        ++pad;
        continue;
      }
      if (pad > 0) return false;
      d[j] = digit(c);
      if (d[j] < 0) return false;
    }
    const uint32_t n = (d[0] << 18) | (d[1] << 12) | (d[2] << 6) | d[3];
    out->push_back(static_cast<char>((n >> 16) & 0xff));
    if (pad < 2) out->push_back(static_cast<char>((n >> 8) & 0xff));
    if (pad < 1) out->push_back(static_cast<char>(n & 0xff));
  }
  return true;
}

}  // namespace mentat::server
