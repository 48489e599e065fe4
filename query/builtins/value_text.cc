#include "builtins/value_text.h"

#include <charconv>
#include <cmath>
#include <string_view>

#include "absl/strings/escaping.h"
#include "mentat/base/str_cat.h"
#include "mentat/edn/edn_inst.h"
#include "mentat/edn/edn_uuid.h"

namespace mentat::query::builtins {
namespace {

using storage::Value;
using storage::ValueType;

std::string Base64(std::string_view bytes) {
  return absl::Base64Escape(absl::string_view(bytes.data(), bytes.size()));
}

}  // namespace

void AppendJavaDouble(double d, std::string* out) {
  if (std::isnan(d)) {
    out->append("NaN");
    return;
  }
  if (std::isinf(d)) {
    out->append(d > 0 ? "Infinity" : "-Infinity");
    return;
  }
  if (d == 0) {
    out->append(std::signbit(d) ? "-0.0" : "0.0");
    return;
  }
  char buf[64];
  double mag = std::fabs(d);
  if (mag >= 1e-3 && mag < 1e7) {
    auto r = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::fixed);
    std::string_view s(buf, static_cast<size_t>(r.ptr - buf));
    out->append(s);
    if (s.find('.') == std::string_view::npos) out->append(".0");
    return;
  }
  // Java: "d.dddE[-]x" with at least one fraction digit.
  auto r =
      std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string_view s(buf, static_cast<size_t>(r.ptr - buf));
  size_t e = s.find('e');
  std::string_view mantissa = s.substr(0, e);
  std::string_view exponent = s.substr(e + 1);
  out->append(mantissa);
  if (mantissa.find('.') == std::string_view::npos) out->append(".0");
  out->push_back('E');
  if (exponent[0] == '-') out->push_back('-');
  exponent.remove_prefix(1);
  while (exponent.size() > 1 && exponent[0] == '0') exponent.remove_prefix(1);
  out->append(exponent);
}

void AppendStrForm(const Value& v, std::string* out) {
  switch (v.type()) {
    case ValueType::kString:
    // Clojure's str of a symbol is its name, of a java.net.URI its text.
    case ValueType::kSymbol:
    case ValueType::kUri:
      out->append(v.text());
      return;
    case ValueType::kKeyword:
      out->push_back(':');
      out->append(v.text());
      return;
    case ValueType::kLong:
    case ValueType::kRef:
      StrAppend(out, v.as_long());
      return;
    case ValueType::kDouble:
      AppendJavaDouble(v.as_double(), out);
      return;
    case ValueType::kBigInt:
    case ValueType::kBigDec:
      out->append(v.text());
      return;
    case ValueType::kBoolean:
      out->append(v.as_bool() ? "true" : "false");
      return;
    case ValueType::kInstant:
      out->append(edn::FormatInstant(v.as_long()));
      return;
    case ValueType::kUuid:
      if (v.text().size() == 16) {
        out->append(edn::FormatUuid(v.text()));
      }
      return;
    case ValueType::kBytes:
      StrAppend(out, "#bytes \"", Base64(v.text()), "\"");
      return;
  }
}

edn::EdnValue ValueToEdnValue(const Value& v) {
  switch (v.type()) {
    case ValueType::kLong:
    case ValueType::kRef:
      return edn::EdnValue::Int(v.as_long());
    case ValueType::kDouble:
      return edn::EdnValue::Float(v.as_double());
    case ValueType::kBoolean:
      return edn::EdnValue::Bool(v.as_bool());
    case ValueType::kString:
      return edn::EdnValue::String(v.text());
    case ValueType::kKeyword:
      return edn::EdnValue::Keyword(v.text());
    case ValueType::kInstant:
      return edn::EdnValue::Inst(v.as_long());
    case ValueType::kUuid:
      if (v.text().size() == 16) return edn::EdnValue::Uuid(v.text());
      return edn::EdnValue::Nil();
    case ValueType::kBigInt:
      return edn::EdnValue::BigInt(v.text());
    case ValueType::kBigDec:
      return edn::EdnValue::BigDec(v.text());
    case ValueType::kBytes:
      return edn::EdnValue::Tagged("bytes",
                                   edn::EdnValue::String(Base64(v.text())));
    case ValueType::kUri:
      return edn::EdnValue::Tagged("uri", edn::EdnValue::String(v.text()));
    case ValueType::kSymbol:
      return edn::EdnValue::Symbol(v.text());
  }
  return edn::EdnValue::Nil();
}

}  // namespace mentat::query::builtins
