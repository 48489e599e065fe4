#include "mentat/edn/json_edn.h"

#include <simdjson.h>

#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "mentat/base/excerpt.h"
#include "mentat/base/str_cat.h"
#include "mentat/edn/edn_inst.h"
#include "mentat/edn/edn_tokens.h"
#include "mentat/edn/edn_uuid.h"

namespace mentat::edn {

namespace {

inline std::string_view ToStd(absl::string_view s) {
  return std::string_view(s.data(), s.size());
}

// The digits of a bigint written as text ("-0012", "+5", "7N"), without
// the sign's '+', leading zeros or 'N' ("-0" is "0"), as EdnValue::BigInt
// takes them; nullopt if the text is not a whole number.
std::optional<std::string> BigIntDigits(std::string_view text) {
  if (!text.empty() && text.back() == 'N') text.remove_suffix(1);
  bool negative = false;
  if (!text.empty() && (text[0] == '-' || text[0] == '+')) {
    negative = text[0] == '-';
    text.remove_prefix(1);
  }
  if (text.empty()) return std::nullopt;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  while (text.size() > 1 && text[0] == '0') text.remove_prefix(1);
  if (text == "0") return std::string("0");
  return (negative ? "-" : "") + std::string(text);
}

class JsonReader {
 public:
  JsonReader(std::string_view where, int max_depth)
      : where_(where), max_depth_(max_depth) {}

  [[nodiscard]] absl::StatusOr<EdnValue> Read(simdjson::dom::element e,
                                              int depth) {
    if (depth > max_depth_) {
      return Error(StrCat("JSON nested deeper than ", max_depth_, " levels"));
    }
    switch (e.type()) {
      case simdjson::dom::element_type::NULL_VALUE:
        return EdnValue::Nil();
      case simdjson::dom::element_type::BOOL: {
        bool b = false;
        if (e.get_bool().get(b) != simdjson::SUCCESS)
          return Error("malformed value");
        return EdnValue::Bool(b);
      }
      case simdjson::dom::element_type::INT64: {
        int64_t i = 0;
        if (e.get_int64().get(i) != simdjson::SUCCESS)
          return Error("malformed value");
        return EdnValue::Int(i);
      }
      case simdjson::dom::element_type::UINT64: {
        // Beyond int64: a bigint, as the EDN reader does.
        uint64_t u = 0;
        if (e.get_uint64().get(u) != simdjson::SUCCESS)
          return Error("malformed value");
        return EdnValue::BigInt(std::to_string(u));
      }
      case simdjson::dom::element_type::DOUBLE: {
        double d = 0;
        if (e.get_double().get(d) != simdjson::SUCCESS)
          return Error("malformed value");
        return EdnValue::Float(d);
      }
      case simdjson::dom::element_type::STRING: {
        std::string_view s;
        if (e.get_string().get(s) != simdjson::SUCCESS)
          return Error("malformed value");
        return StringValue(s);
      }
      case simdjson::dom::element_type::ARRAY: {
        std::vector<EdnValue> items;
        simdjson::dom::array array;
        if (e.get_array().get(array) != simdjson::SUCCESS) {
          return Error("malformed array");
        }
        for (simdjson::dom::element item : array) {
          auto v = Read(item, depth + 1);
          if (!v.ok()) return v.status();
          items.push_back(*std::move(v));
        }
        return EdnValue::Vector(std::move(items));
      }
      case simdjson::dom::element_type::OBJECT: {
        simdjson::dom::object object;
        if (e.get_object().get(object) != simdjson::SUCCESS) {
          return Error("malformed object");
        }
        return Object(object, depth);
      }
    }
    return Error("unsupported JSON value");
  }

 private:
  [[nodiscard]] absl::Status Error(std::string_view message) const {
    return absl::InvalidArgumentError(StrCat(where_, " (JSON): ", message));
  }

  [[nodiscard]] absl::StatusOr<EdnValue> StringValue(std::string_view s) const {
    if (s.size() >= 2 && s[0] == ':' && s[1] == ':') {
      return EdnValue::String(std::string(s.substr(1)));
    }
    if (s.size() >= 2 && s[0] == ':') {
      if (absl::Status bad = CheckName(s.substr(1), true); !bad.ok()) {
        return Error(StrCat(ToStd(bad.message()),
                            " (write \"::...\" for a string that starts "
                            "with ':')"));
      }
      return EdnValue::Keyword(std::string(s.substr(1)));
    }
    return EdnValue::String(std::string(s));
  }

  // A keyword or symbol must be one the EDN reader would read back: its
  // rules (edn_tokens.h) and only the characters of EDN tokens.
  [[nodiscard]] static absl::Status CheckName(std::string_view text,
                                              bool keyword) {
    for (char c : text) {
      const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                      (c >= '0' && c <= '9') ||
                      static_cast<unsigned char>(c) >= 0x80 ||
                      std::string_view(".*+!-_?$%&=<>/:#").find(c) !=
                          std::string_view::npos;
      if (!ok) {
        return absl::InvalidArgumentError(StrCat(
            "invalid ", keyword ? "keyword :" : "symbol ", text,
            ": EDN names cannot contain '", std::string_view(&c, 1), "'"));
      }
    }
    return keyword ? CheckEdnKeywordName(text) : CheckEdnSymbolName(text);
  }

  [[nodiscard]] absl::StatusOr<EdnValue> Object(simdjson::dom::object obj,
                                                int depth) {
    if (obj.size() == 1) {
      auto field = *obj.begin();
      std::string_view key = field.key;
      if (key.starts_with("#")) return Tagged(key, field.value, depth);
    }
    std::vector<EdnValue> items;
    for (auto field : obj) {
      auto k = StringValue(field.key);
      if (!k.ok()) return k.status();
      items.push_back(*std::move(k));
      auto v = Read(field.value, depth + 1);
      if (!v.ok()) return v.status();
      items.push_back(*std::move(v));
    }
    absl::flat_hash_set<EdnValue, EdnValueHash> keys;
    for (size_t i = 0; i < items.size(); i += 2) {
      if (!keys.insert(items[i]).second) {
        return Error(StrCat("duplicate object key \"",
                            items[i].is_keyword() ? ":" : "",
                            Excerpt(items[i].text()), "\""));
      }
    }
    return EdnValue::Map(std::move(items));
  }

  [[nodiscard]] absl::StatusOr<std::string_view> TagString(
      std::string_view tag, simdjson::dom::element v) const {
    std::string_view s;
    if (v.get_string().get(s) != simdjson::SUCCESS) {
      return Error(StrCat("{\"", tag, "\": ...} takes a string"));
    }
    return s;
  }

  [[nodiscard]] absl::StatusOr<EdnValue> Tagged(std::string_view tag,
                                                simdjson::dom::element v,
                                                int depth) {
    if (tag == "#inst") {
      int64_t micros = 0;
      if (v.get_int64().get(micros) == simdjson::SUCCESS) {
        return EdnValue::Inst(micros);
      }
      auto s = TagString(tag, v);
      if (!s.ok()) return s.status();
      auto parsed = ParseInstant(*s);
      if (!parsed.ok()) {
        return Error(StrCat("#inst \"", Excerpt(*s),
                            "\": ", ToStd(parsed.status().message())));
      }
      return EdnValue::Inst(*parsed);
    }
    if (tag == "#uuid") {
      auto s = TagString(tag, v);
      if (!s.ok()) return s.status();
      auto parsed = ParseUuid(*s);
      if (!parsed.ok()) {
        return Error(StrCat("#uuid \"", Excerpt(*s),
                            "\": ", ToStd(parsed.status().message())));
      }
      return EdnValue::Uuid(*std::move(parsed));
    }
    if (tag == "#ref") {
      int64_t id = 0;
      if (v.get_int64().get(id) != simdjson::SUCCESS || id < 0) {
        return Error("{\"#ref\": N} takes a non-negative integer");
      }
      return EdnValue::Int(id);
    }
    if (tag == "#bigint" || tag == "#bigdec") {
      std::string text;
      int64_t i = 0;
      if (v.get_int64().get(i) == simdjson::SUCCESS) {
        text = std::to_string(i);
      } else {
        auto s = TagString(tag, v);
        if (!s.ok()) return s.status();
        text = std::string(*s);
      }
      if (tag == "#bigint") {
        std::optional<std::string> digits = BigIntDigits(text);
        if (!digits) {
          return Error(
              StrCat(tag, " \"", Excerpt(text), "\": not a whole number"));
        }
        return EdnValue::BigInt(*std::move(digits));
      }
      // Kept as written (the scale counts), so it must be an EDN decimal
      // literal ("01.5" is not).
      EdnValue dec;
      if (!IsEdnNumberToken(text) ||
          !ParseEdnNumber(StrCat(text, "M"), &dec).ok() || !dec.is_bigdec()) {
        return Error(
            StrCat(tag, " \"", Excerpt(text), "\": not an EDN decimal"));
      }
      return dec;
    }
    if (tag == "#keyword" || tag == "#symbol" || tag == "#string") {
      auto s = TagString(tag, v);
      if (!s.ok()) return s.status();
      std::string text(*s);
      if (tag == "#keyword") {
        if (text.starts_with(":")) text.erase(0, 1);
        if (text.empty()) return Error("empty #keyword");
        if (absl::Status bad = CheckName(text, true); !bad.ok()) {
          return Error(std::string(bad.message()));
        }
        return EdnValue::Keyword(std::move(text));
      }
      if (tag == "#symbol") {
        if (text.empty()) return Error("empty #symbol");
        if (absl::Status bad = CheckName(text, false); !bad.ok()) {
          return Error(std::string(bad.message()));
        }
        return EdnValue::Symbol(std::move(text));
      }
      return EdnValue::String(std::move(text));
    }
    if (tag == "#uri") {
      // URI syntax is checked where the value is used (a :db.type/uri
      // attribute, a query input), as for #uri in EDN text.
      auto s = TagString(tag, v);
      if (!s.ok()) return s.status();
      return EdnValue::Tagged("uri", EdnValue::String(std::string(*s)));
    }
    if (tag == "#set" || tag == "#list") {
      simdjson::dom::array arr;
      if (v.get_array().get(arr) != simdjson::SUCCESS) {
        return Error(StrCat("{\"", tag, "\": [...]} takes an array"));
      }
      std::vector<EdnValue> items;
      for (simdjson::dom::element item : arr) {
        auto x = Read(item, depth + 1);
        if (!x.ok()) return x.status();
        items.push_back(*std::move(x));
      }
      if (tag == "#list") return EdnValue::List(std::move(items));
      absl::flat_hash_set<EdnValue, EdnValueHash> seen;
      for (const EdnValue& item : items) {
        if (!seen.insert(item).second) return Error("duplicate #set element");
      }
      return EdnValue::Set(std::move(items));
    }
    return Error(StrCat("unknown tag \"", Excerpt(tag),
                        "\" (known: #inst #uuid #ref #bigint #bigdec "
                        "#keyword #symbol #string #uri #set #list)"));
  }

  std::string where_;
  int max_depth_;
};

}  // namespace

[[nodiscard]] absl::StatusOr<EdnValue> JsonToEdn(
    std::string_view json, std::string_view where,
    const JsonReadOptions& options) {
  // A parser per thread: simdjson reuses its buffers between documents.
  thread_local simdjson::dom::parser parser;
  simdjson::dom::element root;
  simdjson::padded_string padded(json.data(), json.size());
  auto error = parser.parse(padded).get(root);
  if (error != simdjson::SUCCESS) {
    return absl::InvalidArgumentError(
        StrCat(where, " (JSON): ", simdjson::error_message(error)));
  }
  JsonReader reader(where, options.max_depth);
  return reader.Read(root, 0);
}

}  // namespace mentat::edn
