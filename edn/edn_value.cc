#include "mentat/edn/edn_value.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <utility>

namespace mentat::edn {
namespace {

uint64_t Mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

uint64_t Combine(uint64_t seed, uint64_t h) {
  return Mix(seed ^ (h + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2)));
}

// Maps and sets up to this many entries compare by pairwise search; larger
// ones through a sorted index of hashes, to stay O(n log n).
constexpr size_t kSmallUnordered = 12;

// Equality of two maps (stride 2) or sets (stride 1) with the same number of
// entries, regardless of order. Assumes neither has duplicate keys.
bool UnorderedEqual(const std::vector<EdnValue>& a,
                    const std::vector<EdnValue>& b, size_t stride) {
  if (a.size() != b.size()) return false;
  const size_t n = a.size() / stride;
  if (n <= kSmallUnordered) {
    for (size_t i = 0; i < a.size(); i += stride) {
      bool found = false;
      for (size_t j = 0; j < b.size(); j += stride) {
        if (a[i] == b[j]) {
          if (stride == 2 && !(a[i + 1] == b[j + 1])) return false;
          found = true;
          break;
        }
      }
      if (!found) return false;
    }
    return true;
  }
  std::vector<std::pair<size_t, size_t>> index;  // (hash, position in b)
  index.reserve(n);
  for (size_t j = 0; j < b.size(); j += stride) {
    index.emplace_back(b[j].Hash(), j);
  }
  std::sort(index.begin(), index.end());
  for (size_t i = 0; i < a.size(); i += stride) {
    const size_t h = a[i].Hash();
    auto it = std::lower_bound(index.begin(), index.end(),
                               std::make_pair(h, size_t{0}));
    bool found = false;
    for (; it != index.end() && it->first == h; ++it) {
      const size_t j = it->second;
      if (a[i] == b[j]) {
        if (stride == 2 && !(a[i + 1] == b[j + 1])) return false;
        found = true;
        break;
      }
    }
    if (!found) return false;
  }
  return true;
}

}  // namespace

std::string_view EdnKindName(EdnKind kind) {
  switch (kind) {
    case EdnKind::kNil:
      return "nil";
    case EdnKind::kBool:
      return "boolean";
    case EdnKind::kInt:
      return "integer";
    case EdnKind::kBigInt:
      return "bigint";
    case EdnKind::kFloat:
      return "float";
    case EdnKind::kBigDec:
      return "bigdec";
    case EdnKind::kChar:
      return "character";
    case EdnKind::kString:
      return "string";
    case EdnKind::kKeyword:
      return "keyword";
    case EdnKind::kSymbol:
      return "symbol";
    case EdnKind::kList:
      return "list";
    case EdnKind::kVector:
      return "vector";
    case EdnKind::kMap:
      return "map";
    case EdnKind::kSet:
      return "set";
    case EdnKind::kInst:
      return "#inst";
    case EdnKind::kUuid:
      return "#uuid";
    case EdnKind::kTagged:
      return "tagged value";
  }
  return "unknown";
}

EdnValue EdnValue::Bool(bool b) {
  EdnValue v;
  v.kind_ = EdnKind::kBool;
  v.b_ = b;
  return v;
}

EdnValue EdnValue::Int(int64_t i) {
  EdnValue v;
  v.kind_ = EdnKind::kInt;
  v.i_ = i;
  return v;
}

EdnValue EdnValue::BigInt(std::string digits) {
  return EdnValue(EdnKind::kBigInt, std::move(digits));
}

EdnValue EdnValue::Float(double d) {
  EdnValue v;
  v.kind_ = EdnKind::kFloat;
  v.d_ = d;
  return v;
}

EdnValue EdnValue::BigDec(std::string text) {
  return EdnValue(EdnKind::kBigDec, std::move(text));
}

EdnValue EdnValue::Char(uint32_t code_point) {
  EdnValue v;
  v.kind_ = EdnKind::kChar;
  v.i_ = code_point;
  return v;
}

EdnValue EdnValue::String(std::string utf8) {
  return EdnValue(EdnKind::kString, std::move(utf8));
}

EdnValue EdnValue::Keyword(std::string text) {
  return EdnValue(EdnKind::kKeyword, std::move(text));
}

EdnValue EdnValue::Keyword(std::string_view ns, std::string_view name) {
  std::string text;
  if (!ns.empty()) {
    text.reserve(ns.size() + 1 + name.size());
    text.append(ns);
    text.push_back('/');
  }
  text.append(name);
  return EdnValue(EdnKind::kKeyword, std::move(text));
}

EdnValue EdnValue::Symbol(std::string text) {
  return EdnValue(EdnKind::kSymbol, std::move(text));
}

EdnValue EdnValue::List(std::vector<EdnValue> items) {
  return EdnValue(EdnKind::kList, std::move(items));
}

EdnValue EdnValue::Vector(std::vector<EdnValue> items) {
  return EdnValue(EdnKind::kVector, std::move(items));
}

EdnValue EdnValue::Map(std::vector<EdnValue> keys_and_values) {
  assert(keys_and_values.size() % 2 == 0);
  return EdnValue(EdnKind::kMap, std::move(keys_and_values));
}

EdnValue EdnValue::Set(std::vector<EdnValue> items) {
  return EdnValue(EdnKind::kSet, std::move(items));
}

EdnValue EdnValue::Inst(int64_t micros_since_epoch) {
  EdnValue v;
  v.kind_ = EdnKind::kInst;
  v.i_ = micros_since_epoch;
  return v;
}

EdnValue EdnValue::Uuid(std::string bytes) {
  assert(bytes.size() == 16);
  return EdnValue(EdnKind::kUuid, std::move(bytes));
}

EdnValue EdnValue::Tagged(std::string tag, EdnValue value) {
  EdnValue v(EdnKind::kTagged, std::move(tag));
  v.items_.push_back(std::move(value));
  return v;
}

std::string_view EdnValue::ns() const {
  if (kind_ != EdnKind::kKeyword && kind_ != EdnKind::kSymbol) return {};
  const size_t slash = text_.find('/');
  // "/" alone is the division symbol: no namespace.
  if (slash == std::string::npos || text_.size() == 1) return {};
  return std::string_view(text_).substr(0, slash);
}

std::string_view EdnValue::name() const {
  if (kind_ != EdnKind::kKeyword && kind_ != EdnKind::kSymbol) return {};
  const size_t slash = text_.find('/');
  if (slash == std::string::npos || text_.size() == 1) return text_;
  return std::string_view(text_).substr(slash + 1);
}

const EdnValue* EdnValue::Get(std::string_view keyword) const {
  if (kind_ != EdnKind::kMap) return nullptr;
  if (!keyword.empty() && keyword[0] == ':') keyword.remove_prefix(1);
  for (size_t i = 0; i + 1 < items_.size(); i += 2) {
    if (items_[i].is_keyword(keyword)) return &items_[i + 1];
  }
  return nullptr;
}

bool EdnValue::operator==(const EdnValue& other) const {
  if (kind_ != other.kind_) return false;
  switch (kind_) {
    case EdnKind::kNil:
      return true;
    case EdnKind::kBool:
      return b_ == other.b_;
    case EdnKind::kInt:
    case EdnKind::kChar:
    case EdnKind::kInst:
      return i_ == other.i_;
    case EdnKind::kFloat:
      return d_ == other.d_ || (std::isnan(d_) && std::isnan(other.d_));
    case EdnKind::kBigInt:
    case EdnKind::kBigDec:
    case EdnKind::kString:
    case EdnKind::kKeyword:
    case EdnKind::kSymbol:
    case EdnKind::kUuid:
      return text_ == other.text_;
    case EdnKind::kTagged:
      if (text_ != other.text_) return false;
      [[fallthrough]];
    case EdnKind::kList:
    case EdnKind::kVector:
      return items_ == other.items_;
    case EdnKind::kMap:
      return UnorderedEqual(items_, other.items_, 2);
    case EdnKind::kSet:
      return UnorderedEqual(items_, other.items_, 1);
  }
  return false;
}

size_t EdnValue::Hash() const {
  uint64_t h = Mix(static_cast<uint64_t>(kind_) + 1);
  switch (kind_) {
    case EdnKind::kNil:
      return h;
    case EdnKind::kBool:
      return Combine(h, b_ ? 1 : 0);
    case EdnKind::kInt:
    case EdnKind::kChar:
    case EdnKind::kInst:
      return Combine(h, static_cast<uint64_t>(i_));
    case EdnKind::kFloat: {
      double d = d_;
      if (d == 0) d = 0;  // -0.0 == 0.0
      uint64_t bits;
      if (std::isnan(d)) {
        bits = 0x7ff8000000000000ULL;
      } else {
        std::memcpy(&bits, &d, sizeof bits);
      }
      return Combine(h, bits);
    }
    case EdnKind::kBigInt:
    case EdnKind::kBigDec:
    case EdnKind::kString:
    case EdnKind::kKeyword:
    case EdnKind::kSymbol:
    case EdnKind::kUuid:
      return Combine(h, std::hash<std::string_view>()(text_));
    case EdnKind::kTagged:
      h = Combine(h, std::hash<std::string_view>()(text_));
      [[fallthrough]];
    case EdnKind::kList:
    case EdnKind::kVector:
      for (const EdnValue& item : items_) h = Combine(h, item.Hash());
      return h;
    case EdnKind::kMap: {
      // Order-independent: a sum of per-entry hashes.
      uint64_t sum = 0;
      for (size_t i = 0; i + 1 < items_.size(); i += 2) {
        sum += Combine(items_[i].Hash(), items_[i + 1].Hash());
      }
      return Combine(h, sum);
    }
    case EdnKind::kSet: {
      uint64_t sum = 0;
      for (const EdnValue& item : items_) sum += Mix(item.Hash());
      return Combine(h, sum);
    }
  }
  return h;
}

}  // namespace mentat::edn
