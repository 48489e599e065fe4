#include "wire_encoding.h"

#include <grpc/slice.h>
#include <grpcpp/support/slice.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "mentat/query/pull.h"
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

// One byte per 7 bits of the highest set bit: no loop (an entity id takes
// 6 to 9 bytes, and every cell of a row is sized).
size_t VarintSize(uint64_t v) {
  return static_cast<size_t>(63 - __builtin_clzll(v | 1)) / 7 + 1;
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

// The sizes a tree of EDN values takes on the wire, computed once, in the
// order WriteTree visits the nodes: each value's Value body; a collection's
// inner body (its ValueList, ValueMap or TaggedValue) after it; a map
// entry's MapEntry before its key and value. Sizing each level from its
// children instead (as protobuf's ByteSizeLong does without its cache)
// sized a pull result's leaves once per level of nesting above them.
using SizeTree = std::vector<size_t>;

// The thread's SizeTree, reused from call to call; one that grew past 64K
// sizes (a huge result) is freed after use rather than kept. No holder
// calls anything that takes it again.
class ScratchTree {
 public:
  ScratchTree() : tree_(Shared()) { tree_.clear(); }
  ~ScratchTree() {
    if (tree_.capacity() > (size_t{1} << 16)) SizeTree().swap(tree_);
  }
  ScratchTree(const ScratchTree&) = delete;
  ScratchTree& operator=(const ScratchTree&) = delete;
  SizeTree* get() { return &tree_; }

 private:
  static SizeTree& Shared() {
    thread_local SizeTree tree;
    return tree;
  }
  SizeTree& tree_;
};

// A value that is not a collection nor a tagged value.
size_t LeafWireSize(const EdnValue& v) {
  switch (v.kind()) {
    case EdnKind::kNil:
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
    default:
      return 2;
  }
}

size_t SizeInto(const EdnValue& v, SizeTree* s) {
  const size_t at = s->size();
  s->push_back(0);
  size_t n = 0;
  switch (v.kind()) {
    case EdnKind::kList:
    case EdnKind::kVector:
    case EdnKind::kSet: {
      s->push_back(0);
      size_t body = 0;
      for (const EdnValue& item : v.items()) {
        body += LenFieldSize(1, SizeInto(item, s));
      }
      (*s)[at + 1] = body;
      n = LenFieldSize(v.kind() == EdnKind::kSet ? kSet : kList, body);
      break;
    }
    case EdnKind::kMap: {
      s->push_back(0);
      size_t body = 0;
      const auto& items = v.items();
      for (size_t i = 0; i + 1 < items.size(); i += 2) {
        const size_t entry_at = s->size();
        s->push_back(0);
        size_t entry = LenFieldSize(1, SizeInto(items[i], s));
        entry += LenFieldSize(2, SizeInto(items[i + 1], s));
        (*s)[entry_at] = entry;
        body += LenFieldSize(1, entry);
      }
      (*s)[at + 1] = body;
      n = LenFieldSize(kMap, body);
      break;
    }
    case EdnKind::kTagged: {
      std::string bytes;
      if (AsBytes(v, &bytes)) {
        n = LenFieldSize(kBytes, bytes.size());
      } else if (const std::string* uri = AsUri(v)) {
        n = LenFieldSize(kUri, uri->size());
      } else {
        s->push_back(0);
        size_t body = v.text().empty() ? 0 : LenFieldSize(1, v.text().size());
        body += LenFieldSize(2, SizeInto(v.tagged_value(), s));
        (*s)[at + 1] = body;
        n = LenFieldSize(kTagged, body);
      }
      break;
    }
    default:
      n = LeafWireSize(v);
  }
  (*s)[at] = n;
  return n;
}

// A length-delimited field's tag and length.
char* WriteLenHeader(uint32_t field, size_t len, char* p) {
  p = WriteVarint((field << 3) | kLen, p);
  return WriteVarint(len, p);
}

char* WriteBytesField(uint32_t field, std::string_view bytes, char* p) {
  p = WriteLenHeader(field, bytes.size(), p);
  std::memcpy(p, bytes.data(), bytes.size());
  return p + bytes.size();
}

// `v`'s Value fields, with the sizes SizeInto put in `*s` (advanced past
// `v`'s).
char* WriteTree(const EdnValue& v, const size_t*& s, char* p) {
  ++s;  // v's own size: its writer's length prefix took it
  switch (v.kind()) {
    case EdnKind::kNil:
      p = WriteVarint((kNil << 3) | kVarint, p);
      *p++ = 1;
      return p;
    case EdnKind::kBool:
      p = WriteVarint((kBoolean << 3) | kVarint, p);
      *p++ = v.as_bool() ? 1 : 0;
      return p;
    case EdnKind::kInt:
      p = WriteVarint((kLong << 3) | kVarint, p);
      return WriteVarint(static_cast<uint64_t>(v.as_int()), p);
    case EdnKind::kFloat:
      p = WriteVarint((kDouble << 3) | kFixed64, p);
      return WriteDouble(v.as_double(), p);
    case EdnKind::kChar:
      p = WriteVarint((kChar << 3) | kVarint, p);
      return WriteVarint(static_cast<uint32_t>(v.as_char()), p);
    case EdnKind::kInst:
      p = WriteVarint((kInstant << 3) | kVarint, p);
      return WriteVarint(static_cast<uint64_t>(v.as_inst_micros()), p);
    case EdnKind::kBigInt:
      return WriteBytesField(kBigint, v.text(), p);
    case EdnKind::kBigDec:
      return WriteBytesField(kBigdec, v.text(), p);
    case EdnKind::kString:
      return WriteBytesField(kString, v.text(), p);
    case EdnKind::kKeyword:
      return WriteBytesField(kKeyword, v.text(), p);
    case EdnKind::kSymbol:
      return WriteBytesField(kSymbol, v.text(), p);
    case EdnKind::kUuid:
      return WriteBytesField(kUuid, v.text(), p);
    case EdnKind::kList:
    case EdnKind::kVector:
    case EdnKind::kSet:
      p = WriteLenHeader(v.kind() == EdnKind::kSet ? kSet : kList, *s++, p);
      for (const EdnValue& item : v.items()) {
        p = WriteLenHeader(1, *s, p);
        p = WriteTree(item, s, p);
      }
      return p;
    case EdnKind::kMap: {
      p = WriteLenHeader(kMap, *s++, p);
      const auto& items = v.items();
      for (size_t i = 0; i + 1 < items.size(); i += 2) {
        p = WriteLenHeader(1, *s++, p);
        p = WriteLenHeader(1, *s, p);
        p = WriteTree(items[i], s, p);
        p = WriteLenHeader(2, *s, p);
        p = WriteTree(items[i + 1], s, p);
      }
      return p;
    }
    case EdnKind::kTagged: {
      std::string bytes;
      if (AsBytes(v, &bytes)) return WriteBytesField(kBytes, bytes, p);
      if (const std::string* uri = AsUri(v)) {
        return WriteBytesField(kUri, *uri, p);
      }
      p = WriteLenHeader(kTagged, *s++, p);
      if (!v.text().empty()) p = WriteBytesField(1, v.text(), p);
      p = WriteLenHeader(2, *s, p);
      return WriteTree(v.tagged_value(), s, p);
    }
  }
  p = WriteVarint((kNil << 3) | kVarint, p);
  *p++ = 1;
  return p;
}

// Appends `v` as a Value message: as field `field` (its tag and length
// first), or as a bare message body when `field` is 0.
void AppendValueField(uint32_t field, const EdnValue& v, std::string* out) {
  ScratchTree tree;
  const size_t n = SizeInto(v, tree.get());
  const size_t start = out->size();
  out->resize(start + (field == 0 ? n : LenFieldSize(field, n)));
  char* p = out->data() + start;
  if (field != 0) p = WriteLenHeader(field, n, p);
  const size_t* s = tree.get()->data();
  WriteTree(v, s, p);
}

}  // namespace

size_t ValueWireSize(const EdnValue& v) {
  SizeTree tree;
  return SizeInto(v, &tree);
}

void AppendValueWire(const EdnValue& v, std::string* out) {
  AppendValueField(0, v, out);
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
  rows_.resize(rows_used_);  // a shrink: nothing is written
  EncodeRow(values, &rows_);
  const size_t n = rows_.size() - rows_used_;
  rows_used_ = rows_.size();
  row_ends_.push_back(rows_used_);
  return n;
}

namespace {

// As the EDN vector it is (rare in rows: kept out of the sizer's inline
// path).
[[gnu::noinline]] size_t TupleWireSize(const storage::Value& v) {
  return ValueWireSize(query::ValueToEdn(v));
}

inline size_t StorageValueWireSize(const storage::Value& v) {
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
    case ValueType::kTuple:
      return TupleWireSize(v);
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
    case ValueType::kTuple: {
      std::string bytes;
      AppendValueWire(query::ValueToEdn(v), &bytes);
      std::memcpy(p, bytes.data(), bytes.size());
      return p + bytes.size();
    }
  }
  p = WriteVarint((kNil << 3) | kVarint, p);
  *p++ = 1;
  return p;
}

}  // namespace

namespace {

// The wire sizes of a row's cells, each computed once (it goes into the
// row's length and the cell's own header); rows are rarely wider than the
// inline array.
class CellSizes {
 public:
  CellSizes(const storage::Value* const* cells, size_t width) {
    if (width > kInline) {
      heap_ = std::make_unique<size_t[]>(width);
      sizes_ = heap_.get();
    }
    for (size_t i = 0; i < width; ++i) {
      sizes_[i] = StorageValueWireSize(*cells[i]);
      body_ += LenFieldSize(1, sizes_[i]);
    }
  }
  // The Row message's bytes, and the rows field's (with tag and length).
  size_t body() const { return body_; }
  size_t field() const { return LenFieldSize(kRows, body_); }

  char* Write(const storage::Value* const* cells, size_t width, char* p) const {
    p = WriteLenHeader(kRows, body_, p);
    for (size_t i = 0; i < width; ++i) {
      p = WriteLenHeader(1, sizes_[i], p);
      p = WriteStorageValueWire(*cells[i], p);
    }
    return p;
  }

 private:
  static constexpr size_t kInline = 16;
  size_t inline_[kInline];
  std::unique_ptr<size_t[]> heap_;
  size_t* sizes_ = inline_;
  size_t body_ = 0;
};

}  // namespace

char* QueryResponseEncoder::ExtendRows(size_t n) {
  // The string only grows (doubling, zero-filled then), and rows_used_
  // says how much of it holds rows: a row costs no resize of its own.
  if (rows_used_ + n > rows_.size()) {
    rows_.resize(std::max(rows_.size() * 2, rows_used_ + n + 256));
  }
  char* p = rows_.data() + rows_used_;
  rows_used_ += n;
  return p;
}

size_t QueryResponseEncoder::AddValueRow(const storage::Value* const* cells,
                                         size_t width) {
  const CellSizes sizes(cells, width);
  const size_t n = sizes.field();
  sizes.Write(cells, width, ExtendRows(n));
  row_ends_.push_back(rows_used_);
  return n;
}

void QueryResponseEncoder::EncodeValueRow(const storage::Value* const* cells,
                                          size_t width, std::string* out) {
  const CellSizes sizes(cells, width);
  const size_t start = out->size();
  out->resize(start + sizes.field());
  sizes.Write(cells, width, out->data() + start);
}

void QueryResponseEncoder::EncodeRow(const std::vector<EdnValue>& values,
                                     std::string* out) {
  ScratchTree tree;
  size_t body = 0;
  for (const EdnValue& v : values) {
    body += LenFieldSize(1, SizeInto(v, tree.get()));
  }
  const size_t start = out->size();
  out->resize(start + LenFieldSize(kRows, body));
  char* p = WriteLenHeader(kRows, body, out->data() + start);
  const size_t* s = tree.get()->data();
  for (const EdnValue& v : values) {
    p = WriteLenHeader(1, *s, p);
    p = WriteTree(v, s, p);
  }
}

std::string_view QueryResponseEncoder::row(int i) const {
  const size_t begin = i == 0 ? 0 : row_ends_[static_cast<size_t>(i) - 1];
  return rows_bytes().substr(begin, row_ends_[static_cast<size_t>(i)] - begin);
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
  grpc_slice slice = grpc_slice_malloc(head.size() + rows_used_ + tail.size());
  char* p = reinterpret_cast<char*>(GRPC_SLICE_START_PTR(slice));
  std::memcpy(p, head.data(), head.size());
  p += head.size();
  std::memcpy(p, rows_.data(), rows_used_);
  p += rows_used_;
  std::memcpy(p, tail.data(), tail.size());
  grpc::Slice owned(slice, grpc::Slice::STEAL_REF);
  *out = grpc::ByteBuffer(&owned, 1);
  columns_.clear();
  rows_used_ = 0;  // rows_ keeps its size, to be written over
  row_ends_.clear();
}

}  // namespace mentat::server
