#include "mentat/client/query_batch.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "wire_decoder.h"

namespace mentat::client {

void WireValueList::Iterator::Advance() {
  at_ = next_;
  uint32_t field = 0;
  std::string_view body;
  while (at_ != nullptr) {
    if (!WireDecoder::NextLenField(&next_, end_, &field, &body)) {
      at_ = next_ = nullptr;
    } else if (field == 1) {
      WireDecoder::ShallowValue(body, &value_);
      return;
    }
  }
}

size_t WireValueList::size() const {
  size_t n = 0;
  for (auto it = begin(); it != end(); ++it) ++n;
  return n;
}

void WireValueMap::Iterator::Advance() {
  at_ = next_;
  uint32_t field = 0;
  std::string_view body;
  while (at_ != nullptr) {
    if (!WireDecoder::NextLenField(&next_, end_, &field, &body)) {
      at_ = next_ = nullptr;
    } else if (field == 1) {
      break;
    }
  }
  if (at_ == nullptr) return;
  // A MapEntry: key (1) and value (2), each a Value.
  entry_ = Entry();
  const char* p = body.data();
  const char* end = p + body.size();
  std::string_view value;
  while (WireDecoder::NextLenField(&p, end, &field, &value)) {
    if (field == 1) {
      WireDecoder::ShallowValue(value, &entry_.key);
      entry_.has_key = true;
    } else if (field == 2) {
      WireDecoder::ShallowValue(value, &entry_.value);
      entry_.has_value = true;
    }
  }
}

size_t WireValueMap::size() const {
  size_t n = 0;
  for (auto it = begin(); it != end(); ++it) ++n;
  return n;
}

WireValueList WireValue::list() const {
  return WireValueList(Bytes(Kind::kList));
}
WireValueList WireValue::set() const {
  return WireValueList(Bytes(Kind::kSet));
}
WireValueList WireValue::tuple() const {
  return WireValueList(Bytes(Kind::kTuple));
}
WireValueMap WireValue::map() const { return WireValueMap(Bytes(Kind::kMap)); }

WireTaggedValue WireValue::tagged() const {
  WireTaggedValue t;
  const std::string_view body = Bytes(Kind::kTagged);
  const char* p = body.data();
  const char* end = p + body.size();
  uint32_t field = 0;
  std::string_view part;
  while (WireDecoder::NextLenField(&p, end, &field, &part)) {
    if (field == 1) t.tag_ = part;
    if (field == 2) {
      WireDecoder::ShallowValue(part, &t.value_);
      t.has_value_ = true;
    }
  }
  return t;
}

namespace {

// `from`'s values as messages into `to` (set, even when empty).
void CopyValues(const WireValueList& from, v1::ValueList* to) {
  for (const WireValue& v : from) *to->add_values() = v.ToMessage();
}

}  // namespace

v1::Value WireValue::ToMessage() const {
  v1::Value m;
  switch (kind_case()) {
    case Kind::kNil:
      m.set_nil(nil());
      break;
    case Kind::kLongValue:
      m.set_long_value(long_value());
      break;
    case Kind::kRef:
      m.set_ref(ref());
      break;
    case Kind::kDoubleValue:
      m.set_double_value(double_value());
      break;
    case Kind::kStringValue:
      m.set_string_value(std::string(string_value()));
      break;
    case Kind::kKeyword:
      m.set_keyword(std::string(keyword()));
      break;
    case Kind::kBoolean:
      m.set_boolean(boolean());
      break;
    case Kind::kInstantMicros:
      m.set_instant_micros(instant_micros());
      break;
    case Kind::kUuid:
      m.set_uuid(std::string(uuid()));
      break;
    case Kind::kBigint:
      m.set_bigint(std::string(bigint()));
      break;
    case Kind::kBigdec:
      m.set_bigdec(std::string(bigdec()));
      break;
    case Kind::kBytesValue:
      m.set_bytes_value(std::string(bytes_value()));
      break;
    case Kind::kSymbol:
      m.set_symbol(std::string(symbol()));
      break;
    case Kind::kCharValue:
      m.set_char_value(char_value());
      break;
    case Kind::kUri:
      m.set_uri(std::string(uri()));
      break;
    case Kind::kList:
      CopyValues(list(), m.mutable_list());
      break;
    case Kind::kSet:
      CopyValues(set(), m.mutable_set());
      break;
    case Kind::kTuple:
      CopyValues(tuple(), m.mutable_tuple());
      break;
    case Kind::kMap:
      m.mutable_map();
      for (const WireValueMap::Entry& e : map()) {
        v1::MapEntry* out = m.mutable_map()->add_entries();
        if (e.has_key) *out->mutable_key() = e.key.ToMessage();
        if (e.has_value) *out->mutable_value() = e.value.ToMessage();
      }
      break;
    case Kind::kTagged: {
      const WireTaggedValue t = tagged();
      m.mutable_tagged()->set_tag(std::string(t.tag()));
      if (t.has_value()) {
        *m.mutable_tagged()->mutable_value() = t.value().ToMessage();
      }
      break;
    }
    case Kind::KIND_NOT_SET:
      break;
  }
  return m;
}

void QueryBatch::Clear() {
  columns_.clear();
  find_kind_ = v1::FIND_KIND_UNSPECIFIED;
  basis_tx_ = 0;
  resume_token_ = {};
  rows_so_far_ = 0;
  more_ = false;
  values_used_ = 0;
  rows_ = 0;
}

absl::Status QueryBatch::Decode(std::string_view bytes) {
  Clear();
  WireDecoder d(bytes.data(), bytes.data() + bytes.size());
  if (d.Batch(bytes.data(), bytes.data() + bytes.size(), this)) {
    return absl::OkStatus();
  }
  Clear();
  return absl::DataLossError(
      absl::StrCat("a QueryResponse that cannot be read: ", d.error(),
                   " at byte ", d.error_offset(), " of ", bytes.size()));
}

v1::QueryResponse QueryBatch::ToMessage() const {
  v1::QueryResponse m;
  for (std::string_view c : columns_) m.add_columns(std::string(c));
  m.set_find_kind(find_kind_);
  m.set_basis_tx(basis_tx_);
  for (const WireRow row : rows()) {
    v1::Row* r = m.add_rows();
    for (const WireValue& v : row) *r->add_values() = v.ToMessage();
  }
  m.set_resume_token(std::string(resume_token_));
  m.set_rows_so_far(rows_so_far_);
  m.set_more(more_);
  return m;
}

}  // namespace mentat::client
