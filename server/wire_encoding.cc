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

namespace {

// The body of a Row of `values` (sizes into `*tree`, in WriteRow's order).
size_t SizeRow(const std::vector<EdnValue>& values, SizeTree* tree) {
  size_t body = 0;
  for (const EdnValue& v : values) body += LenFieldSize(1, SizeInto(v, tree));
  return body;
}

// The rows field of a Row of `values`, whose body SizeRow gave.
char* WriteRow(const std::vector<EdnValue>& values, size_t body,
               const SizeTree& tree, char* p) {
  p = WriteLenHeader(kRows, body, p);
  const size_t* s = tree.data();
  for (const EdnValue& v : values) {
    p = WriteLenHeader(1, *s, p);
    p = WriteTree(v, s, p);
  }
  return p;
}

}  // namespace

size_t QueryResponseEncoder::AddRow(const std::vector<EdnValue>& values) {
  ScratchTree tree;
  const size_t body = SizeRow(values, tree.get());
  const size_t n = LenFieldSize(kRows, body);
  WriteRow(values, body, *tree.get(), ExtendRows(n));
  ++rows_count_;
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

namespace {

// Bytes past a row that ExtendRows keeps writable: WriteSmallVarint stores
// 8 at once.
constexpr size_t kRowSlack = 8;

// `v` (below 2^56: at most 8 bytes) as a varint of `len` bytes, with one
// 8-byte store: its 7-bit groups spread over the bytes, the continuation
// bits on all but the last. About half the instructions of WriteVarint's
// byte loop for an entity id (6 to 8 bytes); needs 8 writable bytes.
char* WriteSmallVarint(uint64_t v, size_t len, char* p) {
  uint64_t spread = v & 0x7F;
  for (int i = 1; i < 8; ++i) {
    spread |= (v << i) & (uint64_t{0x7F} << (8 * i));
  }
  spread |= uint64_t{0x0080808080808080} >> (8 * (8 - len));
  std::memcpy(p, &spread, 8);  // little-endian, as the wire wants
  return p + len;
}

}  // namespace

char* QueryResponseEncoder::ExtendRows(size_t n) {
  // The buffer only grows (doubling, uninitialized), and rows_used_ says
  // how much of it holds rows: a row costs no resize of its own.
  if (rows_used_ + n + kRowSlack > rows_capacity_) {
    const size_t capacity =
        std::max(rows_capacity_ * 2, rows_used_ + n + kRowSlack + 256);
    auto grown = std::make_unique_for_overwrite<char[]>(capacity);
    if (rows_used_ > 0) std::memcpy(grown.get(), rows_.get(), rows_used_);
    rows_ = std::move(grown);
    rows_capacity_ = capacity;
  }
  char* p = rows_.get() + rows_used_;
  rows_used_ += n;
  return p;
}

size_t QueryResponseEncoder::AddValueRow(const storage::Value* const* cells,
                                         size_t width) {
  ++rows_count_;
  if (width == 1) {
    // The common one-column answer (`:find ?e`, a since or history list):
    // its three lengths straight from the cell's size, no CellSizes.
    const storage::Value& v = *cells[0];
    const storage::ValueType type = v.type();
    const bool integer = type == storage::ValueType::kRef ||
                         type == storage::ValueType::kLong ||
                         type == storage::ValueType::kInstant;
    const uint64_t id = integer ? static_cast<uint64_t>(v.as_long()) : 0;
    if (integer && id < (uint64_t{1} << 56)) {
      // An entity id (or a small long, an instant): every length is one
      // byte.
      const size_t len = VarintSize(id);
      const size_t n = 5 + len;
      char* p = ExtendRows(n);
      p[0] = static_cast<char>((kRows << 3) | kLen);
      p[1] = static_cast<char>(n - 2);  // the Row's length
      p[2] = static_cast<char>((1 << 3) | kLen);
      p[3] = static_cast<char>(n - 4);  // the Value's length
      p[4] = static_cast<char>(
          ((type == storage::ValueType::kInstant ? kInstant : kLong) << 3) |
          kVarint);
      WriteSmallVarint(id, len, p + 5);
      return n;
    }
    const size_t cell = StorageValueWireSize(v);
    const size_t body = LenFieldSize(1, cell);
    const size_t n = LenFieldSize(kRows, body);
    char* p = WriteLenHeader(kRows, body, ExtendRows(n));
    WriteStorageValueWire(v, WriteLenHeader(1, cell, p));
    return n;
  }
  const CellSizes sizes(cells, width);
  const size_t n = sizes.field();
  sizes.Write(cells, width, ExtendRows(n));
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
  const size_t body = SizeRow(values, tree.get());
  const size_t start = out->size();
  out->resize(start + LenFieldSize(kRows, body));
  WriteRow(values, body, *tree.get(), out->data() + start);
}

std::string_view QueryResponseEncoder::row(int i) const {
  // Each row is a rows field: its one-byte tag, its length, its body.
  const std::string_view all = rows_bytes();
  size_t begin = 0;
  for (int r = 0;; ++r) {
    size_t at = begin + 1;
    uint64_t len = 0;
    for (int shift = 0;; shift += 7) {
      const auto byte = static_cast<uint8_t>(all[at++]);
      len |= static_cast<uint64_t>(byte & 0x7F) << shift;
      if (byte < 0x80) break;
    }
    const size_t end = at + len;
    if (r == i) return all.substr(begin, end - begin);
    begin = end;
  }
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
  if (rows_used_ > 0) std::memcpy(p, rows_.get(), rows_used_);
  p += rows_used_;
  std::memcpy(p, tail.data(), tail.size());
  grpc::Slice owned(slice, grpc::Slice::STEAL_REF);
  *out = grpc::ByteBuffer(&owned, 1);
  columns_.clear();
  rows_used_ = 0;  // rows_ keeps its capacity, to be written over
  rows_count_ = 0;
}

}  // namespace mentat::server
