// String and keyword functions: str subs count upper-case lower-case trim
// triml trimr name namespace keyword identity. Strings are UTF-8; subs and
// count work in code points (Clojure counts UTF-16 units, which differs
// only outside the Basic Multilingual Plane). Case mapping is ASCII only.

#include <string>
#include <string_view>

#include "builtins/builtin_table.h"
#include "builtins/value_compare.h"
#include "builtins/value_text.h"

namespace mentat::query::builtins {
namespace {

using storage::Value;
using storage::ValueType;

FunctionResult NoResult() { return std::optional<Value>(); }
FunctionResult Some(Value v) { return std::optional<Value>(std::move(v)); }

bool IsContinuationByte(char c) {
  return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
}

size_t CountCodePoints(std::string_view s) {
  size_t n = 0;
  for (char c : s) n += IsContinuationByte(c) ? 0 : 1;
  return n;
}

// The byte offset of code point `index` (<= the number of code points).
size_t ByteOffset(std::string_view s, size_t index) {
  size_t i = 0;
  while (i < s.size()) {
    if (!IsContinuationByte(s[i])) {
      if (index == 0) return i;
      --index;
    }
    ++i;
  }
  return s.size();
}

// Java's Character.isWhitespace for ASCII.
bool IsSpace(char c) {
  return c == ' ' || (c >= '\t' && c <= '\r') || (c >= '\x1C' && c <= '\x1F');
}

FunctionResult MapAscii(const Value& v, bool upper) {
  if (v.type() != ValueType::kString) return NoResult();
  std::string s = v.text();
  for (char& c : s) {
    if (upper && c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    if (!upper && c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return Some(Value::String(s));
}

FunctionResult TrimString(const Value& v, bool left, bool right) {
  if (v.type() != ValueType::kString) return NoResult();
  std::string_view s = v.text();
  while (left && !s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (right && !s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return Some(Value::String(s));
}

}  // namespace

FunctionResult Str(std::span<const Value> args) {
  std::string out;
  for (const Value& v : args) AppendStrForm(v, &out);
  return Some(Value::String(out));
}

FunctionResult Subs(std::span<const Value> args) {
  const Value& s = args[0];
  if (s.type() != ValueType::kString || !IsLongLike(args[1].type())) {
    return NoResult();
  }
  int64_t n = static_cast<int64_t>(CountCodePoints(s.text()));
  int64_t start = args[1].as_long();
  int64_t end = n;
  if (args.size() == 3) {
    if (!IsLongLike(args[2].type())) return NoResult();
    end = args[2].as_long();
  }
  if (start < 0 || end > n || start > end) return NoResult();
  size_t from = ByteOffset(s.text(), static_cast<size_t>(start));
  size_t to = ByteOffset(s.text(), static_cast<size_t>(end));
  return Some(
      Value::String(std::string_view(s.text()).substr(from, to - from)));
}

FunctionResult Count(std::span<const Value> args) {
  const Value& v = args[0];
  if (v.type() == ValueType::kString) {
    return Some(Value::Long(static_cast<int64_t>(CountCodePoints(v.text()))));
  }
  if (v.type() == ValueType::kBytes) {
    return Some(Value::Long(static_cast<int64_t>(v.text().size())));
  }
  return NoResult();
}

FunctionResult UpperCase(std::span<const Value> args) {
  return MapAscii(args[0], true);
}

FunctionResult LowerCase(std::span<const Value> args) {
  return MapAscii(args[0], false);
}

FunctionResult Trim(std::span<const Value> args) {
  return TrimString(args[0], true, true);
}

FunctionResult TrimLeft(std::span<const Value> args) {
  return TrimString(args[0], true, false);
}

FunctionResult TrimRight(std::span<const Value> args) {
  return TrimString(args[0], false, true);
}

FunctionResult Name(std::span<const Value> args) {
  const Value& v = args[0];
  if (v.type() == ValueType::kString) return Some(v);
  if (v.type() != ValueType::kKeyword && v.type() != ValueType::kSymbol) {
    return NoResult();
  }
  std::string_view k = v.text();
  size_t slash = k.find('/');
  if (slash == std::string_view::npos || k == "/")
    return Some(Value::String(k));
  return Some(Value::String(k.substr(slash + 1)));
}

FunctionResult Namespace(std::span<const Value> args) {
  const Value& v = args[0];
  if (v.type() != ValueType::kKeyword && v.type() != ValueType::kSymbol) {
    return NoResult();
  }
  std::string_view k = v.text();
  size_t slash = k.find('/');
  if (slash == std::string_view::npos || k == "/") return NoResult();
  return Some(Value::String(k.substr(0, slash)));
}

FunctionResult Keyword(std::span<const Value> args) {
  if (args.size() == 1) {
    const Value& v = args[0];
    if (v.type() == ValueType::kKeyword) return Some(v);
    if (v.type() != ValueType::kString || v.text().empty()) return NoResult();
    return Some(Value::Keyword(v.text()));
  }
  const Value& ns = args[0];
  const Value& name = args[1];
  if (ns.type() != ValueType::kString || name.type() != ValueType::kString ||
      name.text().empty()) {
    return NoResult();
  }
  if (ns.text().empty()) return Some(Value::Keyword(name.text()));
  std::string text = ns.text();
  text.push_back('/');
  text.append(name.text());
  return Some(Value::Keyword(text));
}

FunctionResult Identity(std::span<const Value> args) { return Some(args[0]); }

}  // namespace mentat::query::builtins
