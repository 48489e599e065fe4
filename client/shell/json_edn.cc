#include "shell/json_edn.h"

#include <simdjson.h>

#include "shell/cell.h"
#include "shell/edn_literal.h"

namespace mentat::cli {
namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;

absl::Status Bad(const std::string& what) {
  return absl::InvalidArgumentError(what);
}

absl::Status Append(const element& e, std::string* out);

std::string_view View(const element& e) {
  std::string_view s = e.get_string().value_unsafe();
  return s;
}

absl::Status AppendTagged(std::string_view tag, const element& v,
                          std::string* out) {
  const element_type t = v.type();
  const bool is_string = t == element_type::STRING;
  if (tag == "#inst") {
    if (is_string) {
      absl::StatusOr<int64_t> micros = ParseInstant(View(v));
      if (!micros.ok()) return micros.status();
      AppendEdn(Cell::Instant(*micros), out);
    } else if (t == element_type::INT64) {
      AppendEdn(Cell::Instant(v.get_int64().value_unsafe()), out);
    } else {
      return Bad("#inst takes an RFC 3339 string or microseconds");
    }
    return absl::OkStatus();
  }
  if (tag == "#set" || tag == "#list") {
    if (t != element_type::ARRAY)
      return Bad(std::string(tag) + " takes an array");
    out->append(tag == "#set" ? "#{" : "(");
    bool first = true;
    simdjson::dom::array items;
    if (v.get_array().get(items) != simdjson::SUCCESS) {
      return Bad(std::string(tag) + " takes an array");
    }
    for (element item : items) {
      if (!first) out->push_back(' ');
      first = false;
      absl::Status s = Append(item, out);
      if (!s.ok()) return s;
    }
    out->append(tag == "#set" ? "}" : ")");
    return absl::OkStatus();
  }
  if (tag == "#ref") {
    if (t != element_type::INT64) return Bad("#ref takes an entity id");
    out->append(std::to_string(v.get_int64().value_unsafe()));
    return absl::OkStatus();
  }
  if (!is_string) return Bad(std::string(tag) + " takes a string");
  const std::string_view s = View(v);
  if (tag == "#uuid") {
    absl::StatusOr<std::string> bytes = ParseUuid(s);
    if (!bytes.ok()) return bytes.status();
    AppendEdn(Cell::Uuid(FormatUuid(*bytes)), out);
  } else if (tag == "#bigint") {
    AppendEdn(Cell::BigInt(std::string(s)), out);
  } else if (tag == "#bigdec") {
    AppendEdn(Cell::BigDec(std::string(s)), out);
  } else if (tag == "#keyword") {
    AppendEdn(Cell::Keyword(std::string(s)), out);
  } else if (tag == "#symbol") {
    AppendEdn(Cell::Symbol(std::string(s)), out);
  } else if (tag == "#string") {
    AppendEdn(Cell::String(std::string(s)), out);
  } else {
    return Bad("unknown tag " + std::string(tag));
  }
  return absl::OkStatus();
}

void AppendString(std::string_view s, std::string* out) {
  if (s.size() >= 2 && s[0] == ':' && s[1] == ':') {
    AppendEdn(Cell::String(std::string(s.substr(1))), out);
  } else if (s.size() >= 2 && s[0] == ':') {
    out->append(s);
  } else {
    AppendEdn(Cell::String(std::string(s)), out);
  }
}

bool IsTag(std::string_view key) {
  for (std::string_view tag :
       {"#inst", "#uuid", "#ref", "#bigint", "#bigdec", "#keyword", "#symbol",
        "#string", "#set", "#list"}) {
    if (key == tag) return true;
  }
  return false;
}

absl::Status Append(const element& e, std::string* out) {
  switch (e.type()) {
    case element_type::NULL_VALUE:
      out->append("nil");
      return absl::OkStatus();
    case element_type::BOOL:
      out->append(e.get_bool().value_unsafe() ? "true" : "false");
      return absl::OkStatus();
    case element_type::INT64:
      out->append(std::to_string(e.get_int64().value_unsafe()));
      return absl::OkStatus();
    case element_type::UINT64:
      out->append(std::to_string(e.get_uint64().value_unsafe()));
      out->push_back('N');
      return absl::OkStatus();
    case element_type::DOUBLE:
      AppendEdn(Cell::Double(e.get_double().value_unsafe()), out);
      return absl::OkStatus();
    case element_type::STRING:
      AppendString(View(e), out);
      return absl::OkStatus();
    case element_type::ARRAY: {
      out->push_back('[');
      bool first = true;
      simdjson::dom::array items;
      if (e.get_array().get(items) != simdjson::SUCCESS) {
        return Bad("bad JSON array");
      }
      for (element item : items) {
        if (!first) out->push_back(' ');
        first = false;
        absl::Status s = Append(item, out);
        if (!s.ok()) return s;
      }
      out->push_back(']');
      return absl::OkStatus();
    }
    case element_type::OBJECT: {
      simdjson::dom::object object;
      if (e.get_object().get(object) != simdjson::SUCCESS) {
        return Bad("bad JSON object");
      }
      if (object.size() == 1) {
        const auto field = *object.begin();
        if (IsTag(field.key)) return AppendTagged(field.key, field.value, out);
      }
      out->push_back('{');
      bool first = true;
      for (const auto field : object) {
        if (!first) out->append(", ");
        first = false;
        AppendString(field.key, out);
        out->push_back(' ');
        absl::Status s = Append(field.value, out);
        if (!s.ok()) return s;
      }
      out->push_back('}');
      return absl::OkStatus();
    }
  }
  return Bad("unsupported JSON value");
}

}  // namespace

struct JsonToEdn::Impl {
  simdjson::dom::parser parser;
};

JsonToEdn::JsonToEdn() : impl_(std::make_unique<Impl>()) {}
JsonToEdn::~JsonToEdn() = default;

absl::StatusOr<std::string> JsonToEdn::Convert(std::string_view json) {
  element root;
  const simdjson::error_code error =
      impl_->parser.parse(json.data(), json.size()).get(root);
  if (error != simdjson::SUCCESS) {
    return Bad(std::string("bad JSON: ") + simdjson::error_message(error));
  }
  std::string out;
  absl::Status s = Append(root, &out);
  if (!s.ok()) return s;
  return out;
}

}  // namespace mentat::cli
