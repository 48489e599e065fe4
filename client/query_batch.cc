#include "mentat/client/query_batch.h"

#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"

namespace mentat::client {

namespace {

enum WireType : uint32_t {
  kVarint = 0,
  kFixed64 = 1,
  kLen = 2,
  kStartGroup = 3,
  kEndGroup = 4,
  kFixed32 = 5,
};

// protobuf's default recursion limit: how deep messages (and groups) may
// nest below the top-level message.
constexpr int kDepthLimit = 100;

// Whether [p, end) is UTF-8 as protobuf's parser requires of `string`
// fields (no overlong forms, no surrogates, nothing past U+10FFFF). ASCII,
// which is most of what mentatd sends, goes 8 bytes at a time.
bool ValidUtf8(const unsigned char* p, const unsigned char* end) {
  while (end - p >= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    if ((word & 0x8080808080808080ull) != 0) break;
    p += 8;
  }
  while (p < end) {
    const unsigned char c = *p;
    if (c < 0x80) {
      ++p;
      continue;
    }
    int n;
    unsigned char lo = 0x80, hi = 0xBF;  // bounds of the second byte
    if (c >= 0xC2 && c <= 0xDF) {
      n = 1;
    } else if (c >= 0xE0 && c <= 0xEF) {
      n = 2;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      n = 3;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    } else {
      return false;
    }
    if (end - p <= n) return false;
    if (p[1] < lo || p[1] > hi) return false;
    for (int i = 2; i <= n; ++i) {
      if (p[i] < 0x80 || p[i] > 0xBF) return false;
    }
    p += n + 1;
  }
  return true;
}

}  // namespace

// The reader of the wire format. One instance per Decode: it remembers the
// first error and where it was. Iterations over nested collections of a
// decoded batch use it too; their bytes were checked, so they cannot fail.
class WireDecoder {
 public:
  explicit WireDecoder(const char* base) : base_(base) {}

  [[nodiscard]] bool Batch(const char* p, const char* end, QueryBatch* b);
  // The fields of one Value message in [p, end), parsed at `depth` (what
  // protobuf's recursion budget is there): its kind and scalar, or the
  // body of its nested message (not looked into).
  [[nodiscard]] bool ValueFields(const char* p, const char* end, int depth,
                                 WireValue* v);
  // The nested messages of a value, checked `depth` levels down.
  [[nodiscard]] bool CheckNested(const WireValue& v, int depth);

  // For bytes Decode checked: the next length-delimited field at or after
  // *next (its number and body), skipping others; false at the end.
  static bool NextLenField(const char** next, const char* end, uint32_t* field,
                           std::string_view* body);
  // For bytes Decode checked: a Value's fields.
  static void ShallowValue(std::string_view body, WireValue* v);
  const std::string& error() const { return error_; }
  size_t error_offset() const { return error_at_; }

 private:
  bool Fail(const char* at, std::string_view what) {
    if (error_.empty()) {
      error_ = std::string(what);
      error_at_ = base_ == nullptr ? 0 : static_cast<size_t>(at - base_);
    }
    return false;
  }
  bool Varint(const char** p, const char* end, uint64_t* out);
  // A tag or a length: at most 5 bytes, as protobuf reads them.
  bool Varint32(const char** p, const char* end, uint32_t* out,
                const char* what);
  bool Tag(const char** p, const char* end, uint32_t* field, uint32_t* type);
  // A length-delimited field's body.
  bool Len(const char** p, const char* end, std::string_view* body);
  // Skips a field of `type` (a group to its end, `depth` levels allowed).
  bool Skip(const char** p, const char* end, uint32_t field, uint32_t type,
            int depth);
  bool Utf8(std::string_view s) {
    const auto* u = reinterpret_cast<const unsigned char*>(s.data());
    return ValidUtf8(u, u + s.size()) ||
           Fail(s.data(), "a string field that is not UTF-8");
  }
  bool Row(const char* p, const char* end, QueryBatch* b);
  bool List(std::string_view body, int depth);
  bool Map(std::string_view body, int depth);
  bool MapEntry(std::string_view body, int depth);
  bool Tagged(std::string_view body, int depth, std::string_view* tag,
              std::string_view* value);

  const char* base_;
  std::string error_;
  size_t error_at_ = 0;
};

bool WireDecoder::Varint(const char** p, const char* end, uint64_t* out) {
  const char* q = *p;
  uint64_t v = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    if (q == end) return Fail(q, "a varint cut off by the message's end");
    const uint64_t byte = static_cast<unsigned char>(*q++);
    v |= (byte & 0x7F) << shift;
    if (byte < 0x80) {
      *out = v;
      *p = q;
      return true;
    }
  }
  return Fail(*p, "a varint longer than 10 bytes");
}

bool WireDecoder::Varint32(const char** p, const char* end, uint32_t* out,
                           const char* what) {
  const char* q = *p;
  uint64_t v = 0;
  for (int shift = 0; shift < 35; shift += 7) {
    if (q == end) return Fail(q, absl::StrCat("a ", what, " cut off"));
    const uint64_t byte = static_cast<unsigned char>(*q++);
    v |= (byte & 0x7F) << shift;
    if (byte < 0x80) {
      // protobuf keeps a tag's low 32 bits; a length that large is past
      // any message's end anyway.
      *out = static_cast<uint32_t>(v);
      *p = q;
      return true;
    }
  }
  return Fail(*p, absl::StrCat("a ", what, " longer than 5 bytes"));
}

bool WireDecoder::Tag(const char** p, const char* end, uint32_t* field,
                      uint32_t* type) {
  uint32_t tag;
  const char* at = *p;
  if (!Varint32(p, end, &tag, "field tag")) return false;
  *field = tag >> 3;
  *type = tag & 7;
  if (*field == 0) return Fail(at, "a field numbered 0");
  if (*type > kFixed32) return Fail(at, "a field of an unknown wire type");
  return true;
}

bool WireDecoder::Len(const char** p, const char* end, std::string_view* body) {
  uint32_t n;
  const char* at = *p;
  if (!Varint32(p, end, &n, "length")) return false;
  if (n > 0x7FFFFFFFu) return Fail(at, "a length over 2^31");
  if (n > static_cast<size_t>(end - *p)) {
    return Fail(at, "a length past the end of its message");
  }
  *body = std::string_view(*p, n);
  *p += n;
  return true;
}

bool WireDecoder::Skip(const char** p, const char* end, uint32_t field,
                       uint32_t type, int depth) {
  switch (type) {
    case kVarint: {
      uint64_t ignored;
      return Varint(p, end, &ignored);
    }
    case kFixed64:
    case kFixed32: {
      const size_t n = type == kFixed64 ? 8 : 4;
      if (static_cast<size_t>(end - *p) < n) {
        return Fail(*p, "a fixed-size field cut off");
      }
      *p += n;
      return true;
    }
    case kLen: {
      std::string_view ignored;
      return Len(p, end, &ignored);
    }
    case kStartGroup: {
      // protobuf counts a group as a level, like a message.
      if (depth - 1 < 0) return Fail(*p, "groups nested over 100 deep");
      while (true) {
        if (*p == end) return Fail(*p, "a group without its end");
        const char* at = *p;
        uint32_t f, t;
        if (!Tag(p, end, &f, &t)) return false;
        if (t == kEndGroup) {
          return f == field || Fail(at, "a group ended by another's end");
        }
        if (!Skip(p, end, f, t, depth - 1)) return false;
      }
    }
    default:  // kEndGroup outside its group
      return Fail(*p, "the end of a group that was not started");
  }
}

bool WireDecoder::ValueFields(const char* p, const char* end, int depth,
                              WireValue* v) {
  *v = WireValue();
  using Kind = WireValue::Kind;
  while (p < end) {
    const char* at = p;
    uint32_t field, type;
    if (!Tag(&p, end, &field, &type)) return false;
    switch (field) {
      case Kind::kNil:
      case Kind::kLongValue:
      case Kind::kRef:
      case Kind::kBoolean:
      case Kind::kInstantMicros:
      case Kind::kCharValue: {
        if (type != kVarint) break;
        uint64_t x;
        if (!Varint(&p, end, &x)) return false;
        v->kind_ = static_cast<uint8_t>(field);
        if (field == Kind::kNil || field == Kind::kBoolean) {
          v->number_ = x != 0;
        } else if (field == Kind::kCharValue) {
          v->number_ = static_cast<uint32_t>(x);
        } else {
          v->number_ = static_cast<int64_t>(x);
        }
        continue;
      }
      case Kind::kDoubleValue:
        if (type != kFixed64) break;
        if (end - p < 8) return Fail(p, "a double cut off");
        std::memcpy(&v->double_, p, 8);
        p += 8;
        v->kind_ = static_cast<uint8_t>(field);
        continue;
      case Kind::kStringValue:
      case Kind::kKeyword:
      case Kind::kBigint:
      case Kind::kBigdec:
      case Kind::kSymbol:
      case Kind::kUri:
      case Kind::kUuid:
      case Kind::kBytesValue:
      case Kind::kList:
      case Kind::kSet:
      case Kind::kMap:
      case Kind::kTagged:
      case Kind::kTuple: {
        if (type != kLen) break;
        std::string_view body;
        if (!Len(&p, end, &body)) return false;
        const bool message = field == Kind::kList || field == Kind::kSet ||
                             field == Kind::kMap || field == Kind::kTagged ||
                             field == Kind::kTuple;
        if (message && v->kind_ == field) {
          return Fail(at, "a Value whose collection is given twice");
        }
        const bool bytes = field == Kind::kUuid || field == Kind::kBytesValue;
        if (!message && !bytes && !Utf8(body)) return false;
        v->kind_ = static_cast<uint8_t>(field);
        v->data_ = body.data();
        v->size_ = static_cast<uint32_t>(body.size());
        v->number_ = 0;
        continue;
      }
      default:
        break;
    }
    // An unknown field, or a known one of another wire type (protobuf
    // keeps both as unknown fields).
    if (!Skip(&p, end, field, type, depth)) return false;
  }
  return true;
}

bool WireDecoder::CheckNested(const WireValue& v, int depth) {
  using Kind = WireValue::Kind;
  const std::string_view body(v.data_, v.size_);
  switch (v.kind_case()) {
    case Kind::kList:
    case Kind::kSet:
    case Kind::kTuple:
      return List(body, depth);
    case Kind::kMap:
      return Map(body, depth);
    case Kind::kTagged: {
      std::string_view tag, value;
      return Tagged(body, depth, &tag, &value);
    }
    default:
      return true;
  }
}

// `depth`: the levels left for the message whose body this is.
bool WireDecoder::List(std::string_view body, int depth) {
  if (depth < 0) return Fail(body.data(), "values nested over 100 deep");
  const char* p = body.data();
  const char* end = p + body.size();
  while (p < end) {
    uint32_t field, type;
    if (!Tag(&p, end, &field, &type)) return false;
    if (field == 1 && type == kLen) {
      std::string_view element;
      WireValue v;
      if (!Len(&p, end, &element)) return false;
      if (depth - 1 < 0) return Fail(element.data(), "values nested too deep");
      if (!ValueFields(element.data(), element.data() + element.size(),
                       depth - 1, &v) ||
          !CheckNested(v, depth - 2)) {
        return false;
      }
    } else if (!Skip(&p, end, field, type, depth)) {
      return false;
    }
  }
  return true;
}

bool WireDecoder::Map(std::string_view body, int depth) {
  if (depth < 0) return Fail(body.data(), "values nested over 100 deep");
  const char* p = body.data();
  const char* end = p + body.size();
  while (p < end) {
    uint32_t field, type;
    if (!Tag(&p, end, &field, &type)) return false;
    if (field == 1 && type == kLen) {
      std::string_view entry;
      if (!Len(&p, end, &entry) || !MapEntry(entry, depth - 1)) return false;
    } else if (!Skip(&p, end, field, type, depth)) {
      return false;
    }
  }
  return true;
}

bool WireDecoder::MapEntry(std::string_view body, int depth) {
  if (depth < 0) return Fail(body.data(), "values nested over 100 deep");
  const char* p = body.data();
  const char* end = p + body.size();
  bool seen[3] = {false, false, false};
  while (p < end) {
    const char* at = p;
    uint32_t field, type;
    if (!Tag(&p, end, &field, &type)) return false;
    if ((field == 1 || field == 2) && type == kLen) {
      if (seen[field]) return Fail(at, "a map entry's key or value twice");
      seen[field] = true;
      std::string_view value;
      WireValue v;
      if (!Len(&p, end, &value)) return false;
      if (depth - 1 < 0) return Fail(value.data(), "values nested too deep");
      if (!ValueFields(value.data(), value.data() + value.size(), depth - 1,
                       &v) ||
          !CheckNested(v, depth - 2)) {
        return false;
      }
    } else if (!Skip(&p, end, field, type, depth)) {
      return false;
    }
  }
  return true;
}

bool WireDecoder::Tagged(std::string_view body, int depth,
                         std::string_view* tag, std::string_view* value) {
  if (depth < 0) return Fail(body.data(), "values nested over 100 deep");
  const char* p = body.data();
  const char* end = p + body.size();
  bool value_seen = false;
  *tag = {};
  *value = {};
  while (p < end) {
    const char* at = p;
    uint32_t field, type;
    if (!Tag(&p, end, &field, &type)) return false;
    if (field == 1 && type == kLen) {
      if (!Len(&p, end, tag) || !Utf8(*tag)) return false;
    } else if (field == 2 && type == kLen) {
      if (value_seen) return Fail(at, "a tagged value's value twice");
      value_seen = true;
      WireValue v;
      if (!Len(&p, end, value)) return false;
      if (depth - 1 < 0) return Fail(value->data(), "values nested too deep");
      if (!ValueFields(value->data(), value->data() + value->size(), depth - 1,
                       &v) ||
          !CheckNested(v, depth - 2)) {
        return false;
      }
    } else if (!Skip(&p, end, field, type, depth)) {
      return false;
    }
  }
  return true;
}

bool WireDecoder::Row(const char* p, const char* end, QueryBatch* b) {
  // The Row is 1 level down, its Values 2: CheckNested gets what is left
  // below a Value.
  while (p < end) {
    uint32_t field, type;
    if (!Tag(&p, end, &field, &type)) return false;
    if (field == 1 && type == kLen) {
      std::string_view body;
      if (!Len(&p, end, &body)) return false;
      WireValue& v = b->values_.emplace_back();
      if (!ValueFields(body.data(), body.data() + body.size(), kDepthLimit - 2,
                       &v)) {
        return false;
      }
      if (v.kind_ >= WireValue::Kind::kList &&
          !CheckNested(v, kDepthLimit - 3)) {
        return false;
      }
    } else if (!Skip(&p, end, field, type, kDepthLimit - 1)) {
      return false;
    }
  }
  return true;
}

bool WireDecoder::Batch(const char* p, const char* end, QueryBatch* b) {
  while (p < end) {
    uint32_t field, type;
    if (!Tag(&p, end, &field, &type)) return false;
    uint64_t x;
    std::string_view body;
    switch (field) {
      case 1:  // columns
        if (type != kLen) break;
        if (!Len(&p, end, &body) || !Utf8(body)) return false;
        b->columns_.push_back(body);
        continue;
      case 4:  // rows
        if (type != kLen) break;
        if (!Len(&p, end, &body) ||
            !Row(body.data(), body.data() + body.size(), b)) {
          return false;
        }
        b->row_ends_.push_back(static_cast<uint32_t>(b->values_.size()));
        continue;
      case 5:  // resume_token
        if (type != kLen) break;
        if (!Len(&p, end, &body)) return false;
        b->resume_token_ = body;
        continue;
      case 2:  // find_kind
      case 3:  // basis_tx
      case 6:  // rows_so_far
      case 7:  // more
        if (type != kVarint) break;
        if (!Varint(&p, end, &x)) return false;
        if (field == 2) {
          b->find_kind_ = static_cast<v1::FindKind>(static_cast<int32_t>(x));
        } else if (field == 3) {
          b->basis_tx_ = static_cast<int64_t>(x);
        } else if (field == 6) {
          b->rows_so_far_ = static_cast<int64_t>(x);
        } else {
          b->more_ = x != 0;
        }
        continue;
      default:
        break;
    }
    if (!Skip(&p, end, field, type, kDepthLimit)) return false;
  }
  return true;
}

bool WireDecoder::NextLenField(const char** next, const char* end,
                               uint32_t* field, std::string_view* body) {
  WireDecoder d(nullptr);
  while (*next < end) {
    uint32_t type;
    if (!d.Tag(next, end, field, &type)) return false;
    if (type == kLen) return d.Len(next, end, body);
    if (!d.Skip(next, end, *field, type, kDepthLimit)) return false;
  }
  return false;
}

void WireDecoder::ShallowValue(std::string_view body, WireValue* v) {
  // Checked when the batch was decoded: this cannot fail.
  (void)WireDecoder(nullptr).ValueFields(body.data(), body.data() + body.size(),
                                         kDepthLimit, v);
}

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
      for (const WireValue& v : list())
        *m.mutable_list()->add_values() = v.ToMessage();
      m.mutable_list();
      break;
    case Kind::kSet:
      for (const WireValue& v : set())
        *m.mutable_set()->add_values() = v.ToMessage();
      m.mutable_set();
      break;
    case Kind::kTuple:
      for (const WireValue& v : tuple())
        *m.mutable_tuple()->add_values() = v.ToMessage();
      m.mutable_tuple();
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
  values_.clear();
  row_ends_.clear();
}

absl::Status QueryBatch::Decode(std::string_view bytes) {
  Clear();
  WireDecoder d(bytes.data());
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
