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
};

size_t VarintSize(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

void AppendVarint(uint64_t v, std::string* out) {
  char buf[10];
  size_t n = 0;
  while (v >= 0x80) {
    buf[n++] = static_cast<char>((v & 0x7F) | 0x80);
    v >>= 7;
  }
  buf[n++] = static_cast<char>(v);
  out->append(buf, n);
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
      const double d = v.as_double();
      uint64_t bits;
      std::memcpy(&bits, &d, sizeof bits);
      char buf[8];
      for (int i = 0; i < 8; ++i) buf[i] = static_cast<char>(bits >> (8 * i));
      out->append(buf, 8);
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
  AppendTag(kRows, kLen, out);
  AppendVarint(body, out);
  for (size_t i = 0; i < values.size(); ++i) {
    AppendTag(1, kLen, out);
    AppendVarint(sizes[i], out);
    AppendValueWire(values[i], out);
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
