#include "wire_encoding.h"

#include <grpc/slice.h>
#include <grpcpp/support/slice.h>

#include <cstring>

#include "value_convert.h"

namespace mentat::server {

namespace {

using edn::EdnKind;
using edn::EdnValue;

// Wire types.
constexpr uint32_t kVarint = 0;
constexpr uint32_t kFixed64 = 1;
constexpr uint32_t kLen = 2;

// mentat.v1.Value's fields.
enum ValueField : uint32_t {
  kNil = 1,
  kLong = 2,
  kDouble = 4,
  kString = 5,
  kKeyword = 6,
  kBoolean = 7,
  kInstant = 8,
  kUuid = 9,
  kBigint = 10,
  kBigdec = 11,
  kBytes = 12,
  kSymbol = 13,
  kChar = 14,
  kList = 15,
  kSet = 16,
  kMap = 17,
  kTagged = 18,
  kUri = 19,
};

size_t VarintSize(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

// The writers write into bytes already sized (the row encoder's: a cell
// then costs a few stores instead of a string append per field); the
// appenders grow a string through them.
char* WriteVarint(uint64_t v, char* p) {
  while (v >= 0x80) {
    *p++ = static_cast<char>((v & 0x7F) | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<char>(v);
  return p;
}

// A double as protobuf's fixed64: its bits, little-endian.
char* WriteDouble(double d, char* p) {
  uint64_t bits;
  std::memcpy(&bits, &d, sizeof bits);
  for (int i = 0; i < 8; ++i) *p++ = static_cast<char>(bits >> (8 * i));
  return p;
}

void AppendVarint(uint64_t v, std::string* out) {
  char buf[10];
  out->append(buf, WriteVarint(v, buf) - buf);
}

size_t TagSize(uint32_t field) { return field < 16 ? 1 : 2; }

void AppendTag(uint32_t field, uint32_t wire_type, std::string* out) {
  AppendVarint((field << 3) | wire_type, out);
}

// A length-delimited field of `len` bytes: its tag, length and bytes.
size_t LenFieldSize(uint32_t field, size_t len) {
  return TagSize(field) + VarintSize(len) + len;
}

void AppendBytesField(uint32_t field, std::string_view bytes,
                      std::string* out) {
  AppendTag(field, kLen, out);
  AppendVarint(bytes.size(), out);
  out->append(bytes);
}

// #bytes "base64" travels as bytes_value; `*bytes` gets them.
bool AsBytes(const EdnValue& v, std::string* bytes) {
  const EdnValue& inner = v.tagged_value();
  return v.text() == "bytes" && inner.is_string() &&
         Base64Decode(inner.text(), bytes);
}

// #uri "text" travels as the uri field (the text, unchanged).
const std::string* AsUri(const EdnValue& v) {
  const EdnValue& inner = v.tagged_value();
  return v.text() == "uri" && inner.is_string() ? &inner.text() : nullptr;
}

// Items of a list or set: a ValueList's body.
size_t ListBodySize(const EdnValue& v) {
  size_t n = 0;
  for (const EdnValue& item : v.items())
    n += LenFieldSize(1, ValueWireSize(item));
  return n;
}

size_t MapEntrySize(const EdnValue& key, const EdnValue& value) {
  return LenFieldSize(1, ValueWireSize(key)) +
         LenFieldSize(2, ValueWireSize(value));
}

size_t MapBodySize(const EdnValue& v) {
  const auto& items = v.items();
  size_t n = 0;
  for (size_t i = 0; i + 1 < items.size(); i += 2) {
    n += LenFieldSize(1, MapEntrySize(items[i], items[i + 1]));
  }
  return n;
}

size_t TaggedBodySize(const EdnValue& v) {
  size_t n = v.text().empty() ? 0 : LenFieldSize(1, v.text().size());
  return n + LenFieldSize(2, ValueWireSize(v.tagged_value()));
}

void AppendValueField(uint32_t field, const EdnValue& v, std::string* out) {
  AppendTag(field, kLen, out);
  AppendVarint(ValueWireSize(v), out);
  AppendValueWire(v, out);
}

}  // namespace

size_t ValueWireSize(const EdnValue& v) {
  switch (v.kind()) {
    case EdnKind::kNil:
      return 2;
    case EdnKind::kBool:
      return 2;
    case EdnKind::kInt:
      return 1 + VarintSize(static_cast<uint64_t>(v.as_int()));
    case EdnKind::kFloat:
      return 9;
    case EdnKind::kChar:
      return 1 + VarintSize(static_cast<uint32_t>(v.as_char()));
    case EdnKind::kInst:
      return 1 + VarintSize(static_cast<uint64_t>(v.as_inst_micros()));
    case EdnKind::kBigInt:
    case EdnKind::kBigDec:
    case EdnKind::kString:
    case EdnKind::kKeyword:
    case EdnKind::kSymbol:
    case EdnKind::kUuid:
      return LenFieldSize(1, v.text().size());
    case EdnKind::kList:
    case EdnKind::kVector:
      return LenFieldSize(kList, ListBodySize(v));
    case EdnKind::kSet:
      return LenFieldSize(kSet, ListBodySize(v));
    case EdnKind::kMap:
      return LenFieldSize(kMap, MapBodySize(v));
    case EdnKind::kTagged: {
      std::string bytes;
      if (AsBytes(v, &bytes)) return LenFieldSize(kBytes, bytes.size());
      if (const std::string* uri = AsUri(v)) {
        return LenFieldSize(kUri, uri->size());
      }
      return LenFieldSize(kTagged, TaggedBodySize(v));
    }
  }
  return 2;
}

void AppendValueWire(const EdnValue& v, std::string* out) {
  switch (v.kind()) {
    case EdnKind::kNil:
      AppendTag(kNil, kVarint, out);
      out->push_back(1);
      return;
    case EdnKind::kBool:
      AppendTag(kBoolean, kVarint, out);
      out->push_back(v.as_bool() ? 1 : 0);
      return;
    case EdnKind::kInt:
      AppendTag(kLong, kVarint, out);
      AppendVarint(static_cast<uint64_t>(v.as_int()), out);
      return;
    case EdnKind::kFloat: {
      AppendTag(kDouble, kFixed64, out);
      char buf[8];
      out->append(buf, WriteDouble(v.as_double(), buf) - buf);
      return;
    }
    case EdnKind::kChar:
      AppendTag(kChar, kVarint, out);
      AppendVarint(static_cast<uint32_t>(v.as_char()), out);
      return;
    case EdnKind::kInst:
      AppendTag(kInstant, kVarint, out);
      AppendVarint(static_cast<uint64_t>(v.as_inst_micros()), out);
      return;
    case EdnKind::kBigInt:
      AppendBytesField(kBigint, v.text(), out);
      return;
    case EdnKind::kBigDec:
      AppendBytesField(kBigdec, v.text(), out);
      return;
    case EdnKind::kString:
      AppendBytesField(kString, v.text(), out);
      return;
    case EdnKind::kKeyword:
      AppendBytesField(kKeyword, v.text(), out);
      return;
    case EdnKind::kSymbol:
      AppendBytesField(kSymbol, v.text(), out);
      return;
    case EdnKind::kUuid:
      AppendBytesField(kUuid, v.text(), out);
      return;
    case EdnKind::kList:
    case EdnKind::kVector:
    case EdnKind::kSet:
      AppendTag(v.kind() == EdnKind::kSet ? kSet : kList, kLen, out);
      AppendVarint(ListBodySize(v), out);
      for (const EdnValue& item : v.items()) AppendValueField(1, item, out);
      return;
    case EdnKind::kMap: {
      AppendTag(kMap, kLen, out);
      AppendVarint(MapBodySize(v), out);
      const auto& items = v.items();
      for (size_t i = 0; i + 1 < items.size(); i += 2) {
        AppendTag(1, kLen, out);
        AppendVarint(MapEntrySize(items[i], items[i + 1]), out);
        AppendValueField(1, items[i], out);
        AppendValueField(2, items[i + 1], out);
      }
      return;
    }
    case EdnKind::kTagged: {
      std::string bytes;
      if (AsBytes(v, &bytes)) {
        AppendBytesField(kBytes, bytes, out);
        return;
      }
      if (const std::string* uri = AsUri(v)) {
        AppendBytesField(kUri, *uri, out);
        return;
      }
      AppendTag(kTagged, kLen, out);
      AppendVarint(TaggedBodySize(v), out);
      if (!v.text().empty()) AppendBytesField(1, v.text(), out);
      AppendValueField(2, v.tagged_value(), out);
      return;
    }
  }
  AppendTag(kNil, kVarint, out);
  out->push_back(1);
}

namespace {

// `bytes` as the ByteBuffer's one slice (one copy).
void ToByteBuffer(std::string_view bytes, grpc::ByteBuffer* out) {
  grpc::Slice slice(bytes.data(), bytes.size());
  *out = grpc::ByteBuffer(&slice, 1);
}

void AppendBasisTx(int64_t basis_tx, std::string* out) {
  if (basis_tx == 0) return;
  AppendTag(2, kVarint, out);
  AppendVarint(static_cast<uint64_t>(basis_tx), out);
}

}  // namespace

void EncodePullResponse(const EdnValue& result, int64_t basis_tx,
                        grpc::ByteBuffer* out) {
  std::string bytes;
  AppendValueField(1, result, &bytes);
  AppendBasisTx(basis_tx, &bytes);
  ToByteBuffer(bytes, out);
}

void EncodePullManyResponse(const std::vector<EdnValue>& results,
                            int64_t basis_tx, grpc::ByteBuffer* out) {
  std::string bytes;
  for (const EdnValue& r : results) AppendValueField(1, r, &bytes);
  AppendBasisTx(basis_tx, &bytes);
  ToByteBuffer(bytes, out);
}

// mentat.v1.QueryResponse's fields.
enum QueryResponseField : uint32_t {
  kColumns = 1,
  kFindKind = 2,
  kBasisTx = 3,
  kRows = 4,
  kResumeToken = 5,
  kRowsSoFar = 6,
  kMore = 7,
};

void QueryResponseEncoder::AddColumn(std::string_view name) {
  AppendBytesField(kColumns, name, &columns_);
}

size_t QueryResponseEncoder::AddRow(const std::vector<EdnValue>& values) {
  const size_t start = rows_.size();
  EncodeRow(values, &rows_);
  row_ends_.push_back(rows_.size());
  return rows_.size() - start;
}

namespace {

char* WriteBytesField(uint32_t field, std::string_view bytes, char* p) {
  p = WriteVarint((field << 3) | kLen, p);
  p = WriteVarint(bytes.size(), p);
  std::memcpy(p, bytes.data(), bytes.size());
  return p + bytes.size();
}

// `v`'s Value fields (ValueWireSize(v) bytes); collections and tagged
// values through AppendValueWire.
char* WriteValueWire(const EdnValue& v, size_t size, char* p) {
  switch (v.kind()) {
    case EdnKind::kInt:
      p = WriteVarint((kLong << 3) | kVarint, p);
      return WriteVarint(static_cast<uint64_t>(v.as_int()), p);
    case EdnKind::kInst:
      p = WriteVarint((kInstant << 3) | kVarint, p);
      return WriteVarint(static_cast<uint64_t>(v.as_inst_micros()), p);
    case EdnKind::kString:
      return WriteBytesField(kString, v.text(), p);
    case EdnKind::kKeyword:
      return WriteBytesField(kKeyword, v.text(), p);
    case EdnKind::kUuid:
      return WriteBytesField(kUuid, v.text(), p);
    default: {
      std::string bytes;
      bytes.reserve(size);
      AppendValueWire(v, &bytes);
      std::memcpy(p, bytes.data(), bytes.size());
      return p + bytes.size();
    }
  }
}

size_t StorageValueWireSize(const storage::Value& v) {
  using storage::ValueType;
  switch (v.type()) {
    case ValueType::kRef:
    case ValueType::kLong:
    case ValueType::kInstant:
      return 1 + VarintSize(static_cast<uint64_t>(v.as_long()));
    case ValueType::kBoolean:
      return 2;
    case ValueType::kDouble:
      return 9;
    case ValueType::kUuid:
    case ValueType::kKeyword:
    case ValueType::kString:
    case ValueType::kBigInt:
    case ValueType::kBigDec:
    case ValueType::kBytes:
    case ValueType::kSymbol:
      return LenFieldSize(1, v.text().size());
    case ValueType::kUri:
      // Field 19: a two-byte tag.
      return LenFieldSize(kUri, v.text().size());
  }
  return 2;
}

// As WriteValueWire writes ValueToEdn(v) (query/pull/value_to_edn.cc):
// refs are longs, #bytes travel raw as bytes_value, #uri as uri.
char* WriteStorageValueWire(const storage::Value& v, char* p) {
  using storage::ValueType;
  switch (v.type()) {
    case ValueType::kRef:
    case ValueType::kLong:
      p = WriteVarint((kLong << 3) | kVarint, p);
      return WriteVarint(static_cast<uint64_t>(v.as_long()), p);
    case ValueType::kInstant:
      p = WriteVarint((kInstant << 3) | kVarint, p);
      return WriteVarint(static_cast<uint64_t>(v.as_long()), p);
    case ValueType::kBoolean:
      p = WriteVarint((kBoolean << 3) | kVarint, p);
      *p++ = v.as_bool() ? 1 : 0;
      return p;
    case ValueType::kDouble: {
      p = WriteVarint((kDouble << 3) | kFixed64, p);
      return WriteDouble(v.as_double(), p);
    }
    case ValueType::kUuid:
      return WriteBytesField(kUuid, v.text(), p);
    case ValueType::kKeyword:
      return WriteBytesField(kKeyword, v.text(), p);
    case ValueType::kString:
      return WriteBytesField(kString, v.text(), p);
    case ValueType::kBigInt:
      return WriteBytesField(kBigint, v.text(), p);
    case ValueType::kBigDec:
      return WriteBytesField(kBigdec, v.text(), p);
    case ValueType::kBytes:
      return WriteBytesField(kBytes, v.text(), p);
    case ValueType::kUri:
      return WriteBytesField(kUri, v.text(), p);
    case ValueType::kSymbol:
      return WriteBytesField(kSymbol, v.text(), p);
  }
  p = WriteVarint((kNil << 3) | kVarint, p);
  *p++ = 1;
  return p;
}

}  // namespace

size_t QueryResponseEncoder::AddValueRow(const storage::Value* const* cells,
                                         size_t width) {
  const size_t start = rows_.size();
  EncodeValueRow(cells, width, &rows_);
  row_ends_.push_back(rows_.size());
  return rows_.size() - start;
}

void QueryResponseEncoder::EncodeValueRow(const storage::Value* const* cells,
                                          size_t width, std::string* out) {
  size_t body = 0;
  for (size_t i = 0; i < width; ++i) {
    body += LenFieldSize(1, StorageValueWireSize(*cells[i]));
  }
  const size_t start = out->size();
  out->resize(start + LenFieldSize(kRows, body));
  char* p = out->data() + start;
  p = WriteVarint((kRows << 3) | kLen, p);
  p = WriteVarint(body, p);
  for (size_t i = 0; i < width; ++i) {
    p = WriteVarint((1 << 3) | kLen, p);
    p = WriteVarint(StorageValueWireSize(*cells[i]), p);
    p = WriteStorageValueWire(*cells[i], p);
  }
}

void QueryResponseEncoder::EncodeRow(const std::vector<EdnValue>& values,
                                     std::string* out) {
  thread_local std::vector<size_t> sizes;
  sizes.clear();
  size_t body = 0;
  for (const EdnValue& v : values) {
    const size_t n = ValueWireSize(v);
    sizes.push_back(n);
    body += LenFieldSize(1, n);
  }
  const size_t start = out->size();
  out->resize(start + LenFieldSize(kRows, body));
  char* p = out->data() + start;
  p = WriteVarint((kRows << 3) | kLen, p);
  p = WriteVarint(body, p);
  for (size_t i = 0; i < values.size(); ++i) {
    p = WriteVarint((1 << 3) | kLen, p);
    p = WriteVarint(sizes[i], p);
    p = WriteValueWire(values[i], sizes[i], p);
  }
}

std::string_view QueryResponseEncoder::row(int i) const {
  const size_t begin = i == 0 ? 0 : row_ends_[static_cast<size_t>(i) - 1];
  return std::string_view(rows_).substr(
      begin, row_ends_[static_cast<size_t>(i)] - begin);
}

void QueryResponseEncoder::Render(int64_t basis_tx,
                                  std::string_view resume_token,
                                  int64_t rows_so_far, bool more,
                                  grpc::ByteBuffer* out) {
  // The fields in field-number order, as protobuf writes them.
  std::string head = std::move(columns_);
  if (find_kind_ != 0) {
    AppendTag(kFindKind, kVarint, &head);
    AppendVarint(static_cast<uint64_t>(find_kind_), &head);
  }
  if (basis_tx != 0) {
    AppendTag(kBasisTx, kVarint, &head);
    AppendVarint(static_cast<uint64_t>(basis_tx), &head);
  }
  std::string tail;
  if (!resume_token.empty())
    AppendBytesField(kResumeToken, resume_token, &tail);
  if (rows_so_far != 0) {
    AppendTag(kRowsSoFar, kVarint, &tail);
    AppendVarint(static_cast<uint64_t>(rows_so_far), &tail);
  }
  if (more) {
    AppendTag(kMore, kVarint, &tail);
    AppendVarint(1, &tail);
  }
  grpc_slice slice =
      grpc_slice_malloc(head.size() + rows_.size() + tail.size());
  char* p = reinterpret_cast<char*>(GRPC_SLICE_START_PTR(slice));
  std::memcpy(p, head.data(), head.size());
  p += head.size();
  std::memcpy(p, rows_.data(), rows_.size());
  p += rows_.size();
  std::memcpy(p, tail.data(), tail.size());
  grpc::Slice owned(slice, grpc::Slice::STEAL_REF);
  *out = grpc::ByteBuffer(&owned, 1);
  columns_.clear();
  rows_.clear();
  row_ends_.clear();
}

}  // namespace mentat::server
