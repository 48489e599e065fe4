#include "shell/csv_rows.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <set>

#include "mentat/base/closest_name.h"
#include "mentat/edn/edn_printer.h"
#include "mentat/edn/edn_value.h"

namespace mentat::cli {
namespace {

std::string Trim(std::string_view s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return "";
  const size_t e = s.find_last_not_of(" \t");
  return std::string(s.substr(b, e - b + 1));
}

std::string WithoutColon(std::string_view s) {
  std::string t = Trim(s);
  if (!t.empty() && t.front() == ':') t.erase(0, 1);
  return t;
}

// The EDN printer's string escapes (every control character included).
void AppendEdnString(std::string_view s, std::string* out) {
  edn::PrintEdnTo(edn::EdnValue::String(std::string(s)), out);
}

bool IsInteger(std::string_view s) {
  size_t i = (!s.empty() && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
  if (i == s.size()) return false;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
  }
  return true;
}

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' ||
         c == '/' || c == '*' || c == '+' || c == '!' || c == '?' || c == '<' ||
         c == '>' || c == '=';
}

// The cell as an EDN value of `type`, appended to *out; an error message
// (without the column) if it is not one.
absl::Status AppendTyped(const std::string& type, const std::string& cell,
                         std::string* out) {
  auto refuse = [&](std::string_view what) {
    return absl::InvalidArgumentError(std::string(what) + ": \"" + cell + "\"");
  };
  if (type == ":db.type/string") {
    AppendEdnString(cell, out);
    return absl::OkStatus();
  }
  const std::string v = Trim(cell);
  if (type == ":db.type/long") {
    if (!IsInteger(v)) return refuse("not an integer");
    errno = 0;
    (void)std::strtoll(v.c_str(), nullptr, 10);
    if (errno == ERANGE) return refuse("an integer beyond 64 bits");
    out->append(v);
    return absl::OkStatus();
  }
  if (type == ":db.type/bigint") {
    if (!IsInteger(v)) return refuse("not an integer");
    out->append(v).push_back('N');
    return absl::OkStatus();
  }
  if (type == ":db.type/double" || type == ":db.type/float" ||
      type == ":db.type/bigdec") {
    char* end = nullptr;
    const double d = std::strtod(v.c_str(), &end);
    if (v.empty() || end != v.c_str() + v.size() || !std::isfinite(d) ||
        v.find_first_of("xXnNiI") != std::string::npos) {
      return refuse("not a decimal number");
    }
    out->append(v);
    if (type == ":db.type/bigdec") {
      out->push_back('M');
    } else if (v.find_first_of(".eE") == std::string::npos) {
      out->append(".0");
    }
    return absl::OkStatus();
  }
  if (type == ":db.type/boolean") {
    std::string lower;
    for (char c : v) lower.push_back(static_cast<char>(std::tolower(c)));
    if (lower == "true" || lower == "t" || lower == "yes" || lower == "1") {
      out->append("true");
    } else if (lower == "false" || lower == "f" || lower == "no" ||
               lower == "0") {
      out->append("false");
    } else {
      return refuse("not a boolean (true/false, yes/no, 1/0)");
    }
    return absl::OkStatus();
  }
  if (type == ":db.type/instant" || type == ":db.type/uuid") {
    out->append(type == ":db.type/instant" ? "#inst " : "#uuid ");
    AppendEdnString(v, out);
    return absl::OkStatus();
  }
  if (type == ":db.type/keyword") {
    const std::string name = WithoutColon(v);
    if (name.empty()) return refuse("not a keyword");
    for (char c : name) {
      if (!IsNameChar(c)) return refuse("not a keyword");
    }
    out->push_back(':');
    out->append(name);
    return absl::OkStatus();
  }
  if (type == ":db.type/ref") {
    // An entity id, an ident or a lookup ref, as EDN.
    if (IsInteger(v) || (v.size() > 1 && v.front() == ':') ||
        (v.size() > 1 && v.front() == '[' && v.back() == ']')) {
      out->append(v);
      return absl::OkStatus();
    }
    return refuse(
        "not an entity id, an ident (:ns/name) or a lookup ref "
        "([:ns/unique value]); map the column as COLUMN=:ns/ref->:ns/unique "
        "to give the referenced entity's unique value");
  }
  return absl::InvalidArgumentError("values of type " + type +
                                    " cannot be read from CSV");
}

}  // namespace

absl::StatusOr<bool> CsvRecordReader::Feed(std::string_view line,
                                           uint32_t line_no) {
  if (!started_ && !in_quotes_) record_line_ = line_no;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (in_quotes_) {
      if (c != '"') {
        field_.push_back(c);  // line breaks included
      } else if (i + 1 < line.size() && line[i + 1] == '"') {
        field_.push_back('"');
        ++i;
      } else {
        in_quotes_ = false;
        after_quote_ = true;
      }
      continue;
    }
    if (c == '\n' || c == '\r') continue;  // the record's end
    started_ = true;
    if (c == ',') {
      fields_.push_back(std::move(field_));
      field_.clear();
      quoted_ = false;
      after_quote_ = false;
      continue;
    }
    if (after_quote_) {
      if (c == ' ' || c == '\t') continue;
      return absl::InvalidArgumentError("line " + std::to_string(line_no) +
                                        ", column " + std::to_string(i + 1) +
                                        ": text after a closing quote");
    }
    if (c == '"') {
      if (!Trim(field_).empty()) {
        return absl::InvalidArgumentError(
            "line " + std::to_string(line_no) + ", column " +
            std::to_string(i + 1) +
            ": a quote inside an unquoted field (quote the whole field and "
            "double the quotes in it)");
      }
      field_.clear();
      in_quotes_ = true;
      quoted_ = true;
      continue;
    }
    field_.push_back(c);
  }
  return !in_quotes_;
}

std::vector<std::string> CsvRecordReader::TakeRecord() {
  std::vector<std::string> out = std::move(fields_);
  if (started_ || !out.empty() || !field_.empty() || quoted_) {
    out.push_back(std::move(field_));
  }
  fields_.clear();
  field_.clear();
  quoted_ = false;
  after_quote_ = false;
  started_ = false;
  return out;
}

absl::StatusOr<std::pair<std::string, std::string>> ParseColumnMap(
    std::string_view option) {
  const size_t eq = option.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    return absl::InvalidArgumentError(
        "--map takes COLUMN=:ns/attr (or COLUMN=:ns/ref->:ns/unique, or "
        "COLUMN= to skip the column), not \"" +
        std::string(option) + "\"");
  }
  return std::make_pair(Trim(option.substr(0, eq)),
                        Trim(option.substr(eq + 1)));
}

absl::StatusOr<CsvMapping> CsvMapping::Make(
    const std::vector<std::string>& header,
    const std::vector<std::pair<std::string, std::string>>& map,
    const std::map<std::string, std::string>& types) {
  std::map<std::string, std::string> targets;
  for (const auto& [column, target] : map) targets[column] = target;
  std::set<std::string> used;
  auto unknown = [&](const std::string& attr, const std::string& where) {
    ClosestName closest(attr);
    for (const auto& [ident, type] : types) closest.Offer(ident);
    std::string message = where + " names :" + attr +
                          ", which is not an attribute of the database";
    if (!closest.best().empty()) {
      message += "; did you mean :" + std::string(closest.best()) + "?";
    }
    return absl::InvalidArgumentError(message);
  };
  CsvMapping mapping;
  std::set<std::string> attrs;
  for (size_t i = 0; i < header.size(); ++i) {
    Column col;
    col.name = Trim(header[i]);
    std::string target = col.name;
    std::string where =
        "column " + std::to_string(i + 1) + " of the header (" + col.name + ")";
    auto mapped = targets.find(col.name);
    if (mapped != targets.end()) {
      target = mapped->second;
      used.insert(col.name);
      where = "--map " + col.name + "=" + target;
      if (target.empty()) {
        mapping.columns_.push_back(std::move(col));
        continue;
      }
    }
    if (target.empty()) {
      return absl::InvalidArgumentError(
          "column " + std::to_string(i + 1) +
          " of the header has no name: name it, or map it with --map");
    }
    const size_t arrow = target.find("->");
    col.attr = WithoutColon(target.substr(0, arrow));
    if (arrow != std::string::npos)
      col.lookup = WithoutColon(target.substr(arrow + 2));
    if (col.attr == "db/id") {
      if (!col.lookup.empty()) {
        return absl::InvalidArgumentError(where + ": :db/id takes no lookup");
      }
      col.tempid = true;
    } else {
      auto type = types.find(col.attr);
      if (type == types.end()) return unknown(col.attr, where);
      col.type = type->second;
      if (!col.lookup.empty()) {
        if (col.type != ":db.type/ref") {
          return absl::InvalidArgumentError(
              where + ": :" + col.attr + " is of type " + col.type +
              ", not a ref: only a ref column takes ->:ns/unique");
        }
        auto lookup = types.find(col.lookup);
        if (lookup == types.end()) return unknown(col.lookup, where);
        col.type = lookup->second;
      }
    }
    if (!attrs.insert(col.attr).second) {
      return absl::InvalidArgumentError(where + ": :" + col.attr +
                                        " is named by two columns");
    }
    mapping.columns_.push_back(std::move(col));
  }
  for (const auto& [column, target] : map) {
    if (!used.contains(column)) {
      std::string names;
      for (const std::string& h : header) {
        names += names.empty() ? "" : ", ";
        names += Trim(h);
      }
      return absl::InvalidArgumentError("--map names column " + column +
                                        ", which the header does not have "
                                        "(its columns: " +
                                        names + ")");
    }
  }
  return mapping;
}

absl::StatusOr<bool> CsvMapping::AppendEntity(
    const std::vector<std::string>& row, std::string* out) const {
  if (row.size() != columns_.size()) {
    return absl::InvalidArgumentError(
        "the row has " + std::to_string(row.size()) + " fields, the header " +
        std::to_string(columns_.size()));
  }
  std::string entity = "{";
  bool any = false;
  for (size_t i = 0; i < row.size(); ++i) {
    const Column& col = columns_[i];
    if (col.attr.empty() || Trim(row[i]).empty()) continue;
    if (any) entity.push_back(' ');
    any = true;
    entity.push_back(':');
    entity.append(col.attr);
    entity.push_back(' ');
    absl::Status s;
    if (col.tempid) {
      AppendEdnString(Trim(row[i]), &entity);
    } else if (!col.lookup.empty()) {
      entity.append("[:").append(col.lookup).push_back(' ');
      s = AppendTyped(col.type, row[i], &entity);
      entity.push_back(']');
    } else {
      s = AppendTyped(col.type, row[i], &entity);
    }
    if (!s.ok()) {
      return absl::InvalidArgumentError(
          "column " + std::to_string(i + 1) + " (" + col.name +
          ", :" + col.attr + (col.lookup.empty() ? "" : "->:" + col.lookup) +
          ", " + col.type + "): " + std::string(s.message()));
    }
  }
  if (!any) return false;
  entity.push_back('}');
  out->append(entity);
  return true;
}

}  // namespace mentat::cli
