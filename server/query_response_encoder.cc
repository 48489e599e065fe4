#include "query_response_encoder.h"

#include <grpc/slice.h>
#include <grpcpp/support/slice.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "mentat/query/pull.h"
#include "wire_encoding.h"
#include "wire_format.h"

namespace mentat::server {

using edn::EdnValue;
using namespace wire;  // NOLINT(google-build-using-namespace)

void QueryResponseEncoder::AddColumn(std::string_view name) {
  AppendBytesField(kColumns, name, &columns_);
}

size_t QueryResponseEncoder::AddRow(const std::vector<EdnValue>& values) {
  const EdnRowWire row(values);
  const size_t n = row.FieldSize(kRows);
  row.Write(kRows, ExtendRows(n));
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

// At least the bytes `v` takes as a Value field of a Row (its tag, its
// length and the Value's body) whenever that is under 128; 128 or more
// when it is not (a long text, a tuple).
inline size_t SmallCellBound(const storage::Value& v) {
  using storage::ValueType;
  switch (v.type()) {
    case ValueType::kRef:
    case ValueType::kLong:
    case ValueType::kInstant:
    case ValueType::kDouble:
      return 2 + 1 + 10;
    case ValueType::kBoolean:
      return 2 + 2;
    case ValueType::kTuple:
      return 128;
    default:
      // Text: a tag of at most two bytes (#uri's), a length and the bytes.
      return 2 + 2 + 1 + v.text().size();
  }
}

// WriteStorageValueWire for a value whose field SmallCellBound put under
// 128 bytes: every length is one byte, and an entity id is one 8-byte
// store. Needs 8 writable bytes past the value's end (kRowSlack).
inline char* WriteSmallStorageValueWire(const storage::Value& v, char* p) {
  using storage::ValueType;
  const ValueType type = v.type();
  if (type == ValueType::kRef || type == ValueType::kLong ||
      type == ValueType::kInstant) {
    const auto x = static_cast<uint64_t>(v.as_long());
    *p++ = static_cast<char>(
        ((type == ValueType::kInstant ? kInstant : kLong) << 3) | kVarint);
    if (x >= (uint64_t{1} << 56)) return WriteVarint(x, p);
    return WriteSmallVarint(x, VarintSize(x), p);
  }
  if (type == ValueType::kKeyword || type == ValueType::kString) {
    const std::string_view text = v.text();
    p[0] = static_cast<char>(
        ((type == ValueType::kKeyword ? kKeyword : kString) << 3) | kLen);
    p[1] = static_cast<char>(text.size());
    std::memcpy(p + 2, text.data(), text.size());
    return p + 2 + text.size();
  }
  return WriteStorageValueWire(v, p);
}

}  // namespace

char* QueryResponseEncoder::ExtendRows(size_t n) {
  char* p = ReserveRows(n);
  rows_used_ += n;
  return p;
}

char* QueryResponseEncoder::ReserveRows(size_t n) {
  // The buffer only grows (doubling, uninitialized), and rows_used_ says
  // how much of it holds rows: a row costs no resize of its own.
  if (rows_used_ + n + kRowSlack > rows_capacity_) [[unlikely]] {
    const size_t capacity =
        std::max(rows_capacity_ * 2, rows_used_ + n + kRowSlack + 256);
    auto grown = std::make_unique_for_overwrite<char[]>(capacity);
    if (rows_used_ > 0) std::memcpy(grown.get(), rows_.get(), rows_used_);
    rows_ = std::move(grown);
    rows_capacity_ = capacity;
  }
  return rows_.get() + rows_used_;
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
  // Most rows are short. A Row body under 128 bytes has every length in
  // one byte, so it is written in one pass, each length filled in after
  // its bytes: no sizing pass, no varint loops.
  size_t bound = 0;
  for (size_t i = 0; i < width; ++i) bound += SmallCellBound(*cells[i]);
  if (bound < 128) {
    char* const row = ReserveRows(2 + bound);
    char* p = row + 2;
    for (size_t i = 0; i < width; ++i) {
      char* const cell = p;
      p = WriteSmallStorageValueWire(*cells[i], cell + 2);
      cell[0] = static_cast<char>((1 << 3) | kLen);
      cell[1] = static_cast<char>(p - cell - 2);
    }
    row[0] = static_cast<char>((kRows << 3) | kLen);
    row[1] = static_cast<char>(p - row - 2);
    const auto n = static_cast<size_t>(p - row);
    rows_used_ += n;
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
  const EdnRowWire row(values);
  const size_t start = out->size();
  out->resize(start + row.FieldSize(kRows));
  row.Write(kRows, out->data() + start);
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