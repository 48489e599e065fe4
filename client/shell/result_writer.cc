#include "shell/result_writer.h"

#include <algorithm>

namespace mentat::cli {
namespace {

constexpr char kBold[] = "\033[1m";
constexpr char kDim[] = "\033[2m";
constexpr char kReset[] = "\033[0m";

size_t Width(std::string_view s) {
  size_t width = 0;
  for (char c : s) {
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++width;
  }
  return width;
}

// A table cell is one line: newlines and tabs are shown escaped.
std::string TableText(const Cell& cell) {
  std::string text = ToPlainText(cell);
  if (text.find_first_of("\n\r\t") == std::string::npos) return text;
  std::string out;
  for (char c : text) {
    if (c == '\n') {
      out.append("\\n");
    } else if (c == '\r') {
      out.append("\\r");
    } else if (c == '\t') {
      out.append("\\t");
    } else {
      out.push_back(c);
    }
  }
  return out;
}

void Pad(std::string* out, size_t n) { out->append(n, ' '); }

void AppendPretty(const Cell& cell, size_t indent, size_t width,
                  std::string* out) {
  std::string flat = ToEdn(cell);
  if (!cell.is_collection() || cell.items.empty() ||
      indent + flat.size() <= width) {
    out->append(flat);
    return;
  }
  using Kind = Cell::Kind;
  const char* open = cell.kind == Kind::kVector ? "["
                     : cell.kind == Kind::kList ? "("
                     : cell.kind == Kind::kSet  ? "#{"
                                                : "{";
  const char* close = cell.kind == Kind::kVector ? "]"
                      : cell.kind == Kind::kList ? ")"
                                                 : "}";
  out->append(open);
  const size_t inner = indent + std::string_view(open).size();
  if (cell.kind == Kind::kMap) {
    for (size_t i = 0; i + 1 < cell.items.size(); i += 2) {
      if (i > 0) {
        out->append("\n");
        Pad(out, inner);
      }
      const std::string key = ToEdn(cell.items[i]);
      out->append(key);
      out->push_back(' ');
      AppendPretty(cell.items[i + 1], inner + key.size() + 1, width, out);
    }
  } else {
    for (size_t i = 0; i < cell.items.size(); ++i) {
      if (i > 0) {
        out->append("\n");
        Pad(out, inner);
      }
      AppendPretty(cell.items[i], inner, width, out);
    }
  }
  out->append(close);
}

}  // namespace

bool ParseOutputFormat(std::string_view name, OutputFormat* out) {
  if (name == "table") {
    *out = OutputFormat::kTable;
  } else if (name == "edn") {
    *out = OutputFormat::kEdn;
  } else if (name == "json") {
    *out = OutputFormat::kJson;
  } else if (name == "csv") {
    *out = OutputFormat::kCsv;
  } else {
    return false;
  }
  return true;
}

std::string_view OutputFormatName(OutputFormat format) {
  switch (format) {
    case OutputFormat::kTable:
      return "table";
    case OutputFormat::kEdn:
      return "edn";
    case OutputFormat::kJson:
      return "json";
    case OutputFormat::kCsv:
      return "csv";
  }
  return "table";
}

std::string CsvField(std::string_view text) {
  const bool quote =
      text.find_first_of(",\"\r\n") != std::string_view::npos ||
      (!text.empty() && (text.front() == ' ' || text.back() == ' '));
  if (!quote) return std::string(text);
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

Cell RecordKey(std::string name, OutputFormat format) {
  return format == OutputFormat::kJson ? Cell::String(std::move(name))
                                       : Cell::Keyword(std::move(name));
}

std::string PrettyEdn(const Cell& cell, size_t width) {
  std::string out;
  AppendPretty(cell, 0, width, &out);
  return out;
}

ResultWriter::ResultWriter(OutputSink* sink, WriterStyle style,
                           ResultShape shape)
    : sink_(sink), style_(style), shape_(shape) {}

void ResultWriter::Begin(std::vector<std::string> columns) {
  columns_ = std::move(columns);
  switch (style_.format) {
    case OutputFormat::kCsv:
      if (style_.header && shape_ != ResultShape::kScalar) {
        WriteCsvRow(columns_);
      }
      break;
    case OutputFormat::kEdn:
    case OutputFormat::kJson:
      if (shape_ != ResultShape::kScalar) sink_->Write("[");
      break;
    case OutputFormat::kTable:
      break;
  }
}

std::string ResultWriter::JsonKey(size_t column) const {
  std::string name = column < columns_.size() ? columns_[column] : "";
  if (!name.empty() && name.front() == '?') name.erase(0, 1);
  return name;
}

void ResultWriter::AddRow(std::vector<Cell> row) {
  ++rows_;
  switch (style_.format) {
    case OutputFormat::kTable:
      pending_.push_back(std::move(row));
      if (pending_.size() >= kTableChunk) FlushTable(false);
      return;
    case OutputFormat::kCsv: {
      std::vector<std::string> fields;
      fields.reserve(row.size());
      for (const Cell& c : row) fields.push_back(ToPlainText(c));
      WriteCsvRow(fields);
      return;
    }
    case OutputFormat::kEdn: {
      std::string line;
      if (shape_ == ResultShape::kScalar) {
        if (!row.empty()) line = PrettyEdn(row[0]);
      } else {
        if (rows_ > 1)
          line.append(shape_ == ResultShape::kRelation ? "\n " : " ");
        if (shape_ == ResultShape::kRelation) {
          line.append(
              ToEdn(Cell::Collection(Cell::Kind::kVector, std::move(row))));
        } else {
          for (size_t i = 0; i < row.size(); ++i) {
            if (i > 0) line.push_back(' ');
            AppendEdn(row[i], &line);
          }
        }
      }
      sink_->Write(line);
      return;
    }
    case OutputFormat::kJson: {
      std::string line;
      if (shape_ == ResultShape::kScalar) {
        if (!row.empty()) AppendJson(row[0], &line);
      } else if (shape_ == ResultShape::kRelation) {
        line.append(rows_ > 1 ? ",\n {" : "{");
        for (size_t i = 0; i < row.size(); ++i) {
          if (i > 0) line.append(", ");
          AppendJsonString(JsonKey(i), &line);
          line.append(": ");
          AppendJson(row[i], &line);
        }
        line.push_back('}');
      } else {
        for (size_t i = 0; i < row.size(); ++i) {
          if (rows_ > 1 || i > 0) line.append(", ");
          AppendJson(row[i], &line);
        }
      }
      sink_->Write(line);
      return;
    }
  }
}

void ResultWriter::WriteCsvRow(const std::vector<std::string>& fields) {
  std::string line;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) line.push_back(',');
    line.append(CsvField(fields[i]));
  }
  line.push_back('\n');
  sink_->Write(line);
}

void ResultWriter::FlushTable(bool last) {
  // A scalar result is the value alone, pretty when it is a collection.
  if (shape_ == ResultShape::kScalar) {
    for (const auto& row : pending_) {
      if (!row.empty()) sink_->Write(PrettyEdn(row[0]) + "\n");
    }
    pending_.clear();
    if (last && rows_ == 0) sink_->Write("nil\n");
    return;
  }
  std::vector<std::vector<std::string>> texts;
  texts.reserve(pending_.size());
  for (const auto& row : pending_) {
    std::vector<std::string> line;
    line.reserve(row.size());
    for (const Cell& c : row) line.push_back(TableText(c));
    texts.push_back(std::move(line));
  }
  std::string out;
  if (style_.expanded) {
    FlushRecords(texts, &out);
    texts.clear();
  }
  std::vector<bool> numeric(columns_.size(), !pending_.empty());
  for (const auto& row : pending_) {
    for (size_t i = 0; i < row.size() && i < numeric.size(); ++i) {
      if (!row[i].is_numeric() && row[i].kind != Cell::Kind::kNil) {
        numeric[i] = false;
      }
    }
  }
  if (widths_.empty() && !style_.expanded) {
    widths_.resize(columns_.size());
    for (size_t i = 0; i < columns_.size(); ++i) {
      widths_[i] = style_.header ? Width(columns_[i]) : 0;
    }
    for (const auto& row : texts) {
      for (size_t i = 0; i < row.size() && i < widths_.size(); ++i) {
        widths_[i] = std::max(widths_[i], Width(row[i]));
      }
    }
  }
  if (style_.header && !header_written_ && !style_.expanded) {
    if (style_.color) out.append(kBold);
    for (size_t i = 0; i < columns_.size(); ++i) {
      out.append(i == 0 ? " " : " | ");
      const size_t pad = widths_[i] - Width(columns_[i]);
      if (numeric[i]) Pad(&out, pad);
      out.append(columns_[i]);
      if (!numeric[i] && i + 1 < columns_.size()) Pad(&out, pad);
    }
    if (style_.color) out.append(kReset);
    out.push_back('\n');
    for (size_t i = 0; i < columns_.size(); ++i) {
      if (i > 0) out.push_back('+');
      out.append(widths_[i] + 2, '-');
    }
    out.push_back('\n');
  }
  header_written_ = true;
  for (const auto& row : texts) {
    for (size_t i = 0; i < row.size() && i < widths_.size(); ++i) {
      out.append(i == 0 ? " " : " | ");
      const size_t w = Width(row[i]);
      const size_t pad = widths_[i] > w ? widths_[i] - w : 0;
      if (numeric[i]) {
        Pad(&out, pad);
        out.append(row[i]);
      } else {
        out.append(row[i]);
        if (i + 1 < row.size()) Pad(&out, pad);
      }
    }
    out.push_back('\n');
    if (out.size() > (1 << 16)) {
      sink_->Write(out);
      out.clear();
    }
  }
  pending_.clear();
  if (last && style_.row_count) {
    if (style_.color) out.append(kDim);
    out.append("(");
    out.append(std::to_string(rows_));
    out.append(rows_ == 1 ? " row)" : " rows)");
    if (style_.color) out.append(kReset);
    out.push_back('\n');
  }
  sink_->Write(out);
}

void ResultWriter::FlushRecords(
    const std::vector<std::vector<std::string>>& texts, std::string* out) {
  size_t name_width = 0;
  for (const std::string& c : columns_) {
    name_width = std::max(name_width, Width(c));
  }
  int64_t record = rows_ - static_cast<int64_t>(texts.size());
  for (const auto& row : texts) {
    ++record;
    if (style_.color) out->append(kDim);
    out->append("-[ RECORD " + std::to_string(record) + " ]");
    out->append(std::max<size_t>(4, name_width), '-');
    if (style_.color) out->append(kReset);
    out->push_back('\n');
    for (size_t i = 0; i < row.size() && i < columns_.size(); ++i) {
      if (style_.color) out->append(kBold);
      out->append(columns_[i]);
      if (style_.color) out->append(kReset);
      Pad(out, name_width - Width(columns_[i]));
      out->append(" | ");
      out->append(row[i]);
      out->push_back('\n');
    }
    if (out->size() > (1 << 16)) {
      sink_->Write(*out);
      out->clear();
    }
  }
}

void ResultWriter::End() {
  switch (style_.format) {
    case OutputFormat::kTable:
      FlushTable(true);
      return;
    case OutputFormat::kCsv:
      return;
    case OutputFormat::kEdn:
      if (shape_ == ResultShape::kScalar) {
        sink_->Write(rows_ == 0 ? "nil\n" : "\n");
      } else {
        sink_->Write("]\n");
      }
      return;
    case OutputFormat::kJson:
      if (shape_ == ResultShape::kScalar) {
        sink_->Write(rows_ == 0 ? "null\n" : "\n");
      } else {
        sink_->Write("]\n");
      }
      return;
  }
}

void WriteValue(OutputSink* sink, const WriterStyle& style, const Cell& value) {
  switch (style.format) {
    case OutputFormat::kTable:
    case OutputFormat::kEdn:
      sink->Write(PrettyEdn(value) + "\n");
      return;
    case OutputFormat::kJson:
      sink->Write(ToJson(value) + "\n");
      return;
    case OutputFormat::kCsv:
      sink->Write(CsvField(ToPlainText(value)) + "\n");
      return;
  }
}

}  // namespace mentat::cli
