#ifndef MENTAT_EDN_EDN_VALUE_H_
#define MENTAT_EDN_EDN_VALUE_H_

#include <cassert>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mentat::edn {

// The kinds of EDN values (https://github.com/edn-format/edn), plus the two
// built-in tagged literals (#inst, #uuid), which are decoded into their own
// kinds, and kTagged for every other tag.
enum class EdnKind : uint8_t {
  kNil,
  kBool,
  kInt,     // fits int64
  kBigInt,  // "123N", or an integer literal too large for int64
  kFloat,   // double
  kBigDec,  // "1.5M"
  kChar,    // one Unicode code point
  kString,
  kKeyword,
  kSymbol,
  kList,
  kVector,
  kMap,
  kSet,
  kInst,  // #inst: microseconds since the Unix epoch, UTC
  kUuid,  // #uuid: 16 raw bytes
  kTagged,
};

// A short lower-case name for messages: "nil", "integer", "map", ...
std::string_view EdnKindName(EdnKind kind);

// One EDN value with the 1-based line and column where it started in the
// text it was read from (0, 0 for values built in code). Columns count bytes.
//
// Payloads by kind:
//   kBool                      as_bool()
//   kInt                       as_int()
//   kFloat                     as_double()
//   kChar                      as_char(): the code point
//   kInst                      as_inst_micros()
//   kString                    text(): the UTF-8 contents, unescaped
//   kKeyword, kSymbol          text(): "ns/name" or "name" (no ':');
//                              ns() and name() split it
//   kBigInt                    text(): decimal digits with optional '-',
//                              no 'N' ("-0" is normalised to "0")
//   kBigDec                    text(): the literal without '+' and 'M'
//                              ("1.50", "-2e10"); scale is kept, so 1.5M
//                              and 1.50M are different values
//   kUuid                      text(): 16 raw bytes
//   kList, kVector, kSet       items(): the elements in reading order
//   kMap                       items(): keys and values alternating
//                              (k0 v0 k1 v1 ...)
//   kTagged                    text(): the tag symbol ("my/tag");
//                              tagged_value(): the one tagged form
//
// Value semantics: copies are deep; moves are cheap. Equality (==) is
// structural and ignores positions; map and set equality ignore order and
// assume no duplicate keys/elements (the reader rejects duplicates). Floats
// compare with ==, except that NaN equals NaN.
//
// Values nest; copying, destroying, comparing and printing walk them
// recursively, which is why the reader bounds nesting (EdnReadOptions).
class EdnValue {
 public:
  EdnValue() : i_(0) {}  // nil

  static EdnValue Nil() { return EdnValue(); }
  static EdnValue Bool(bool b);
  static EdnValue Int(int64_t i);
  // `digits`: optional '-' and decimal digits without leading zeros.
  static EdnValue BigInt(std::string digits);
  static EdnValue Float(double d);
  // `text`: a decimal literal without the 'M' suffix ("1.5", "-2e3").
  static EdnValue BigDec(std::string text);
  // `code_point` must be a Unicode scalar value (not a surrogate).
  static EdnValue Char(uint32_t code_point);
  static EdnValue String(std::string utf8);
  // `text` is "ns/name" or "name", without the leading ':'.
  static EdnValue Keyword(std::string text);
  static EdnValue Keyword(std::string_view ns, std::string_view name);
  static EdnValue Symbol(std::string text);
  static EdnValue List(std::vector<EdnValue> items);
  static EdnValue Vector(std::vector<EdnValue> items);
  // `keys_and_values` alternates keys and values; its size must be even.
  static EdnValue Map(std::vector<EdnValue> keys_and_values);
  static EdnValue Set(std::vector<EdnValue> items);
  static EdnValue Inst(int64_t micros_since_epoch);
  // `bytes` must hold exactly 16 bytes.
  static EdnValue Uuid(std::string bytes);
  static EdnValue Tagged(std::string tag, EdnValue value);

  EdnKind kind() const { return kind_; }
  bool is_nil() const { return kind_ == EdnKind::kNil; }
  bool is_bool() const { return kind_ == EdnKind::kBool; }
  bool is_int() const { return kind_ == EdnKind::kInt; }
  bool is_bigint() const { return kind_ == EdnKind::kBigInt; }
  bool is_float() const { return kind_ == EdnKind::kFloat; }
  bool is_bigdec() const { return kind_ == EdnKind::kBigDec; }
  bool is_char() const { return kind_ == EdnKind::kChar; }
  bool is_string() const { return kind_ == EdnKind::kString; }
  bool is_keyword() const { return kind_ == EdnKind::kKeyword; }
  bool is_symbol() const { return kind_ == EdnKind::kSymbol; }
  bool is_list() const { return kind_ == EdnKind::kList; }
  bool is_vector() const { return kind_ == EdnKind::kVector; }
  bool is_map() const { return kind_ == EdnKind::kMap; }
  bool is_set() const { return kind_ == EdnKind::kSet; }
  bool is_inst() const { return kind_ == EdnKind::kInst; }
  bool is_uuid() const { return kind_ == EdnKind::kUuid; }
  bool is_tagged() const { return kind_ == EdnKind::kTagged; }
  // List, vector, map or set.
  bool is_collection() const {
    return kind_ >= EdnKind::kList && kind_ <= EdnKind::kSet;
  }
  // List or vector.
  bool is_sequential() const {
    return kind_ == EdnKind::kList || kind_ == EdnKind::kVector;
  }
  // True for a keyword equal to `text` ("ns/name", no ':').
  bool is_keyword(std::string_view text) const {
    return kind_ == EdnKind::kKeyword && text_ == text;
  }

  // Position in the source text, 1-based; 0 when built in code.
  uint32_t line() const { return line_; }
  uint32_t column() const { return column_; }
  void set_position(uint32_t line, uint32_t column) {
    line_ = line;
    column_ = column;
  }

  // Accessors; calling one on the wrong kind is a bug (asserts in debug).
  bool as_bool() const {
    assert(kind_ == EdnKind::kBool);
    return b_;
  }
  int64_t as_int() const {
    assert(kind_ == EdnKind::kInt);
    return i_;
  }
  double as_double() const {
    assert(kind_ == EdnKind::kFloat);
    return d_;
  }
  uint32_t as_char() const {
    assert(kind_ == EdnKind::kChar);
    return static_cast<uint32_t>(i_);
  }
  int64_t as_inst_micros() const {
    assert(kind_ == EdnKind::kInst);
    return i_;
  }
  // The text payload (see the table above); empty for other kinds.
  const std::string& text() const { return text_; }
  // Keyword or symbol namespace ("" if none) and name.
  std::string_view ns() const;
  std::string_view name() const;

  // Elements of a collection (maps: keys and values alternating), or the one
  // tagged form of kTagged; empty for scalars.
  const std::vector<EdnValue>& items() const { return items_; }
  std::vector<EdnValue>& mutable_items() { return items_; }
  // Number of elements; for a map, the number of entries.
  size_t size() const {
    return kind_ == EdnKind::kMap ? items_.size() / 2 : items_.size();
  }
  const EdnValue& tagged_value() const {
    assert(kind_ == EdnKind::kTagged && items_.size() == 1);
    return items_[0];
  }

  // For a map: the value under the keyword `keyword` ("ns/name", with or
  // without a leading ':'), or nullptr if absent or if this is not a map.
  // Linear in the size of the map.
  const EdnValue* Get(std::string_view keyword) const;

  bool operator==(const EdnValue& other) const;
  bool operator!=(const EdnValue& other) const { return !(*this == other); }

  // A hash consistent with ==.
  size_t Hash() const;

 private:
  friend class EdnParser;

  EdnValue(EdnKind kind, std::string text)
      : text_(std::move(text)), i_(0), kind_(kind) {}
  EdnValue(EdnKind kind, std::vector<EdnValue> items)
      : items_(std::move(items)), i_(0), kind_(kind) {}

  std::string text_;
  std::vector<EdnValue> items_;
  union {
    bool b_;
    int64_t i_;  // kInt, kChar, kInst
    double d_;
  };
  uint32_t line_ = 0;
  uint32_t column_ = 0;
  EdnKind kind_ = EdnKind::kNil;
};

// Hash functor for containers keyed by EdnValue.
struct EdnValueHash {
  size_t operator()(const EdnValue& v) const { return v.Hash(); }
};

}  // namespace mentat::edn

#endif  // MENTAT_EDN_EDN_VALUE_H_
