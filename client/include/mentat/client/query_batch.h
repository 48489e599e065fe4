#ifndef MENTAT_CLIENT_QUERY_BATCH_H_
#define MENTAT_CLIENT_QUERY_BATCH_H_

// One QueryResponse read straight from its wire bytes: no message objects,
// no copies of strings. Client::QueryBatches hands these to its callback;
// anyone holding a serialized QueryResponse may decode one too.
//
// A decoded batch is a view: its values, strings and nested collections
// point into the bytes it was decoded from, which must outlive it (and
// every WireValue, WireRow or collection taken from it).
//
// Decode checks the whole message once (structure, lengths, varints,
// UTF-8 of string fields, nesting depth), so every accessor after a
// successful Decode is total and cheap. It reads what protobuf reads:
// fields in any order, unknown fields (and groups) skipped, the last of a
// repeated scalar field wins, a field of the wrong wire type is an unknown
// field. One difference: protobuf merges a message field that appears
// twice in one message (a Value's `map` twice, a MapEntry's `key` twice);
// mentatd never writes that, and Decode refuses it rather than keep only
// one of them.

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "mentat/v1/mentat.pb.h"

namespace mentat::client {

class QueryBatch;
class WireValueList;
class WireValueMap;
class WireTaggedValue;

// One v1::Value as it was on the wire. The accessors follow the generated
// message's: the field of the kind that is set, or its default (0, false,
// "", an empty collection) for any other kind. Strings are views into the
// decoded bytes. Cheap to copy (24 bytes).
class WireValue {
 public:
  using Kind = v1::Value::KindCase;

  WireValue() = default;

  Kind kind_case() const { return static_cast<Kind>(kind_); }

  bool nil() const { return Is(Kind::kNil) && number_ != 0; }
  int64_t long_value() const { return Int(Kind::kLongValue); }
  int64_t ref() const { return Int(Kind::kRef); }
  double double_value() const { return Is(Kind::kDoubleValue) ? double_ : 0.0; }
  std::string_view string_value() const { return Bytes(Kind::kStringValue); }
  std::string_view keyword() const { return Bytes(Kind::kKeyword); }
  bool boolean() const { return Is(Kind::kBoolean) && number_ != 0; }
  int64_t instant_micros() const { return Int(Kind::kInstantMicros); }
  std::string_view uuid() const { return Bytes(Kind::kUuid); }
  std::string_view bigint() const { return Bytes(Kind::kBigint); }
  std::string_view bigdec() const { return Bytes(Kind::kBigdec); }
  std::string_view bytes_value() const { return Bytes(Kind::kBytesValue); }
  std::string_view symbol() const { return Bytes(Kind::kSymbol); }
  uint32_t char_value() const {
    return static_cast<uint32_t>(Int(Kind::kCharValue));
  }
  std::string_view uri() const { return Bytes(Kind::kUri); }
  WireValueList list() const;
  WireValueList set() const;
  WireValueList tuple() const;
  WireValueMap map() const;
  WireTaggedValue tagged() const;

  // The value as a heap message (for callers that want one; a copy of
  // everything it holds).
  v1::Value ToMessage() const;

 private:
  friend class WireDecoder;
  bool Is(Kind k) const { return kind_ == static_cast<uint8_t>(k); }
  int64_t Int(Kind k) const { return Is(k) ? number_ : 0; }
  std::string_view Bytes(Kind k) const {
    return Is(k) ? std::string_view(data_, size_) : std::string_view();
  }

  // Strings and bytes; the body of a nested message (list, map, ...).
  const char* data_ = nullptr;
  uint32_t size_ = 0;
  uint8_t kind_ = 0;  // a v1::Value::KindCase
  union {
    int64_t number_ = 0;  // integers, booleans, nil, char_value
    double double_;
  };
};

// The values of a list, set or tuple, decoded one at a time as the
// iteration reaches them. A view like WireValue.
class WireValueList {
 public:
  class Iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = WireValue;
    using difference_type = std::ptrdiff_t;
    using pointer = const WireValue*;
    using reference = const WireValue&;

    Iterator() = default;
    const WireValue& operator*() const { return value_; }
    const WireValue* operator->() const { return &value_; }
    Iterator& operator++() {
      Advance();
      return *this;
    }
    bool operator==(const Iterator& o) const { return at_ == o.at_; }

   private:
    friend class WireValueList;
    Iterator(const char* at, const char* end) : next_(at), end_(end) {
      Advance();
    }
    // Decodes the next element into value_; at_ becomes null at the end.
    void Advance();

    const char* at_ = nullptr;  // the current element's start; null: end
    const char* next_ = nullptr;
    const char* end_ = nullptr;
    WireValue value_;
  };

  WireValueList() = default;
  Iterator begin() const {
    return Iterator(body_.data(), body_.data() + body_.size());
  }
  Iterator end() const { return Iterator(); }
  // Walks the elements: O(n).
  size_t size() const;
  bool empty() const { return begin() == end(); }

 private:
  friend class WireValue;
  explicit WireValueList(std::string_view body) : body_(body) {}
  std::string_view body_;  // a ValueList message
};

// A map's entries (v1::ValueMap), in wire order.
class WireValueMap {
 public:
  struct Entry {
    WireValue key;
    WireValue value;
    // Whether the entry holds a key, a value (protobuf's has_key(),
    // has_value(): a Value of no kind may be present).
    bool has_key = false;
    bool has_value = false;
  };
  class Iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = Entry;
    using difference_type = std::ptrdiff_t;
    using pointer = const Entry*;
    using reference = const Entry&;

    Iterator() = default;
    const Entry& operator*() const { return entry_; }
    const Entry* operator->() const { return &entry_; }
    Iterator& operator++() {
      Advance();
      return *this;
    }
    bool operator==(const Iterator& o) const { return at_ == o.at_; }

   private:
    friend class WireValueMap;
    Iterator(const char* at, const char* end) : next_(at), end_(end) {
      Advance();
    }
    void Advance();

    const char* at_ = nullptr;
    const char* next_ = nullptr;
    const char* end_ = nullptr;
    Entry entry_;
  };

  WireValueMap() = default;
  Iterator begin() const {
    return Iterator(body_.data(), body_.data() + body_.size());
  }
  Iterator end() const { return Iterator(); }
  size_t size() const;

 private:
  friend class WireValue;
  explicit WireValueMap(std::string_view body) : body_(body) {}
  std::string_view body_;  // a ValueMap message
};

// A tagged literal (v1::TaggedValue).
class WireTaggedValue {
 public:
  WireTaggedValue() = default;
  std::string_view tag() const { return tag_; }
  const WireValue& value() const { return value_; }
  bool has_value() const { return has_value_; }

 private:
  friend class WireValue;
  std::string_view tag_;
  WireValue value_;
  bool has_value_ = false;
};

// One row: its values, decoded.
class WireRow {
 public:
  WireRow(const WireValue* values, size_t size)
      : values_(values), size_(size) {}
  size_t size() const { return size_; }
  const WireValue& operator[](size_t i) const { return values_[i]; }
  const WireValue* begin() const { return values_; }
  const WireValue* end() const { return values_ + size_; }

 private:
  const WireValue* values_;
  size_t size_;
};

// A QueryResponse decoded from its wire bytes: the fields of the message,
// and its rows with their values decoded once into one flat array (no
// object per row or value). Nested collections stay bytes until read.
//
// Not thread-safe; reusable (Decode keeps the arrays' capacity).
class QueryBatch {
 public:
  QueryBatch() = default;
  QueryBatch(const QueryBatch&) = delete;
  QueryBatch& operator=(const QueryBatch&) = delete;

  // Decodes one serialized QueryResponse; `bytes` must outlive every view
  // taken from this batch. DATA_LOSS naming what is wrong and where (the
  // byte offset) for bytes that are not a QueryResponse protobuf could
  // parse (or one with a twice-set message field, see above); the batch
  // is then empty.
  [[nodiscard]] absl::Status Decode(std::string_view bytes);

  const std::vector<std::string_view>& columns() const { return columns_; }
  v1::FindKind find_kind() const { return find_kind_; }
  int64_t basis_tx() const { return basis_tx_; }
  std::string_view resume_token() const { return resume_token_; }
  int64_t rows_so_far() const { return rows_so_far_; }
  bool more() const { return more_; }

  int rows_size() const { return rows_; }
  WireRow row(int i) const {
    const uint32_t begin = i == 0 ? 0 : row_ends_.data()[i - 1];
    return WireRow(values_.data() + begin, row_ends_.data()[i] - begin);
  }

  class RowIterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = WireRow;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = WireRow;

    RowIterator() = default;
    WireRow operator*() const { return batch_->row(i_); }
    RowIterator& operator++() {
      ++i_;
      return *this;
    }
    bool operator==(const RowIterator& o) const { return i_ == o.i_; }

   private:
    friend class QueryBatch;
    RowIterator(const QueryBatch* batch, int i) : batch_(batch), i_(i) {}
    const QueryBatch* batch_ = nullptr;
    int i_ = 0;
  };
  struct Rows {
    const QueryBatch* batch;
    RowIterator begin() const { return RowIterator(batch, 0); }
    RowIterator end() const { return RowIterator(batch, batch->rows_size()); }
  };
  // for (WireRow row : batch.rows()) ...
  Rows rows() const { return Rows{this}; }

  // The batch as a heap message (a copy of everything in it).
  v1::QueryResponse ToMessage() const;

  // The bytes its arrays hold (kept across Decodes).
  size_t memory_bytes() const {
    return values_.capacity() * sizeof(WireValue) +
           row_ends_.capacity() * sizeof(uint32_t) +
           columns_.capacity() * sizeof(std::string_view);
  }

 private:
  friend class Client;  // drops the columns of a resumed stream's messages
  friend class WireDecoder;
  void Clear();
  void clear_columns() { columns_.clear(); }
  // The next value of the row being read, default-initialized (the
  // arrays grow by doubling and are never shrunk: a batch reused for
  // answers of one size allocates nothing).
  WireValue* AddValue() {
    if (values_used_ == values_room_) {
      values_.resize(values_room_ * 2 + 16);
      values_room_ = values_.size();
    }
    WireValue* v = values_.data() + values_used_++;
    *v = WireValue();
    return v;
  }
  void EndRow() {
    if (rows_ == rows_room_) {
      row_ends_.resize(rows_room_ * 2 + 16);
      rows_room_ = row_ends_.size();
    }
    row_ends_.data()[rows_++] = static_cast<uint32_t>(values_used_);
  }

  std::vector<std::string_view> columns_;
  v1::FindKind find_kind_ = v1::FIND_KIND_UNSPECIFIED;
  int64_t basis_tx_ = 0;
  std::string_view resume_token_;
  int64_t rows_so_far_ = 0;
  bool more_ = false;
  // Every row's values, back to back, in the first values_used_.
  std::vector<WireValue> values_;
  size_t values_used_ = 0;
  size_t values_room_ = 0;  // values_.size(), kept to spare a division
  // Per row, in the first rows_: the index past its last value.
  std::vector<uint32_t> row_ends_;
  int rows_ = 0;
  int rows_room_ = 0;
};

}  // namespace mentat::client

#endif  // MENTAT_CLIENT_QUERY_BATCH_H_
